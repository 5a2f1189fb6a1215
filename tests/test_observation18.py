"""feature.back_to_the_realm.observation18: a 2025 (18.0.2) observation read as the 2024 one. On the same episode
and actions, what the 2025 view can know equals the 2024 env's own observation, and the
stand-ins (window path lengths, objects not yet seen) keep to their documented bounds."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import realm
from feature.back_to_the_realm import layout
from feature.back_to_the_realm.constants import GRID_DISTANCE_SCALE, VIEW_RADIUS, VIEW_SIZE, cell_of, is_null
from feature.back_to_the_realm.observation import observation_process
from feature.back_to_the_realm.observation18 import NULL_RELATIVE_POSITION, Realm18View
from feature.back_to_the_realm.unpack import step_view
from feature.back_to_the_realm.explored_map import ExploredMap

CHESTS = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]


# --- the explored map -----------------------------------------------------------------------------

def _open_window():
    return np.ones((VIEW_SIZE, VIEW_SIZE), dtype=np.int32)


def test_unseen_ground_counts_as_open():
    explored = ExploredMap()
    explored.add_window(_open_window(), 60, 60)
    paths = explored.paths_from(60, 60)
    assert paths.cells_to(60, 60) == 0 and paths.cells_to(56, 63) == 7
    assert paths.cells_to(120, 100) == 100  # far beyond the window: the open-map length
    assert paths.cells_to(-1, 5) is None and paths.cells_to(5, 128) is None  # off the map


def test_seen_walls_lengthen_paths_and_enclose_regions():
    explored = ExploredMap()
    wall = _open_window()
    wall[:, VIEW_RADIUS + 2] = 0  # a wall two columns east of the hero, open at the top row only
    wall[VIEW_SIZE - 1, VIEW_RADIUS + 2] = 1
    explored.add_window(wall, 60, 60)
    assert explored.paths_from(60, 60).cells_to(64, 60) == 25 + 1 + 2 + 1 + 25 - 1 + 1  # round the wall's end
    room = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.int32)
    room[VIEW_RADIUS - 2:VIEW_RADIUS + 3, VIEW_RADIUS - 2:VIEW_RADIUS + 3] = 1
    explored.add_window(room, 60, 60)  # what a later window shows replaces what an earlier one did
    paths = explored.paths_from(60, 60)
    assert paths.cells_to(62, 61) == 3
    assert paths.cells_to(60, 70) is None and paths.cells_to(100, 20) is None


def test_a_window_at_the_map_edge_keeps_to_the_map():
    explored = ExploredMap()
    explored.add_window(_open_window(), 0, 127)
    assert explored.paths_from(0, 127).cells_to(10, 120) == 17


# --- hand-made 2025 observations -------------------------------------------------------------------

def _organ(sub_type, config_id, status, x, z, cooldown=0):
    return SimpleNamespace(sub_type=sub_type, config_id=config_id, status=status, pos=SimpleNamespace(x=x, z=z),
                           cooldown=cooldown)


def _obs18(x, z, organs=(), step_no=0, end=(40250, 40250), grid=None):
    grid = np.ones((VIEW_SIZE, VIEW_SIZE), dtype=np.int32) if grid is None else grid
    hero = SimpleNamespace(hero_id=1, pos=SimpleNamespace(x=x, z=z), speed_up=0,
                           talent=SimpleNamespace(talent_type=1, status=1, cooldown=0))
    game = SimpleNamespace(score=0.0, total_score=0.0, step_no=step_no, pos=hero.pos,
                           start_pos=SimpleNamespace(x=5500, z=1500), end_pos=SimpleNamespace(x=end[0], z=end[1]),
                           treasure_collected_count=0, treasure_score=0, treasure_count=3, buff_count=0,
                           talent_count=0, buff_remain_time=0, buff_duration=10000)
    return SimpleNamespace(frame_state=SimpleNamespace(frame_no=1 + 3 * step_no, heroes=[hero], organs=list(organs)),
                           game_info=game, map_info=[SimpleNamespace(values=row.tolist()) for row in grid],
                           legal_act=[1, 1])


def test_chests_are_remembered_out_of_view_and_dropped_when_a_view_shows_them_gone():
    view = Realm18View()
    chest = _organ(1, 7, 1, 10250, 10250)  # cell (25, 31)
    obs, info = view.reset(_obs18(10250, 10250 - 5 * 500, [chest]))
    assert not is_null(obs.feature.treasure_pos[6]) and obs.feature.treasure_pos[6].grid_distance == 5 / 256
    assert np.asarray(obs.feature.treasure_map).reshape(VIEW_SIZE, VIEW_SIZE)[VIEW_RADIUS + 5, VIEW_RADIUS] == 1
    far = 10250 + 40 * 500  # 40 cells east: the chest is out of view but remembered
    obs, info = view.step(_obs18(far, 10250, step_no=1))
    assert obs.feature.treasure_pos[6].grid_distance == 40 / 256  # over open (seen or unseen) ground
    assert [o.config_id for o in info.frame_state.organs] == [7]
    obs, info = view.step(_obs18(10250 + 10 * 500, 10250, step_no=2))  # its cell in view, not listed
    assert is_null(obs.feature.treasure_pos[6]) and info.frame_state.organs[0].status == 0
    assert all(is_null(r) for r in obs.feature.treasure_pos)


def test_a_taken_buff_comes_back_after_the_cooldown_it_showed():
    view = Realm18View()
    obs, _ = view.reset(_obs18(10250, 10250, [_organ(2, 0, 0, 12250, 10250, cooldown=3 * 200)]))
    assert is_null(obs.feature.buff_pos)
    for step in (1, 2):
        obs, info = view.step(_obs18(10250 + 30 * 500, 10250, step_no=step))  # out of view
        assert is_null(obs.feature.buff_pos) and info.frame_state.organs[-1].cooldown == (3 - step) * 200
    obs, info = view.step(_obs18(10250 + 30 * 500, 10250, step_no=3))
    assert obs.feature.buff_pos.direction == 5 and info.frame_state.organs[-1].status == 1  # West, back


def test_the_memory_map_marks_steps_not_resets():
    view = Realm18View()
    obs, _ = view.reset(_obs18(10250, 10250))
    assert not np.asarray(obs.feature.memory_map).any()
    for expected in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.0):
        obs, _ = view.step(_obs18(10250, 10250, step_no=1))
        assert obs.feature.memory_map[VIEW_RADIUS * VIEW_SIZE + VIEW_RADIUS] == pytest.approx(expected)


def test_a_window_of_the_wrong_shape_is_refused():
    obs = _obs18(10250, 10250)
    obs.map_info = obs.map_info[:50]
    with pytest.raises(ValueError, match="51 rows"):
        Realm18View().reset(obs)


# --- the same episode in both protocols ----------------------------------------------------------------

def _episode_pair(map_seed: int, seed: int):
    env24 = realm.make_env(map_seed=map_seed, seed=seed)
    env18 = realm.make_env(map_seed=map_seed, seed=seed, protocol="18")
    diy = {"start": 2, "end": 1, "treasure_random": 0, "treasure_id": CHESTS, "max_step": 2000, "talent_type": 1}
    env_conf = {"start": 2, "end": 1, "treasure_random": False, "treasure_count": len(CHESTS), "treasure_id": CHESTS,
                "max_step": 2000, "talent_type": 1}
    return env24, env18, {"diy": diy}, {"env_conf": env_conf}


def _grid(field) -> np.ndarray:
    return np.asarray(field, dtype=np.float32).reshape(VIEW_SIZE, VIEW_SIZE)


def _in_view(env, pid: int) -> bool:
    xc, zc = env.map.position_cells[pid]
    hxc, hzc = cell_of(*env.hero_position)
    return abs(xc - hxc) <= VIEW_RADIUS and abs(zc - hzc) <= VIEW_RADIUS


@pytest.mark.parametrize("map_seed, seed", [(0, 1), (5, 2)])
def test_the_view_equals_the_2024_observation_where_the_2025_data_knows_it(map_seed, seed):
    env24, env18, usr24, usr18 = _episode_pair(map_seed, seed)
    obs24 = env24.reset(usr_conf=usr24, seed=seed)
    raw, _ = env18.reset(usr_conf=usr18, seed=seed)
    view = Realm18View()
    obs18, info18 = view.reset(raw)
    rng = np.random.default_rng(seed)
    action, compared, exact, seen = 0, 0, 0, set()
    for step in range(700):
        f24, f18 = obs24.feature, obs18.feature
        rounded_cell = cell_of(*(round(v) for v in env24.hero_position)) == cell_of(*env24.hero_position)
        for name in ("obstacle_map", "memory_map", "treasure_map", "end_map"):
            np.testing.assert_array_equal(_grid(getattr(f18, name)), _grid(getattr(f24, name)), err_msg=f"{name} {step}")
        assert obs18.legal_act == obs24.legal_act
        assert (f18.norm_pos.x, f18.norm_pos.z) == pytest.approx((f24.norm_pos.x, f24.norm_pos.z), abs=1e-5)
        if rounded_cell:
            assert (f18.grid_pos.x, f18.grid_pos.z) == (f24.grid_pos.x, f24.grid_pos.z)
        for pid in CHESTS:
            r18, r24 = f18.treasure_pos[pid - 1], f24.treasure_pos[pid - 1]
            if _in_view(env24, pid):
                seen.add(pid)
            if pid not in seen:
                assert r18 == NULL_RELATIVE_POSITION  # not yet seen: unknown to a 2025 package
                continue
            assert is_null(r18) == is_null(r24), (step, pid)  # live or collected, as the 2024 env says
            if is_null(r24) or not rounded_cell:
                continue
            assert (r18.direction, r18.l2_distance) == (r24.direction, r24.l2_distance), (step, pid)
            cells18, cells24 = r18.grid_distance * GRID_DISTANCE_SCALE, r24.grid_distance * GRID_DISTANCE_SCALE
            assert cells18 <= cells24, (step, pid)  # unseen ground is open: never longer than the real path
            if _in_view(env24, pid):
                compared += 1
                exact += cells18 == cells24
        for r18, r24 in ((f18.end_pos, f24.end_pos), (f18.start_pos, f24.start_pos)):
            assert r18.grid_distance <= r24.grid_distance
            if rounded_cell:
                assert (r18.direction, r18.l2_distance) == (r24.direction, r24.l2_distance)
        if not is_null(f18.buff_pos) and rounded_cell:
            assert (f18.buff_pos.direction, f18.buff_pos.l2_distance) == (f24.buff_pos.direction, f24.buff_pos.l2_distance)

        data18, data24 = observation_process(obs18, info18), observation_process(obs24, env24.env_info)
        assert data18.map.shape == data24.map.shape == layout.MAP_SHAPE and data18.state.shape == data24.state.shape
        np.testing.assert_array_equal(data18.map, data24.map)
        np.testing.assert_array_equal(data18.legal, data24.legal)

        if rng.random() < 0.15:  # a walk with momentum, and a flash now and then
            action = int(rng.integers(0, 8))
        act = action + 8 if rng.random() < 0.01 else action
        _, obs24, score24, term24, trunc24, info24 = env24.step(act)
        _, raw, score18, term18, trunc18, _ = env18.step(act)
        obs18, info18 = view.step(raw)
        v24 = step_view(obs24, score24, info24, term24, trunc24)
        v18 = step_view(obs18, score18, info18, term18, trunc18)
        assert (v18.chest_count, v18.buff_count, v18.flash_count, v18.speed_up, v18.memory, v18.flash_ready) == (
            v24.chest_count, v24.buff_count, v24.flash_count, v24.speed_up, v24.memory, v24.flash_ready)
        assert info18.game_info.treasure_count == info24.game_info.treasure_count
        if term24 or trunc24:
            break
    assert len(seen) >= 2 and compared >= 20
    assert exact / compared > 0.5  # chests in view: mostly the ground between has been seen
