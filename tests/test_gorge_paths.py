"""gorge_chase's path features (feature/gorge_chase/paths.py) on drawn grids and on the real
simulator: the steps to the nearest chest from the hero and its neighbours, the part of the view
each move leads into (a dead-end pocket reads small and closed), what `global_info` adds from
extra_info, the [features_gorge] section, and the chest term that reads the path."""
from __future__ import annotations

import numpy as np
import pytest

from feature.gorge_chase.constants import DIRECTIONS, NUM_MOVES, VIEW_RADIUS
from feature.gorge_chase.curriculum import CurriculumConfig
from feature.gorge_chase.layout import STATE_SLICES
from feature.gorge_chase.observation import FeatureConfig, GorgeView, observation_process
from feature.gorge_chase.paths import UNKNOWN_STEPS, rooms_beyond, steps_from_targets
from feature.gorge_chase.reward import RewardConfig, reward_shaping, step_view
from realm import make_env
from tests.conftest import REPO_ROOT


def grid(rows: list[str]) -> np.ndarray:
    """'.' road, '#' wall; [row, column]."""
    return np.array([[ch != "#" for ch in row] for row in rows], dtype=bool)


def test_steps_to_the_nearest_target_go_round_walls_and_diagonally():
    walkable = grid([
        ".....",
        ".###.",
        "..x..",  # x: the centre (2, 2)
        ".###.",
        ".....",
    ])
    steps = steps_from_targets(walkable, [(2, 0)], limit=20)  # a target above the wall
    assert steps[1, 1] == 4  # (2,0) -> (1,0)|(3,0) -> (0,1)|(4,1) -> (1,2)|(3,2) -> (2,2): around the wall
    assert steps[1, 0] == 3 and steps[1, 2] == 3  # west and east neighbours are a step nearer
    assert steps[0, 1] == UNKNOWN_STEPS  # a wall: never reached
    nearer = steps_from_targets(walkable, [(2, 0), (4, 4)], limit=20)
    assert nearer[1, 1] == 3 and nearer[2, 2] == UNKNOWN_STEPS  # (4,4) -> (4,3) -> (3,2) -> (2,2); (3, 3) is a wall
    assert steps_from_targets(walkable, [(2, 0)], limit=2)[1, 1] == UNKNOWN_STEPS  # beyond the limit
    assert (steps_from_targets(walkable, [], limit=20) == UNKNOWN_STEPS).all()


def plain_bfs_steps(walkable: np.ndarray, targets, limit: int) -> np.ndarray:
    """The same 3×3 by a queue, for comparison."""
    from collections import deque

    size = walkable.shape[0]
    dist = {}
    queue = deque()
    for c, r in targets:
        if (r, c) not in dist:
            dist[(r, c)] = 0
            queue.append((r, c))
    while queue:
        r, c = queue.popleft()
        if dist[(r, c)] >= limit:
            continue
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                rr, cc = r + dr, c + dc
                if 0 <= rr < size and 0 <= cc < size and walkable[rr, cc] and (rr, cc) not in dist:
                    dist[(rr, cc)] = dist[(r, c)] + 1
                    queue.append((rr, cc))
    centre = size // 2
    out = np.full((3, 3), UNKNOWN_STEPS)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            out[dr + 1, dc + 1] = dist.get((centre + dr, centre + dc), UNKNOWN_STEPS)
    return out


def test_the_chest_search_agrees_with_a_plain_breadth_first_search_on_random_grids():
    rng = np.random.default_rng(0)
    for _ in range(200):
        walkable = rng.random((15, 15)) < rng.uniform(0.4, 0.9)
        targets = [(int(c), int(r)) for c, r in rng.integers(0, 15, size=(rng.integers(0, 4), 2))]
        targets = [(c, r) for c, r in targets if walkable[r, c]]
        limit = int(rng.integers(3, 20))
        expected = plain_bfs_steps(walkable, targets, limit)
        got = steps_from_targets(walkable, targets, limit)
        np.testing.assert_array_equal(got, expected)


def test_a_dead_end_pocket_reads_small_and_closed_and_a_corridor_runs_off_the_view():
    view = grid([
        "#######",
        "#######",
        "##...##",  # a pocket north of the hero
        "......#",  # the hero at (3, 3): a corridor west to the edge, the pocket above
        "#######",
        "#######",
        "#######",
    ])
    view[3, 4:] = False  # east of the hero: wall
    label, sizes, flags = rooms_beyond(view, [(2, 3), (3, 2)], monsters=[(0, 3)])
    west, north = label[3, 2], label[2, 3]
    assert west >= 0 and north >= 0
    # with the hero's cell taken away, the pocket still touches the corridor diagonally at (2, 2)
    assert west == north and sizes[west] == 6 and flags[west].tolist() == [True, True]
    view[2, 2] = False  # close that diagonal: the pocket stands alone
    label, sizes, flags = rooms_beyond(view, [(2, 3), (3, 2)], monsters=[(0, 3)])
    west, north = label[3, 2], label[2, 3]
    assert west != north
    assert sizes[north] == 2 and flags[north].tolist() == [False, False]  # small, closed, no monster
    assert sizes[west] == 3 and flags[west].tolist() == [True, True]  # runs off the view, the monster in it


