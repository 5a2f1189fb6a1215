"""The model's input: the layout tables, observation_process and action_process, the step view
the reward reads, and the game's numbers the package keeps."""
import numpy as np
import pytest

from fake_obs import make_env_info, make_obs, make_score
from feature.back_to_the_realm import layout
from feature.back_to_the_realm.ppo_definition import ActData, action_process, observation_process
from feature.back_to_the_realm.unpack import step_view


# --- layout -----------------------------------------------------------------------------------

def test_layout_sizes_follow_the_tables():
    assert layout.MAP_SHAPE == (4, 51, 51)
    assert [c.name for c in layout.MAP_LAYOUT] == ["obstacle", "memory", "treasure", "end"]
    assert layout.STATE_DIM == 61 == sum(b.size for b in layout.STATE_LAYOUT)
    assert layout.NUM_ACTIONS == 16
    covered = np.zeros(layout.STATE_DIM, dtype=int)
    for s in layout.STATE_SLICES.values():
        covered[s] += 1
    assert (covered == 1).all()  # blocks tile the vector exactly once


def test_legal_mask_blocks_flashes_during_cooldown():
    assert layout.legal_mask([1, 1]).tolist() == [1.0] * 16
    assert layout.legal_mask([1, 0]).tolist() == [1.0] * 8 + [0.0] * 8


# --- observation_process ---------------------------------------------------------------------------

def test_observation_process_fills_every_block():
    rng = np.random.default_rng(0)
    maps = [rng.random((51, 51)).astype(np.float32) for _ in range(4)]
    obs = make_obs(pos=(6400.0, 32000.0), end_cells=128.0, chest_cells={3: 25.6, 15: 51.2, 1: 10.0},
                   buff_cells=None, flash_ready=False, obstacle=maps[0], memory=maps[1], treasure=maps[2],
                   end_map=maps[3])
    data = observation_process(obs)
    assert data.map.shape == layout.MAP_SHAPE and data.map.dtype == np.float32
    for i in range(4):
        np.testing.assert_array_equal(data.map[i], maps[i])
    s = {name: data.state[sl] for name, sl in layout.STATE_SLICES.items()}
    np.testing.assert_allclose(s["norm_pos"], [0.1, 0.5])
    present = [1.0 if i in (3, 15) else 0.0 for i in range(3, 16)]  # id 1 is not a tracked slot
    assert s["chest_present"].tolist() == present
    np.testing.assert_allclose(s["chest_distance"][0], 0.1)
    np.testing.assert_allclose(s["chest_distance"][-1], 0.2)
    np.testing.assert_allclose(s["chest_distance"][1:-1], 1.0)  # null objects read 1.0
    assert s["buff_present"].tolist() == [0.0] and s["buff_distance"].tolist() == [1.0]
    np.testing.assert_allclose(s["end_distance"], [0.5])
    directions = s["chest_direction"].reshape(-1, 2)  # fake_obs puts every present object East
    np.testing.assert_allclose(directions[0], [1.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(directions[-1], [1.0, 0.0], atol=1e-7)
    assert (directions[1:-1] == 0.0).all()  # absent chests point nowhere
    assert s["buff_direction"].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(s["end_direction"], [1.0, 0.0], atol=1e-7)
    assert data.legal.tolist() == [1.0] * 8 + [0.0] * 8


def test_direction_features_point_at_the_objects_in_the_simulator():
    """On the real simulator each live object's direction vector is within 22.5° (one 8-way
    sector) of the true bearing from the hero to it."""
    import math

    import realm

    env = realm.make_env(map_seed=0)
    obs = env.reset(usr_conf={"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 8,
                                      "max_step": 2000}})
    data = observation_process(obs)
    s = {name: data.state[sl] for name, sl in layout.STATE_SLICES.items()}
    hero = env.hero_position
    chests = {o.config_id: o.pos for o in env.env_info.frame_state.organs if o.sub_type == 1}
    for slot, vec in zip(layout.CHEST_SLOT_IDS, s["chest_direction"].reshape(-1, 2)):
        assert len(chests) == 8
        if slot not in chests:
            assert vec.tolist() == [0.0, 0.0]
            continue
        bearing = math.atan2(chests[slot].z - hero[1], chests[slot].x - hero[0])
        got = math.atan2(vec[1], vec[0])
        assert abs((got - bearing + math.pi) % (2 * math.pi) - math.pi) <= math.pi / 8 + 1e-6, slot
    assert s["chest_present"].sum() == 8


def test_action_process_returns_plain_int():
    assert action_process(ActData(action=np.int64(9), log_prob=-1.0)) == 9
    assert type(action_process(ActData(action=np.int64(9), log_prob=-1.0))) is int


# --- unpack ---------------------------------------------------------------------------------------

def test_step_view_reads_cells_counts_and_hero_state():
    memory = np.zeros((51, 51), np.float32)
    memory[25, 25] = 0.4
    obs = make_obs(end_cells=64.0, chest_cells={4: 12.0, 9: 30.0}, flash_ready=False, memory=memory)
    view = step_view(obs, make_score(chests=2, buff=1, flashes=1), make_env_info(pos=(1234.0, 5678.0), speed_up=True),
                     terminated=True)
    assert view.pos == (1234.0, 5678.0) and view.speed_up
    assert view.end_dist == pytest.approx(64.0)
    assert view.chest_dists == pytest.approx({4: 12.0, 9: 30.0})
    assert (view.chest_count, view.buff_count, view.flash_count) == (2, 1, 1)
    assert not view.flash_ready and view.memory == pytest.approx(0.4) and view.terminated
    no_end = step_view(make_obs(end_cells=None))
    assert no_end.end_dist is None and no_end.pos == pytest.approx((10000.0, 20000.0))


# --- the package's own constants and imports -------------------------------------------------------

def test_feature_constants_are_the_simulators():
    import realm.back_to_the_realm.constants as game
    from feature.back_to_the_realm import constants as mine
    from realm.back_to_the_realm.env import UNIT_VECTORS
    from realm.back_to_the_realm.maps import cell_of

    for name in ("CELL_WIDTH", "ORIGIN_X", "ORIGIN_Z", "WORLD_SIZE", "NUM_POSITIONS", "NUM_TREASURE_SLOTS", "STEP_LENGTH",
                 "BUFF_STEP_LENGTH", "FLASH_DISTANCE", "TALENT_TYPE_SUPER_FLASH", "NUM_ACTIONS", "DEFAULT_MAX_STEP",
                 "VIEW_SIZE", "VIEW_RADIUS", "GRID_DISTANCE_SCALE", "GRID_SIZE", "MEMORY_INCREMENT", "L2_BUCKETS",
                 "PATH_BUCKETS", "NULL_BUCKET", "NULL_GRID_DISTANCE", "ORGAN_CHEST", "ORGAN_BUFF", "MS_PER_STEP"):
        assert getattr(mine, name) == getattr(game, name), name
    assert mine.UNIT_VECTORS == UNIT_VECTORS
    for point in ((0.0, 0.0), (-2250.0, -5250.0), (31999.9, 12345.6), (-9999.0, 70000.0)):
        assert mine.cell_of(*point) == cell_of(*point)


def test_null_is_read_from_the_protocols_own_fields():
    from feature.back_to_the_realm.constants import is_null

    obs = make_obs(chest_cells={5: 10.0}, buff_cells=None)
    assert not is_null(obs.feature.treasure_pos[4]) and is_null(obs.feature.buff_pos)
    assert all(is_null(r) == r.is_null for r in obs.feature.treasure_pos)
