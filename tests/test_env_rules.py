"""RealmEnv against the SPEC's rules (§3–§7), on the official map 1 with scripted heroes."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import realm
from realm.back_to_the_realm.constants import (
    BUFF_DURATION_STEPS,
    BUFF_RESPAWN_STEPS,
    CELL_WIDTH,
    FLASH_COOLDOWN_STEPS,
    FLASH_DISTANCE,
    MS_PER_STEP,
    ORIGIN_X,
    ORIGIN_Z,
)
from realm.back_to_the_realm.env import UNIT_VECTORS, EpisodeOverError, RealmEnv
from realm.back_to_the_realm.maps import cell_center, cell_of
from realm.back_to_the_realm.protocol import NULL_RELATIVE_POSITION, as_grid

REPO_ROOT = Path(__file__).resolve().parents[1]
NO_CHESTS = {"diy": {"treasure_random": 0, "treasure_id": []}}
EAST, NORTH_EAST, NORTH, WEST = 0, 1, 2, 4
FLASH = 8  # + direction


def conf(**diy):
    return {"diy": {"treasure_random": 0, "treasure_id": [], **diy}}


@pytest.fixture
def env(official_map):
    return RealmEnv(official_map)


def hero_pos(env) -> tuple[float, float]:
    """The exact position (the wire's Position is rounded to int32 world units)."""
    x, z = env.hero_position
    pos = env.env_info.frame_state.heroes[0].pos
    assert (pos.x, pos.z) == (round(x), round(z)) and type(pos.x) is int
    return x, z


def cell_edges(xc, zc):
    """World (left, right, bottom, top) of a cell."""
    left, bottom = xc * CELL_WIDTH + ORIGIN_X, zc * CELL_WIDTH + ORIGIN_Z
    return left, left + CELL_WIDTH, bottom, bottom + CELL_WIDTH


def far_from_positions(m, xc, zc, cells=6):
    return all(max(abs(xc - px), abs(zc - pz)) > cells for px, pz in m.position_cells.tolist())


def free(m, cells):
    return all(m.is_passable_cell(xc, zc) for xc, zc in cells)


def heading(env, target_id) -> int:
    """The direction whose whole step stays clear of walls and lands nearest (BFS) to the target."""
    x, z = hero_pos(env)
    length = 1000 if env.env_info.frame_state.heroes[0].speed_up else 700
    field = env.map.distance_fields[target_id]
    tx, tz = env.map.positions[target_id]
    best = None
    for d, (ux, uz) in enumerate(UNIT_VECTORS):
        cells = [cell_of(x + ux * length * k / 12, z + uz * length * k / 12) for k in range(13)]
        if free(env.map, cells):
            key = (field[cells[-1][1], cells[-1][0]], math.hypot(tx - x - ux * length, tz - z - uz * length))
            best = min(best or (key, d), (key, d))
    return best[1]


def drive(env, target_id, max_steps=1000):
    """Steps toward `target_id` until the episode ends; returns the last step's result."""
    for _ in range(max_steps):
        result = env.step(heading(env, target_id))
        if result[3] or result[4]:
            return result
    raise AssertionError("scripted hero did not finish")


# ---- reset, protocol, frame numbers --------------------------------------------------------


def test_reset_observation_and_env_info(env, official_map):
    obs = env.reset({"diy": {"treasure_random": 0, "treasure_id": [4, 9]}})
    x, z = official_map.positions[2]
    assert hero_pos(env) == (x, z) and env.frame_no == 1
    feature = obs.feature
    assert (feature.norm_pos.x, feature.norm_pos.z) == (x / 64000, z / 64000)
    assert (feature.grid_pos.x, feature.grid_pos.z) == (13, 15)  # axis-swapped: x = zc, z = xc
    assert obs.legal_act == [1, 1]
    assert [tp.is_null for tp in feature.treasure_pos] == [i + 1 not in (4, 9) for i in range(15)]
    assert feature.end_pos.direction == 2  # the end lies north-east of the start
    assert feature.end_pos.grid_distance == 186 / 256 and feature.end_pos.path_distance == 5
    assert feature.buff_pos.grid_distance == 84 / 256
    assert not any(feature.memory_map)
    info = env.env_info
    assert info.game_info.step_no == 0 and info.game_info.total_score == 0
    organs = info.frame_state.organs
    assert [(o.sub_type, o.config_id, o.status, o.cooldown) for o in organs] == [(1, 4, 1, 0), (1, 9, 1, 0), (2, 0, 1, 0)]
    assert (organs[0].pos.x, organs[0].pos.z) == tuple(official_map.positions[4])
    talent = info.frame_state.heroes[0].talent
    assert (talent.talent_type, talent.status, talent.cooldown) == (1, 1, 0)


def test_frame_no_grows_by_three(env):
    env.reset(NO_CHESTS)
    for k in range(1, 5):
        frame_no, obs, score, terminated, truncated, info = env.step(EAST)
        assert frame_no == 1 + 3 * k and info.game_info.step_no == k
        assert info is env.env_info


def test_relative_positions_follow_the_distance_fields(env, official_map):
    env.reset(conf(treasure_id=[5]))
    for _ in range(10):
        _, obs, *_ = env.step(heading(env, 1))
        xc, zc = obs.feature.grid_pos.z, obs.feature.grid_pos.x
        for rel, pid in ((obs.feature.end_pos, 1), (obs.feature.treasure_pos[4], 5), (obs.feature.start_pos, 2)):
            assert rel.grid_distance == official_map.distance_fields[pid][zc, xc] / 256
        assert obs.feature.treasure_pos[3] is NULL_RELATIVE_POSITION


@pytest.mark.parametrize("act", [16, -1, 1.5, "3", True, None, np.float32(2)])
def test_invalid_actions_raise(env, act):
    env.reset(NO_CHESTS)
    with pytest.raises(ValueError, match="0..15"):
        env.step(act)


def test_numpy_integer_actions_are_accepted(env):
    env.reset(NO_CHESTS)
    assert env.step(np.int64(EAST))[0] == 4
    assert env.step(np.array(EAST))[0] == 7


def test_stepping_outside_an_episode_raises(official_map):
    env = RealmEnv(official_map)
    with pytest.raises(EpisodeOverError, match="reset"):
        env.step(0)
    env.reset(conf(max_step=1))
    assert env.step(0)[4]
    with pytest.raises(EpisodeOverError, match="ended"):
        env.step(0)
    env.reset(NO_CHESTS)
    assert env.step(0)[0] == 4


# ---- scoring and the end of an episode -----------------------------------------------------


def test_scripted_finish_scores_the_formula(env):
    env.reset(NO_CHESTS)
    frame_no, obs, score, terminated, truncated, info = drive(env, 1)
    steps = info.game_info.step_no
    assert terminated and not truncated and frame_no == 1 + 3 * steps
    assert score.score == 0 and score.total_score == pytest.approx(150 + 0.2 * (2000 - steps))
    assert info.game_info.total_score == score.total_score

    env.reset(conf(max_step=steps + 5))  # the same path with a short step limit
    *_, score, terminated, _, info = drive(env, 1)
    assert terminated and info.game_info.step_no == steps and score.total_score == 151.0

    env.reset(conf(max_step=steps))  # reaching the end on the last step still counts
    *_, score, terminated, _, _ = drive(env, 1)
    assert terminated and score.total_score == 150.0

    env.reset(conf(max_step=steps - 1))
    *_, score, terminated, truncated, info = drive(env, 1)
    assert truncated and not terminated and score.total_score == 0 and info.game_info.step_no == steps - 1


def test_finish_with_a_chest(env):
    env.reset(conf(treasure_id=[13]))
    for _ in range(200):
        *_, score, _, _, _ = env.step(heading(env, 13))
        if score.treasure_count:
            break
    assert score.score == 100 and score.total_score == 100
    *_, score, terminated, _, info = drive(env, 1)
    steps = info.game_info.step_no
    assert terminated and score.treasure_count == 1
    assert score.total_score == pytest.approx(150 + 0.2 * (2000 - steps) + 100)
    assert info.frame_state.organs[0].status == 0


def test_timeout_truncates_with_zero_total(env, official_map):
    env.reset(conf(max_step=3, treasure_id=[4]))
    cx, cz = official_map.positions[4]
    env._place_hero(cx - 1200, cz)
    *_, score, terminated, truncated, _ = env.step(EAST)
    assert score.treasure_count == 1 and score.total_score == 100 and not (terminated or truncated)
    env.step(WEST)
    *_, score, terminated, truncated, info = env.step(WEST)
    assert truncated and not terminated
    assert score.total_score == 0 and info.game_info.total_score == 0 and score.score == 100


# ---- pick-up radius ------------------------------------------------------------------------


def lane_below(m, pid, gap):
    """Start (x, z) for an eastward step that ends right below position `pid` at `gap` units."""
    cx, cz = m.positions[pid]
    start = (cx - 700, cz - gap)
    cells = {cell_of(start[0] + k * 50, start[1]) for k in range(15)}
    return start if free(m, cells) else None


@pytest.mark.parametrize("gap, taken", [(1000, True), (1001, False)])
def test_chest_pick_up_radius_is_1000(env, official_map, gap, taken):
    pid = next(p for p in range(3, 16) if lane_below(official_map, p, 1001))
    obs = env.reset(conf(treasure_id=[pid]))
    env._place_hero(*lane_below(official_map, pid, gap))
    _, obs, score, *_ = env.step(EAST)
    x, z = hero_pos(env)
    cx, cz = official_map.positions[pid]
    assert math.hypot(x - cx, z - cz) == pytest.approx(gap)
    assert score.treasure_count == int(taken)
    assert obs.feature.treasure_pos[pid - 1].is_null == taken
    window_row, window_col = 25 + (cell_of(cx, cz)[1] - obs.feature.grid_pos.x), 25 + (cell_of(cx, cz)[0] - obs.feature.grid_pos.z)
    assert as_grid(obs.feature.treasure_map)[window_row, window_col] == (0 if taken else 1)


@pytest.mark.parametrize("gap, reached", [(1000, True), (1001, False)])
def test_end_is_reached_within_the_pick_up_radius(official_map, gap, reached):
    end = next(p for p in range(3, 16) if lane_below(official_map, p, 1001))
    env = RealmEnv(official_map)
    env.reset(conf(end=end))
    env._place_hero(*lane_below(official_map, end, gap))
    *_, terminated, truncated, _ = env.step(EAST)
    assert terminated == reached and not truncated


def test_fast_pass_collects_between_sub_steps(env, official_map):
    """Only the middle of the step comes within reach; the step's end is out of reach again."""
    pid = next(p for p in range(3, 16) if lane_below(official_map, p, 990))
    env.reset(conf(treasure_id=[pid]))
    cx, cz = official_map.positions[pid]
    env._place_hero(cx - 700 / 3 - 100, cz - 990)
    *_, score, _, _, _ = env.step(EAST)
    x, z = hero_pos(env)
    assert math.hypot(x - cx, z - cz) > 1000 and score.treasure_count == 1


# ---- movement --------------------------------------------------------------------------------


def find_cell(m, predicate):
    for zc in range(1, 127):
        for xc in range(1, 127):
            if m.passable[zc, xc] and far_from_positions(m, xc, zc) and predicate(xc, zc):
                return xc, zc
    raise AssertionError("no such cell on the map")


def wall_north(m):
    """A cell with a wall along its north side and free cells east of it."""
    return find_cell(
        m,
        lambda xc, zc: free(m, [(xc + 1, zc), (xc + 2, zc), (xc - 1, zc)])
        and not any(m.is_passable_cell(xc + k, zc + 1) for k in (0, 1, 2)),
    )


def wall_east(m):
    return find_cell(
        m,
        lambda xc, zc: free(m, [(xc, zc + 1), (xc, zc + 2), (xc, zc - 1)])
        and not any(m.is_passable_cell(xc + 1, zc + k) for k in (0, 1, 2)),
    )


def open_spot(m, margin=4):
    return find_cell(m, lambda xc, zc: m.passable[zc - margin : zc + margin + 1, xc - margin : xc + margin + 1].all())


def test_moves_are_700_in_the_open(env, official_map):
    env.reset(NO_CHESTS)
    x0, z0 = cell_center(*open_spot(official_map))
    for d, (ux, uz) in enumerate(UNIT_VECTORS):
        env._place_hero(x0, z0)
        env.step(d)
        x, z = hero_pos(env)
        assert (x - x0, z - z0) == pytest.approx((700 * ux, 700 * uz))


def test_wall_slide_and_straight_into_wall(env, official_map):
    env.reset(NO_CHESTS)
    xc, zc = wall_north(official_map)
    left, right, bottom, top = cell_edges(xc, zc)
    start = (left + 250, top - 40)
    env._place_hero(*start)
    env.step(NORTH_EAST)  # slides east along the wall
    x, z = hero_pos(env)
    assert z == start[1] and x == pytest.approx(start[0] + 700 * math.sqrt(0.5))
    env._place_hero(*start)
    env.step(NORTH)  # straight into the wall: stays
    assert hero_pos(env) == start

    xc, zc = wall_east(official_map)
    left, right, bottom, top = cell_edges(xc, zc)
    start = (right - 40, bottom + 250)
    env._place_hero(*start)
    env.step(NORTH_EAST)  # slides north along the wall
    x, z = hero_pos(env)
    assert x == start[0] and z == pytest.approx(start[1] + 700 * math.sqrt(0.5))
    env._place_hero(*start)
    env.step(EAST)
    assert hero_pos(env) == start


def test_hero_never_leaves_passable_cells(env, official_map):
    env.reset(NO_CHESTS)
    draws = np.random.default_rng(5).integers(0, 16, size=1500).tolist()
    for act in draws:
        *_, terminated, truncated, _ = env.step(act)
        assert official_map.is_passable_point(*hero_pos(env))
        if terminated or truncated:
            env.reset(NO_CHESTS)


# ---- super flash -----------------------------------------------------------------------------


def flash_spot(m, target_passable: bool, on_map: bool = True):
    """(start cell, direction) of a flash whose target cell is (not) passable."""
    for zc in range(128):
        for xc in range(128):
            if not m.passable[zc, xc] or not far_from_positions(m, xc, zc, 3):
                continue
            x, z = cell_center(xc, zc)
            for d, (ux, uz) in enumerate(UNIT_VECTORS):
                txc, tzc = cell_of(x + ux * FLASH_DISTANCE, z + uz * FLASH_DISTANCE)
                inside = 0 <= txc < 128 and 0 <= tzc < 128
                if inside == on_map and m.is_passable_cell(txc, tzc) == target_passable and (
                    target_passable or far_from_positions(m, txc, tzc, 4)
                ):
                    return (xc, zc), d
    raise AssertionError("no such flash on the map")


def test_flash_jumps_8000_and_cools_down_606_steps(env, official_map):
    env.reset(NO_CHESTS)
    (xc, zc), d = flash_spot(official_map, target_passable=True)
    x0, z0 = cell_center(xc, zc)
    env._place_hero(x0, z0)
    _, obs, score, *_ = env.step(FLASH + d)
    ux, uz = UNIT_VECTORS[d]
    assert hero_pos(env) == pytest.approx((x0 + 8000 * ux, z0 + 8000 * uz))
    assert obs.legal_act == [1, 0] and score.talent_count == 1
    assert env.env_info.frame_state.heroes[0].talent.cooldown == FLASH_COOLDOWN_STEPS * MS_PER_STEP

    spot = cell_center(*open_spot(official_map))
    for k in range(1, FLASH_COOLDOWN_STEPS + 1):
        env._place_hero(*spot)
        _, obs, score, *_, info = env.step(FLASH + EAST)  # during cooldown: a plain move
        assert hero_pos(env) == pytest.approx((spot[0] + 700, spot[1]))
        assert score.talent_count == 1
        talent = info.frame_state.heroes[0].talent
        assert talent.cooldown == (FLASH_COOLDOWN_STEPS - k) * MS_PER_STEP
        assert obs.legal_act[1] == talent.status == (1 if k == FLASH_COOLDOWN_STEPS else 0)
    env._place_hero(x0, z0)
    *_, score, _, _, _ = env.step(FLASH + d)
    assert score.talent_count == 2 and hero_pos(env) == pytest.approx((x0 + 8000 * ux, z0 + 8000 * uz))


@pytest.mark.parametrize("on_map", [True, False])
def test_blocked_flash_fail_rule_stays_and_spends_the_cooldown(official_map, on_map):
    env = RealmEnv(official_map, flash_blocked="fail")
    env.reset(NO_CHESTS)
    (xc, zc), d = flash_spot(official_map, target_passable=False, on_map=on_map)
    start = cell_center(xc, zc)
    env._place_hero(*start)
    _, obs, score, *_, info = env.step(FLASH + d)
    assert hero_pos(env) == start
    assert obs.legal_act == [1, 0] and score.talent_count == 1
    assert info.frame_state.heroes[0].talent.cooldown == FLASH_COOLDOWN_STEPS * MS_PER_STEP


@pytest.mark.parametrize("on_map", [True, False])
def test_blocked_flash_nearest_rule_lands_on_the_nearest_passable_cell(official_map, on_map):
    env = RealmEnv(official_map, flash_blocked="nearest")
    env.reset(NO_CHESTS)
    (xc, zc), d = flash_spot(official_map, target_passable=False, on_map=on_map)
    x0, z0 = cell_center(xc, zc)
    env._place_hero(x0, z0)
    _, obs, score, *_ = env.step(FLASH + d)
    ux, uz = UNIT_VECTORS[d]
    tx, tz = x0 + 8000 * ux, z0 + 8000 * uz
    zs, xs = np.nonzero(official_map.passable)
    centres = [cell_center(a, b) for a, b in zip(xs.tolist(), zs.tolist())]
    best = min(math.hypot(cx - tx, cz - tz) for cx, cz in centres)
    x, z = hero_pos(env)
    assert official_map.is_passable_point(x, z) and math.hypot(x - tx, z - tz) == pytest.approx(best)
    assert obs.legal_act == [1, 0] and score.talent_count == 1


# ---- speed buff ------------------------------------------------------------------------------


def test_buff_duration_respawn_and_step_lengths(env, official_map):
    env.reset(NO_CHESTS)
    bx, bz = official_map.positions[0]
    approach = next(
        (d, (bx - 1200 * ux, bz - 1200 * uz))
        for d, (ux, uz) in enumerate(UNIT_VECTORS)
        if free(official_map, [cell_of(bx - k * 100 * ux, bz - k * 100 * uz) for k in range(13)])
    )
    d, start = approach
    env._place_hero(*start)
    _, obs, score, *_, info = env.step(d)
    assert score.buff_count == 1 and obs.feature.buff_pos is NULL_RELATIVE_POSITION
    assert info.frame_state.heroes[0].speed_up == 1
    assert info.game_info.buff_remain_time == BUFF_DURATION_STEPS * MS_PER_STEP == info.game_info.buff_duration
    buff = info.frame_state.organs[-1]
    assert (buff.sub_type, buff.config_id, buff.status, buff.cooldown) == (2, 0, 0, BUFF_RESPAWN_STEPS * MS_PER_STEP)

    spot = cell_center(*open_spot(official_map))
    for k in range(1, BUFF_RESPAWN_STEPS + 1):
        env._place_hero(*spot)
        _, obs, _, _, _, info = env.step(EAST)
        moved = hero_pos(env)[0] - spot[0]
        assert moved == pytest.approx(1000 if k <= BUFF_DURATION_STEPS else 700)
        assert info.frame_state.heroes[0].speed_up == (1 if k < BUFF_DURATION_STEPS else 0)
        assert info.game_info.buff_remain_time == max(BUFF_DURATION_STEPS - k, 0) * MS_PER_STEP
        buff = info.frame_state.organs[-1]
        back = k == BUFF_RESPAWN_STEPS
        assert (buff.status, buff.cooldown) == ((1, 0) if back else (0, (BUFF_RESPAWN_STEPS - k) * MS_PER_STEP))
        assert obs.feature.buff_pos.is_null != back
    env._place_hero(*start)
    *_, score, _, _, _ = env.step(d)
    assert score.buff_count == 2


# ---- observation windows and memory ----------------------------------------------------------


def test_grid_pos_swap_and_window_orientation(env, official_map):
    env.reset(conf(treasure_id=[4]))
    xc, zc = wall_east(official_map)
    left, right, bottom, top = cell_edges(xc, zc)
    env._place_hero(right - 40, bottom + 250)
    _, obs, *_ = env.step(EAST)  # into the wall: stays in (xc, zc)
    feature = obs.feature
    assert (feature.grid_pos.x, feature.grid_pos.z) == (zc, xc)
    grid = as_grid(feature.obstacle_map)
    assert grid[25, 25] == 1 and grid[25, 26] == 0  # wall to the east: column > 25
    expected = np.zeros((51, 51), dtype=np.float32)
    for row in range(51):
        for col in range(51):
            if official_map.is_passable_cell(xc + col - 25, zc + row - 25):
                expected[row, col] = 1
    assert np.array_equal(grid, expected)

    ex, ez = official_map.position_cells[1]
    near_end = next((ex + dx, ez + dz) for dx in range(-8, 9) for dz in range(-8, 9) if max(abs(dx), abs(dz)) >= 5 and official_map.is_passable_cell(ex + dx, ez + dz))
    env._place_hero(*cell_center(*near_end))
    _, obs, *_ = env.step(WEST)
    hx, hz = obs.feature.grid_pos.z, obs.feature.grid_pos.x
    end_map = as_grid(obs.feature.end_map)
    assert end_map.sum() == 1 and end_map[25 + ez - hz, 25 + ex - hx] == 1
    assert sum(obs.feature.treasure_map) == 0  # chest 4 is far outside the window


def test_windows_are_zero_off_the_map(env, official_map):
    env.reset(NO_CHESTS)  # start cell (15, 13): the window reaches past the lower-left corner
    _, obs, *_ = env.step(WEST)
    hx, hz = obs.feature.grid_pos.z, obs.feature.grid_pos.x
    grid = as_grid(obs.feature.obstacle_map)
    assert not grid[: 25 - hz].any() and not grid[:, : 25 - hx].any()


def test_memory_map_counts_step_ends_read_before_increment(env, official_map):
    env.reset(NO_CHESTS)
    xc, zc = wall_north(official_map)
    left, right, bottom, top = cell_edges(xc, zc)
    env._place_hero(left + 250, top - 40)
    seen = []
    for k in range(7):
        _, obs, *_ = env.step(NORTH)  # stays put
        seen.append(obs.feature.memory_map[25 * 51 + 25])
        if k == 0:
            first_obs = obs
    assert seen == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.0])
    assert seen[-1] == 1.0 and sum(obs.feature.memory_map) == pytest.approx(1.0)
    env._place_hero(left - 250, top - 250)  # one cell west, then a step away
    _, obs, *_ = env.step(WEST)
    hx, hz = obs.feature.grid_pos.z, obs.feature.grid_pos.x
    assert (hx, hz) != (xc, zc)
    memory = as_grid(obs.feature.memory_map)
    assert memory[25 + zc - hz, 25 + xc - hx] == 1.0 and memory[25, 25] == 0.0
    assert as_grid(first_obs.feature.memory_map)[25, 25] == 0.0  # earlier windows are copies, untouched by later steps