def _env_and_view(global_info: bool, seed: int = 1):
    env = make_env(protocol="gorge", seed=seed)
    conf = CurriculumConfig(map=[2], max_step=200).usr_conf()
    view = GorgeView(global_info=global_info)
    memory, _ = view.reset(env.reset(conf, seed=seed))
    return env, view, memory


def test_global_info_reads_every_chest_and_the_monsters_true_cells_and_the_view_alone_does_not():
    env, _, local = _env_and_view(False)
    _, _, full = _env_and_view(True)
    live = {(t[1], t[2]) for t in env.treasures if t[3]}
    assert set(full.live_chests()) == live and len(live) == 10
    assert set(local.live_chests()) == {c for c in live if local.in_view(*c)}
    monster = env.monsters[0]
    assert full.monsters[0].known and (full.monsters[0].last_x, full.monsters[0].last_z) == (monster.x, monster.z)
    # the features see it too: the state differs only where what is known differs
    a, b = observation_process(local).state, observation_process(full).state
    assert not np.array_equal(a[STATE_SLICES["items"]], b[STATE_SLICES["items"]])
    # an env_obs without extra_info (or without its frame_state) falls back to the view
    bare = {k: v for k, v in env._env_obs(False, False, "").items() if k != "extra_info"}
    view = GorgeView(global_info=True)
    memory, _ = view.reset(bare)
    assert set(memory.live_chests()) == {c for c in live if memory.in_view(*c)}


def test_the_chest_paths_block_points_a_move_toward_the_nearest_chest_on_the_simulator():
    env, view, memory = _env_and_view(True)
    for _ in range(60):
        steps = memory.chest_steps()
        block = observation_process(memory).state[STATE_SLICES["chest_paths"]]
        if steps[1, 1] != UNKNOWN_STEPS:
            assert block[0] == 1.0 and block[1] == pytest.approx(steps[1, 1] / 64.0)
            best = int(np.argmax(block[2:]))
            assert block[2 + best] == 1.0  # some open move gains a step (8-connected, unseen counts as road)
            dx, dz = DIRECTIONS[best]
            before = int(steps[1, 1])
            _, env_obs = env.step(best)
            if env_obs["terminated"] or env_obs["truncated"]:
                return
            prev = step_view(memory)
            memory, _ = view.step(env_obs)
            after = step_view(memory)
            if after.chest_count == prev.chest_count and after.hero == (prev.hero[0] + dx, prev.hero[1] + dz):
                assert after.chest_steps is not None and after.chest_steps <= before  # a wall seen may add steps
                _, terms = reward_shaping(prev, after, best, RewardConfig())
                assert terms["chest_progress"] == pytest.approx(RewardConfig().chest_progress * (before - after.chest_steps))
        else:
            _, env_obs = env.step(next(d for d in range(NUM_MOVES) if memory.move_cell(d) is not None))
            if env_obs["terminated"] or env_obs["truncated"]:
                return
            memory, _ = view.step(env_obs)
    assert memory.chest_count >= 1  # walking the block's gains reaches a chest within 60 steps


def test_the_rooms_block_marks_the_hero_s_own_cell_away_and_each_move_s_part():
    _, _, memory = _env_and_view(True)
    label, sizes, _ = memory.rooms()
    block = observation_process(memory).state[STATE_SLICES["rooms"]].reshape(2, NUM_MOVES, 3)
    assert label[VIEW_RADIUS, VIEW_RADIUS] == -1
    for d in range(NUM_MOVES):
        cell = memory.move_cell(d)
        if cell is None:
            assert block[0, d].tolist() == [0.0, 0.0, 0.0]
        else:
            assert block[0, d, 0] == pytest.approx(min(sizes[label[cell[1], cell[0]]] / 100.0, 1.0))


def test_features_gorge_is_validated_and_named_in_the_error(tmp_path):
    import subprocess

    with pytest.raises(ValueError, match="global_info"):
        FeatureConfig(global_info="yes").validate()
    out = subprocess.run(["./train.sh", "--config", "conf/gorge_chase.toml", "--set", f'app.run_dir="{tmp_path}"',
                          "--set", 'features_gorge.global_info="yes"'], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "features_gorge.global_info: expected true or false" in out.stderr and "Traceback" not in out.stderr
    assert not any(tmp_path.iterdir())
