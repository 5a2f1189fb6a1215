"""Pictures: sizes, North-up orientation, markers where the world puts them."""
import numpy as np

from realm import make_env
from realm.back_to_the_realm.render import COLORS, render_episode, render_local_view, render_map, world_to_pixel


def pixel(image, x, z, scale):
    col, row = world_to_pixel(x, z, scale)
    return tuple(int(v) for v in image[int(row), int(col)])


def test_map_is_north_up_with_markers_at_their_positions(official_map):
    scale = 4
    image = render_map(official_map, scale=scale, start=2, end=1, chests={3: True, 4: False}, buff_live=True)
    assert image.shape == (512, 512, 3) and image.dtype == np.uint8
    # Row 0 of the picture is the grid's top row zc = 127.
    top = np.where(official_map.passable[127], 1, 0)
    drawn_top = np.array([pixel(image, xc * 500 - 2000, 127 * 500 - 5000, scale) == COLORS["passable"] for xc in range(128)])
    assert (drawn_top == top.astype(bool)).all()
    assert pixel(image, *official_map.positions[2], scale) == COLORS["start"]
    assert pixel(image, *official_map.positions[1], scale) == COLORS["end"]
    assert pixel(image, *official_map.positions[3], scale) == COLORS["chest"]
    assert pixel(image, *official_map.positions[4], scale) != COLORS["chest"]  # taken: outline only
    assert pixel(image, *official_map.positions[0], scale) == COLORS["buff"]


def test_flash_jump_is_drawn_as_a_jump_not_as_a_walk(official_map):
    a, b = (5500.0, 1500.0), (5500.0, 9500.0)
    walked = render_map(official_map, scale=4, buff_live=None, trail=[a, b])
    jumped = render_map(official_map, scale=4, buff_live=None, trail=[a, b], flashes=[(a, b)])
    mid = (5500.0, 5500.0)
    assert pixel(walked, *mid, 4) == COLORS["trail"]
    assert pixel(jumped, *mid, 4) == COLORS["flash"]


def test_episode_and_local_view_pictures():
    env = make_env(map_seed=1)
    obs = env.reset({"diy": {"treasure_num": 4}}, seed=0)
    image = render_episode(env.map, env.episode, env.env_info, scale=2)
    assert image.shape == (256, 256, 3)
    view = render_local_view(obs.feature, action=10, scale=6)
    assert view.shape == (51 * 6, 51 * 6, 3) and view.dtype == np.uint8
    # The hero's cell sits in the middle; a flash to the North (action 10) draws magenta above it.
    centre = 25 * 6 + 3
    assert tuple(view[centre - 6 * 10, centre]) == COLORS["flash"]
    assert tuple(view[centre + 6 * 10, centre]) != COLORS["flash"]