# ---- determinism and construction ------------------------------------------------------------


def play(env, seed, steps=300):
    trace = []
    obs = env.reset({"diy": {"treasure_num": 10}}, seed=seed)
    trace.append((tuple(env.episode.treasure_id), obs))
    draws = np.random.default_rng(99).integers(0, 16, size=steps).tolist()
    for act in draws:
        result = env.step(act)
        trace.append(result)
        if result[3] or result[4]:
            break
    return trace


def assert_same(a, b):
    if isinstance(a, np.ndarray):
        assert np.array_equal(a, b)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif hasattr(a, "__slots__"):
        assert type(a) is type(b)
        for name in a.__slots__:
            assert_same(getattr(a, name), getattr(b, name))
    else:
        assert a == b


def test_same_seed_same_episode(official_map):
    one = play(RealmEnv(official_map, step_jitter=True), seed=11)
    two = play(RealmEnv(official_map, step_jitter=True, seed=123), seed=11)
    assert_same(one, two)
    other = play(RealmEnv(official_map, step_jitter=True), seed=12)
    assert one[0][0] != other[0][0]  # another seed draws other chests


def test_step_jitter_stays_in_the_observed_range(official_map):
    env = RealmEnv(official_map, step_jitter=True, seed=3)
    env.reset(NO_CHESTS)
    spot = cell_center(*open_spot(official_map))
    lengths = []
    for _ in range(50):
        env._place_hero(*spot)
        env.step(EAST)
        lengths.append(hero_pos(env)[0] - spot[0])
    assert 660 <= min(lengths) and max(lengths) <= 711 and len(set(lengths)) > 10


