"""feature.bitgrid's searches against plain per-cell ones: `first_index` on drawn grids that
overlap, `path_levels` on random maps, and back_to_the_realm_v2's goal fields (its memory's
path lengths to the end over the explored map) on the real simulator's episodes."""
from __future__ import annotations

from collections import deque

import numpy as np

from feature.bitgrid import bit_grid, path_levels


def plain_bfs(walkable: np.ndarray, source: tuple[int, int]) -> np.ndarray:
    """4-connected path lengths [row, column] from `source` (column, row), which counts at 0
    open or not; -1 where nothing reaches."""
    dist = np.full(walkable.shape, -1, dtype=np.int32)
    c, r = source
    dist[r, c] = 0
    queue = deque([(r, c)])
    while queue:
        r, c = queue.popleft()
        for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
            nr, nc = r + dr, c + dc
            if 0 <= nr < walkable.shape[0] and 0 <= nc < walkable.shape[1] and walkable[nr, nc] and dist[nr, nc] < 0:
                dist[nr, nc] = dist[r, c] + 1
                queue.append((nr, nc))
    return dist


def test_first_index_is_the_first_grid_holding_each_cell_however_many_and_overlapping():
    rng = np.random.default_rng(0)
    grid = bit_grid(9, 13)
    for count in (1, 2, 3, 7, 64, 300):
        masks = rng.random((count, 9, 13)) < 0.02 + 2.0 / count  # overlapping, some cells in none
        got = grid.first_index([grid.of_mask(m) for m in masks], missing=-7)
        held = masks.any(axis=0)
        want = np.where(held, masks.argmax(axis=0), -7)
        assert got.dtype == np.int32 and (got == want).all(), count
    assert (grid.first_index([], missing=5) == 5).all()


def test_path_levels_give_the_plain_search_s_path_lengths_on_random_maps():
    rng = np.random.default_rng(1)
    grid = bit_grid(40, 57)
    for k in range(20):
        walkable = rng.random((40, 57)) < 0.5 + 0.02 * k
        source = (int(rng.integers(57)), int(rng.integers(40)))
        levels = path_levels(grid.of_mask(walkable), grid.bit(*source), grid.stride)
        assert (grid.first_index(levels, -1) == plain_bfs(walkable, source)).all(), k
        capped = grid.first_index(path_levels(grid.of_mask(walkable), grid.bit(*source), grid.stride, limit=6), -1)
        want = plain_bfs(walkable, source)
        assert (capped == np.where(want <= 6, want, -1)).all(), k


def test_v2_goal_fields_are_the_plain_search_over_the_explored_map_on_the_simulator():
    from feature.back_to_the_realm_v2.memory import GoalField
    from feature.back_to_the_realm_v2.observation import V2View
    from realm.back_to_the_realm_v2 import default_usr_conf, make_env_v2

    env = make_env_v2(map_seed=0, seed=3)
    view = V2View()
    memory, _ = view.reset(*env.reset(usr_conf=default_usr_conf()))
    rng = np.random.default_rng(3)
    checked = 0
    for step in range(120):
        if step % 20 == 0:
            assert memory.end_field is not None
            field = GoalField(memory.end_field.goal, memory.free, memory.version, memory.step_no)  # kept ones may be stale
            free = memory.free > 0
            want = plain_bfs(free, (field.goal[0] + 1, field.goal[1] + 1))
            assert (field.dist == want).all() and field.dist.dtype == np.int16
            assert (want >= 0).sum() > 1000  # the explored map's unseen cells count as open
            checked += 1
        _, obs, terminated, truncated, extra_info = env.step(int(rng.integers(8)))
        if terminated or truncated:
            break
        memory, _ = view.step(obs, extra_info)
    assert checked >= 3