def test_make_env(official_map_paths):
    map_file, positions_file = official_map_paths
    env = realm.make_env(map_file, positions_file, flash_blocked="nearest", seed=1)
    assert env.map.num_passable == 4196 and env.flash_blocked == "nearest"
    assert realm.make_env(map_file, positions_file).map is env.map
    assert realm.make_env().map.name == "generated-0"
    with pytest.raises(ValueError, match="positions_file"):
        realm.make_env(map_file)
    with pytest.raises(TypeError, match="did you mean 'flash_blocked'"):
        realm.make_env(flash_blokced="fail")
    with pytest.raises(ValueError, match="fail | nearest"):
        realm.make_env(flash_blocked="maybe")


def test_gym_id_is_registered_without_importing_the_wrapper():
    code = (
        "import sys, gymnasium, realm; "
        "assert 'realm.back_to_the_realm.gym_env' not in sys.modules; "
        "realm.register_gym_env(realm.GYM_ENV_ID, 'realm.back_to_the_realm.gym_env:RealmGymEnv'); "  # a second registration is a no-op
        "print(gymnasium.registry[realm.GYM_ENV_ID].entry_point)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert out.stdout.strip() == "realm.back_to_the_realm.gym_env:RealmGymEnv" and "Overriding" not in out.stderr
