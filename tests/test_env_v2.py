"""Back to the Realm v2 (realm/back_to_the_realm_v2): rules, wire, usr_conf checks, maps, planner and pictures.

The reconstructed map_cherry (../shared/kaiwu_v2/map/) is test data only: tests that need it
skip when it is absent.
"""
from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from realm.back_to_the_realm.env import EpisodeOverError
from realm.back_to_the_realm.usr_conf import UsrConfError
from realm.back_to_the_realm_v2 import (
    RealmEnvV2,
    UsrConfV2Error,
    V2Map,
    default_usr_conf,
    generate_v2_map,
    load_v2_map,
    make_env_v2,
    validate_obstacles,
    validate_usr_conf,
    validate_v2_map,
)
from realm.back_to_the_realm_v2.constants import CELL_BUFF, CELL_CHEST, CELL_END, CELL_PASSABLE, CELL_START
from realm.back_to_the_realm_v2.maps import component_sizes, move_distances, obstacle_detour
from realm.back_to_the_realm_v2.reference import planner_score_v2, run_planner_v2
from realm.back_to_the_realm_v2.protocol import (
    EXTRA_INFO_KEYS,
    FRAME_STATE_KEYS,
    GAME_INFO_KEYS,
    HERO_KEYS,
    OBS_KEYS,
    ORGAN_KEYS,
    RELATIVE_DIRECTION,
    RELATIVE_DISTANCE,
    SCORE_INFO_KEYS,
    relative_pos,
)
from realm.back_to_the_realm_v2.render import (COLORS, FOG, cell_to_pixel, explored_cells, render_v2_episode, render_v2_map,
                             render_v2_replay, render_v2_view)

REPO_ROOT = Path(__file__).resolve().parents[1]
KAIWU_V2 = REPO_ROOT.parent / "shared" / "kaiwu_v2"
CHERRY = KAIWU_V2 / "map" / "map_cherry_reconstructed.json"
CHERRY_OBSTACLES = KAIWU_V2 / "map" / "map_cherry_obstacles_reconstructed.json"
# (east, north-east, north, ...) as act numbers
E, NE, N, NW, W, SW, S, SE = range(8)


@pytest.fixture(scope="module")
def cherry() -> V2Map:
    if not (CHERRY.is_file() and CHERRY_OBSTACLES.is_file()):
        pytest.skip(f"reconstructed map_cherry not found under {CHERRY.parent}")
    return load_v2_map(CHERRY, CHERRY_OBSTACLES)


def table(**changes) -> dict:
    """A full v2 table: fixed points on the synthetic corridor map, nothing random."""
    conf = {"start": [5, 10], "end": [40, 10], "buff": [60, 10], "start_random": False, "end_random": False,
            "buff_random": False, "buff_cooldown": 100, "talent_cooldown": 100, "treasure_random": False,
            "treasure_count": 0, "treasure_pos": [], "obstacle_random": False, "obstacle_id": [], "max_step": 1000}
    conf.update(changes)
    return conf


def toml_tree(**changes) -> dict:
    return {"env_conf": {"map_name": "map_cherry", "map_cherry": table(**changes)}}


def corridor_map(obstacles=None) -> V2Map:
    """A 1-cell corridor z = 10, x = 0..100, a wall at x = 12..14 that a 1-cell bypass (x = 10 and
    16 up to z = 12) goes round, and a 3×3 room around (70, 30) joined by a column x = 70."""
    grid = np.zeros((128, 128), dtype=bool)
    grid[10, 0:101] = True
    grid[10, 12:15] = False
    grid[11:13, 10] = grid[11:13, 16] = grid[12, 10:17] = True
    grid[10:31, 70] = True
    grid[29:32, 69:72] = True
    return V2Map(grid, obstacles, name="corridor")


def organ(obs, sub_type, config_id=None):
    for o in obs["frame_state"]["organs"]:
        if o["sub_type"] == sub_type and (config_id is None or o["config_id"] == config_id):
            return o
    raise AssertionError(f"no organ {sub_type}/{config_id}")


# ---- the wire ------------------------------------------------------------------------------------

def test_reset_and_step_speak_the_v2_protocol():
    env = make_env_v2(map_seed=0, seed=1)
    obs, extra_info = env.reset(usr_conf=default_usr_conf())
    assert tuple(obs) == OBS_KEYS and tuple(extra_info) == EXTRA_INFO_KEYS
    assert extra_info["result_code"] == 0 and extra_info["result_message"] == ""
    assert tuple(obs["frame_state"]) == FRAME_STATE_KEYS and tuple(obs["score_info"]) == SCORE_INFO_KEYS
    assert tuple(extra_info["game_info"]) == GAME_INFO_KEYS
    hero = obs["frame_state"]["heroes"][0]
    assert tuple(hero) == HERO_KEYS and hero["pos"] == {"x": 111, "z": 83}
    assert hero["talent"] == {"talent_type": 1, "status": 1, "cooldown": 0} and hero["speed_up"] == 0
    organs = obs["frame_state"]["organs"]
    assert all(tuple(o) == ORGAN_KEYS for o in organs)
    assert sorted(o["config_id"] for o in organs) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 21, 22]
    for o in organs:  # the official packages look the names up in their enum dicts
        assert RELATIVE_DIRECTION[o["relative_pos"]["direction"]] >= 1
        assert RELATIVE_DISTANCE[o["relative_pos"]["l2_distance"]] >= 1
    assert len(obs["map_info"]) == 11 and all(len(r["values"]) == 11 for r in obs["map_info"])
    assert obs["legal_act"] == [1, 1] and obs["frame_state"]["step_no"] == 0
    assert len(extra_info["game_info"]["obstacle_id"]) == 1  # 28.1.1: one random obstacle
    for k in range(3):
        step_no, obs, terminated, truncated, extra_info = env.step(np.int64(E))
        assert step_no == k and obs["frame_state"]["step_no"] == k + 1 and not (terminated or truncated)
    for bad in (16, -1, 2.0, True, "1"):
        with pytest.raises(ValueError, match="allowed an int in 0..15"):
            env.step(bad)


def test_step_after_the_end_and_before_reset_raise():
    env = RealmEnvV2(corridor_map())
    with pytest.raises(EpisodeOverError):
        env.step(0)
    env.reset(toml_tree(max_step=1))
    *_, truncated, _ = env.step(E)
    assert truncated
    with pytest.raises(EpisodeOverError):
        env.step(E)


@pytest.mark.parametrize("name, value", [("step_length", 3), ("buff_step_length", 0), ("buff_duration", 0),
                                         ("distance_bands", "v3"), ("reveal_end_pos", "never"),
                                         ("talent_when_cooling", "flash"), ("buff_step_length", True)])
def test_bad_env_options_name_the_option_and_its_values(name, value):
    with pytest.raises(ValueError, match=f"{name} = .* is invalid: allowed"):
        RealmEnvV2(corridor_map(), **{name: value})
    with pytest.raises(TypeError, match="unknown v2 env option 'step_len'"):
        make_env_v2(step_len=1)


# ---- scoring -------------------------------------------------------------------------------------

@pytest.mark.parametrize("step_no, score", [(857, 178.4), (26, 344.6), (511, 247.6)])
def test_server_logged_scores(step_no, score):
    """24.0.3 logs, max_step 1000, no chests: a walk of step_no + 1 actions reaching the end."""
    env = RealmEnvV2(corridor_map())
    env.reset(toml_tree(start=[15, 10], end=[25, 10]))
    for _ in range(step_no + 1 - 10):
        out = env.step(N)  # into the wall: the hero stays, the step counts
        assert not out[2] and env.hero == (15, 10)
    for _ in range(10):
        got_step_no, obs, terminated, truncated, extra_info = env.step(E)
    assert terminated and not truncated and got_step_no == step_no
    assert organ(obs, 4)["relative_pos"] == {"direction": "East", "l2_distance": "VerySmall"}  # on the end's cell
    assert extra_info["game_info"]["total_score"] == score and obs["score_info"]["total_score"] == score


def test_truncation_scores_zero_at_step_no_999():
    env = RealmEnvV2(corridor_map())
    env.reset(toml_tree())
    for _ in range(999):
        assert not env.step(N)[3]
    step_no, _, terminated, truncated, extra_info = env.step(N)
    assert (step_no, terminated, truncated) == (999, False, True)
    assert extra_info["game_info"]["total_score"] == 0.0
    assert extra_info["game_info"]["end_pos"] == {"x": 40, "z": 10}  # present at the end, as the 28.1.1 workflow logs it


def test_chests_score_100_each_and_are_picked_up_on_the_path():
    env = RealmEnvV2(corridor_map())
    env.reset(toml_tree(treasure_pos=[[7, 10], [9, 10]], buff=[60, 10]))
    env.step(E)
    _, obs, *_ = env.step(E)
    assert obs["score_info"]["treasure_collected_count"] == 1 and obs["score_info"]["score"] == 100.0
    assert organ(obs, 1, 1)["status"] == 0 and organ(obs, 1, 2)["status"] == 1
    env.step(E)
    _, obs, *_ = env.step(E)
    assert obs["score_info"]["treasure_collected_count"] == 2 and organ(obs, 1, 2)["status"] == 0
    assert obs["score_info"]["total_score"] == 200.0  # the running chest score until the end
    env._place_hero(38, 10)
    step_no, obs, terminated, _, extra_info = env.step(E)
    assert not terminated
    step_no, obs, terminated, _, extra_info = env.step(E)
    assert terminated and step_no == 5
    assert extra_info["game_info"]["total_score"] == pytest.approx(150 + 0.2 * (1000 - 6) + 200)


# ---- talent and buff -----------------------------------------------------------------------------

def test_talent_lands_16_cells_away_over_walls_then_cools_down():
    env = RealmEnvV2(corridor_map())
    env.reset(toml_tree(start=[5, 10], end=[90, 10], talent_cooldown=100))
    _, obs, *_ = env.step(8 + E)  # over the wall at x = 12..14
    assert env.hero == (21, 10) and env.last_jump == ((5, 10), (21, 10))
    talent = obs["frame_state"]["heroes"][0]["talent"]
    assert (talent["status"], talent["cooldown"]) == (0, 100) and obs["legal_act"] == [1, 0]
    assert obs["score_info"]["talent_count"] == 1
    _, obs, *_ = env.step(8 + E)  # cooling: played as the move East
    assert env.hero == (22, 10) and obs["frame_state"]["heroes"][0]["talent"]["cooldown"] == 99
    for _ in range(98):
        _, obs, *_ = env.step(N)
    assert obs["frame_state"]["heroes"][0]["talent"] == {"talent_type": 1, "status": 0, "cooldown": 1}
    _, obs, *_ = env.step(N)  # the 100th step after the cast: ready for the next one
    assert obs["frame_state"]["heroes"][0]["talent"]["status"] == 1 and obs["legal_act"] == [1, 1]
    env.step(8 + E)
    assert env.hero == (38, 10) and env.last_jump is not None


def test_talent_landing_steps_back_to_the_farthest_free_cell():
    env = RealmEnvV2(corridor_map())
    env.reset(toml_tree(start=[54, 10], end=[90, 10]))
    env.step(8 + E)  # (70, 10) is free: the column's foot
    assert env.hero == (70, 10)
    env.reset(toml_tree(start=[70, 10], end=[90, 10]))
    env.step(8 + N)  # 16 north: (70, 26), in the column
    assert env.hero == (70, 26)
    env.reset(toml_tree(start=[40, 10], end=[90, 10]))
    env.step(8 + NE)  # (56, 26) ... (41, 11) are walls: none free, the hero stays, the talent is spent
    assert env.hero == (40, 10) and not env.talent_ready
    env.reset(toml_tree(start=[54, 10], end=[90, 10]))
    env._place_hero(69, 30)
    env.step(8 + SE)  # diagonal rays go (16, 16) cells: (85, 14) .. (70, 29); only (70, 29) is free
    assert env.hero == (70, 29)


def test_talent_while_cooling_can_stay():
    env = RealmEnvV2(corridor_map(), talent_when_cooling="stay")
    env.reset(toml_tree(end=[90, 10]))
    env.step(8 + E)
    env.step(8 + E)
    assert env.hero == (21, 10)


def test_buff_speeds_up_for_its_duration_and_comes_back_after_its_cooldown():
    env = RealmEnvV2(corridor_map(), buff_duration=5)
    env.reset(toml_tree(start=[20, 10], buff=[22, 10], end=[90, 10], buff_cooldown=8))
    env.step(E)
    _, obs, *_ = env.step(E)  # takes the buff
    hero = obs["frame_state"]["heroes"][0]
    assert (hero["speed_up"], hero["buff_remain_time"]) == (1, 5) and obs["score_info"]["buff_count"] == 1
    buff = organ(obs, 2)
    assert (buff["status"], buff["cooldown"]) == (0, 8)
    assert obs["map_info"][5]["values"][5] == CELL_PASSABLE  # the buff's cell, under the hero
    for k in range(5):
        x = env.hero[0]
        _, obs, *_ = env.step(E)
        assert env.hero[0] == x + 2  # 2 cells per step while it lasts
    assert obs["frame_state"]["heroes"][0]["speed_up"] == 0
    x = env.hero[0]
    env.step(W)
    assert env.hero[0] == x - 1
    env._place_hero(25, 10)
    _, obs, *_ = env.step(W)  # 7 steps after the pick-up
    assert organ(obs, 2)["status"] == 0 and organ(obs, 2)["cooldown"] == 1
    _, obs, *_ = env.step(N)
    assert organ(obs, 2)["status"] == 1 and organ(obs, 2)["cooldown"] == 0
    assert obs["map_info"][5 + 22 - 24]["values"][5] == CELL_BUFF
    assert env.extra_info["game_info"]["buff_duration"] == 5


def test_step_length_option():
    env = RealmEnvV2(corridor_map(), step_length=2, buff_step_length=3)
    env.reset(toml_tree(start=[20, 10], end=[90, 10]))
    env.step(E)
    assert env.hero == (22, 10)
    env._place_hero(10, 10)
    env.step(E)  # blocked after one cell by the wall at 12
    assert env.hero == (11, 10)


def test_diagonal_moves_do_not_cut_corners(cherry):
    env = RealmEnvV2(cherry)
    env.reset(toml_tree(start=[111, 83], end=[20, 49], buff=[57, 68]))
    grid = env.grid
    for _ in range(200):
        x, z = env.hero
        act = int(np.random.default_rng(x * 128 + z).integers(8))
        env.step(act)
        nx, nz = env.hero
        assert grid[nz, nx] and max(abs(nx - x), abs(nz - z)) <= 1
        if nx != x and nz != z:
            assert grid[z, nx] and grid[nz, x]


# ---- view, relative positions, discovery -----------------------------------------------------------

def test_view_is_map_info_i_j_equals_cell_x_minus_5_plus_i_z_minus_5_plus_j():
    env = make_env_v2(map_seed=2, seed=3)
    treasure_conf = default_usr_conf()
    obs, _ = env.reset(treasure_conf)
    e = env.episode
    marks = {e.start: CELL_START, e.end: CELL_END, e.buff: CELL_BUFF, **{p: CELL_CHEST for p in e.treasures}}
    rng = np.random.default_rng(0)
    for _ in range(300):
        x, z = env.hero
        view = [r["values"] for r in obs["map_info"]]
        for i in range(11):
            for j in range(11):
                cx, cz = x - 5 + i, z - 5 + j
                inside = 0 <= cx < 128 and 0 <= cz < 128 and env.grid[cz, cx]
                want = marks.get((cx, cz), CELL_PASSABLE) if inside else 0
                if (cx, cz) in e.treasures and env.chests_taken[e.treasures.index((cx, cz))]:
                    want = CELL_PASSABLE
                if (cx, cz) == e.buff and not env.buff_available:
                    want = CELL_PASSABLE
                assert view[i][j] == want, (i, j, x, z)
        _, obs, terminated, truncated, _ = env.step(int(rng.integers(16)))
        if terminated or truncated:
            break


def test_view_off_the_map_reads_blocked_and_rows_are_x():
    grid = np.zeros((128, 128), dtype=bool)
    grid[0:3, 0:4] = True  # z 0..2, x 0..3
    env = RealmEnvV2(V2Map(grid, None, "corner"))
    obs, _ = env.reset(toml_tree(start=[0, 0], end=[3, 2], buff=[3, 0]))
    view = np.array([r["values"] for r in obs["map_info"]])
    assert (view[:5, :] == 0).all() and (view[:, :5] == 0).all()  # x < 0 rows, z < 0 columns
    assert view[5, 5] == CELL_START and view[8, 7] == CELL_END and view[8, 5] == CELL_BUFF
    assert view[6, 7] == CELL_PASSABLE and view[9, 5] == 0  # (1, 2) free; (4, 0) a wall


@pytest.mark.parametrize("dx, dz, bands, direction, distance", [
    (0, 0, "uniform20", "East", "VerySmall"), (20, 0, "uniform20", "East", "VerySmall"),
    (21, 0, "uniform20", "East", "Small"), (0, 40, "uniform20", "North", "Small"),
    (-30, -30, "uniform20", "SouthWest", "Medium"), (50, -40, "uniform20", "SouthEast", "Large"),
    (-60, 10, "uniform20", "West", "Large"), (81, 0, "uniform20", "East", "VeryLarge"),
    (10, 24, "uniform20", "NorthEast", "Small"), (-10, 24, "uniform20", "NorthWest", "Small"),
    (0, -100, "uniform20", "South", "VeryLarge"),
    (5, 0, "v1", "East", "VerySmall"), (6, 0, "v1", "East", "Small"), (15, 0, "v1", "East", "Small"),
    (16, 0, "v1", "East", "Medium"), (30, 0, "v1", "East", "Medium"), (60, 0, "v1", "East", "Large"),
    (61, 0, "v1", "East", "VeryLarge"),
])
def test_distance_bands_and_directions(dx, dz, bands, direction, distance):
    assert relative_pos(dx, dz, bands) == {"direction": direction, "l2_distance": distance}


def test_relative_positions_in_obs_follow_the_option():
    for bands, want in (("uniform20", "Small"), ("v1", "Large")):
        env = RealmEnvV2(corridor_map(), distance_bands=bands)
        obs, _ = env.reset(toml_tree(start=[5, 10], end=[40, 10]))
        assert organ(obs, 4)["relative_pos"] == {"direction": "East", "l2_distance": want}


def test_end_is_discovered_in_view_and_reveal_options():
    results = {}
    for reveal in ("always", "found", "at_end"):
        env = RealmEnvV2(corridor_map(), reveal_end_pos=reveal)
        obs, info = env.reset(toml_tree(start=[20, 10], end=[30, 10]))
        seen = [(organ(obs, 4)["status"], organ(obs, 4)["pos"], info["game_info"]["end_pos"])]
        for act in (E, E, E, E, E, E, W, W):  # in view from x = 25, out again at x = 24
            _, obs, _, _, info = env.step(act)
            seen.append((organ(obs, 4)["status"], organ(obs, 4)["pos"], info["game_info"]["end_pos"]))
        results[reveal] = seen
        assert env.end_found
    hidden, end = {"x": -1, "z": -1}, {"x": 30, "z": 10}
    statuses = [s for s, _, _ in results["always"]]
    assert statuses == [-1] * 5 + [1] * 3 + [-1]
    assert [p for _, p, _ in results["always"]] == [hidden] * 5 + [end] * 3 + [hidden]
    assert all(e == end for _, _, e in results["always"])
    assert [e for _, _, e in results["found"]] == [hidden] * 5 + [end] * 4
    assert all(e == hidden for _, _, e in results["at_end"])
    env = RealmEnvV2(corridor_map(), reveal_end_pos="at_end")
    env.reset(toml_tree(start=[20, 10], end=[30, 10]))
    for _ in range(10):
        *_, info = env.step(E)
    assert info["game_info"]["end_pos"] == end


def test_out_of_view_organs_hide_their_position():
    env = RealmEnvV2(corridor_map())
    obs, _ = env.reset(toml_tree(start=[20, 10], end=[90, 10], buff=[24, 10], treasure_pos=[[40, 10]]))
    assert organ(obs, 2)["status"] == 1 and organ(obs, 2)["pos"] == {"x": 24, "z": 10}
    assert organ(obs, 1)["status"] == -1 and organ(obs, 1)["pos"] == {"x": -1, "z": -1}
    assert organ(obs, 3)["status"] == 1 and organ(obs, 3)["pos"] == {"x": 20, "z": 10}


# ---- usr_conf --------------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, key", [
    ({"max_step": 0}, "max_step"), ({"max_step": 2001}, "max_step"), ({"talent_cooldown": 99}, "talent_cooldown"),
    ({"buff_cooldown": 2001}, "buff_cooldown"), ({"buff_cooldown": 0}, "buff_cooldown"),
    ({"treasure_count": 14}, "treasure_count"), ({"start": [128, 3]}, "start"), ({"end": [3, -1]}, "end"),
    ({"buff": [3]}, "buff"), ({"start": [1.0, 2]}, "start"), ({"talent_type": 2}, "talent_type"),
    ({"start_random": 1}, "start_random"), ({"obstacle_id": [7]}, "obstacle_id"), ({"obstacle_id": [1, 1]}, "obstacle_id"),
    ({"obstacle_id": [1, 2, 3, 4, 5, 6, 1]}, "obstacle_id"), ({"treasure_pos": [[7, 10], [7, 10]]}, "treasure_pos"),
    ({"treasure_pos": [[i, 10] for i in range(14)]}, "treasure_pos"), ({"end": [5, 10]}, "end"),
    ({"buff": [40, 10]}, "buff"), ({"treasure_pos": [[60, 10]]}, "treasure_pos"), ({"max_step": True}, "max_step"),
])
def test_bad_usr_conf_values_raise_naming_the_key(changes, key):
    with pytest.raises(UsrConfV2Error, match=rf"\['{key}'\] = .* is invalid.*allowed") as caught:
        validate_usr_conf(toml_tree(**changes))
    assert isinstance(caught.value, UsrConfError)
    assert "usr_conf['env_conf']['map_cherry']" in str(caught.value)


def test_unknown_missing_and_misplaced_keys():
    with pytest.raises(UsrConfV2Error, match="unknown key 'treasure_num'.*allowed keys: start, .*did you mean"):
        validate_usr_conf(toml_tree(treasure_num=3))
    conf = toml_tree()
    del conf["env_conf"]["map_cherry"]["max_step"]
    with pytest.raises(UsrConfV2Error, match="missing 'max_step'"):
        validate_usr_conf(conf)
    with pytest.raises(UsrConfV2Error, match="map_name'] = 'map_dog' is invalid: allowed 'map_cherry'"):
        validate_usr_conf({"env_conf": {"map_name": "map_dog", "map_dog": table()}})
    with pytest.raises(UsrConfV2Error, match="unknown key 'diy' in usr_conf"):
        validate_usr_conf({"env_conf": {"map_name": "map_cherry", "map_cherry": table()}, "diy": {}})
    with pytest.raises(UsrConfV2Error, match="usr_conf must be a dict"):
        validate_usr_conf([1])
    # the flat forms are the same conf, without the map name unless given
    tree = validate_usr_conf(toml_tree())
    assert tree.map_name == "map_cherry"
    assert validate_usr_conf(table()) == validate_usr_conf({"env_conf": table()}) == replace(tree, map_name=None)
    assert validate_usr_conf({**table(), "map_name": "map_cherry"}) == tree


def test_map_dependent_mistakes_raise_at_reset(cherry):
    env = RealmEnvV2(cherry)
    with pytest.raises(UsrConfV2Error, match=r"\['start'\] = \[0, 0\] is invalid \(cell \[0, 0\] is a wall"):
        env.reset(toml_tree(start=[0, 0]))
    with pytest.raises(UsrConfV2Error, match=r"\['treasure_pos'\].*is a wall"):
        env.reset(toml_tree(start=[111, 83], end=[20, 49], buff=[57, 68], treasure_pos=[[80, 50], [1, 1]]))
    on_bar = [int(v) for v in cherry.obstacles[3][0]]
    with pytest.raises(UsrConfV2Error, match=r"\['obstacle_id'\].*obstacle 3 covers the buff"):
        env.reset(toml_tree(start=[111, 83], end=[20, 49], buff=on_bar, obstacle_id=[3]))
    with pytest.raises(UsrConfV2Error, match=r"\['obstacle_id'\].*cut the fixed points"):
        env.reset(toml_tree(start=[111, 83], end=[20, 49], buff=[57, 68], obstacle_id=[1, 2, 3, 4, 5, 6]))


@pytest.mark.parametrize("path", ["package_24.0.1/agent_dqn/conf/train_env_conf.toml",
                                  "package_28.1.1/agent_dqn/conf/train_env_conf.toml",
                                  "fragments/train_env_conf_24.0.2_map_fish.toml",
                                  "fragments/train_env_conf_24.0.3_map_butterfly.toml"])
def test_official_train_env_confs_play(path):
    file = KAIWU_V2 / path
    if not file.is_file():
        pytest.skip(f"{file} not found")
    usr_conf = tomllib.loads(file.read_text())
    name = usr_conf["env_conf"]["map_name"]
    env = make_env_v2(map_seed=1, map_name=name, seed=0)
    obs, extra_info = env.reset(usr_conf=usr_conf)
    assert extra_info["result_code"] == 0
    if name != "map_cherry":  # the defaults of map_fish and map_butterfly are these files
        assert validate_usr_conf(usr_conf) == validate_usr_conf(default_usr_conf(name))
    elif "talent_type" not in usr_conf["env_conf"][name]:  # ... and of map_cherry the 28.1.1 file
        assert validate_usr_conf(usr_conf) == validate_usr_conf(default_usr_conf(name))


# ---- random placement and obstacles -------------------------------------------------------------------

def test_random_points_are_spread_reachable_and_replayable():
    env = make_env_v2(map_seed=0)
    conf = toml_tree(start_random=True, end_random=True, buff_random=True, treasure_random=True, treasure_count=13,
                     obstacle_random=True)
    seen_obstacles = set()
    for seed in range(12):
        env.reset(conf, seed=seed)
        e = env.episode
        points = [e.start, e.end, e.buff] + e.treasures
        assert len(points) == 16 and len(set(points)) == 16
        reach = move_distances(env.grid, *e.start)
        assert all(reach[z, x] >= 0 for x, z in points)
        assert all(max(abs(a[0] - b[0]), abs(a[1] - b[1])) >= 4 for k, a in enumerate(points) for b in points[k + 1:])
        assert len(e.obstacle_ids) == 1
        seen_obstacles |= set(e.obstacle_ids)
        again = make_env_v2(map_seed=0)
        again.reset(conf, seed=seed)
        assert again.episode == e
    assert len(seen_obstacles) >= 4


def test_fixed_obstacles_block_and_show_as_walls():
    env = make_env_v2(map_seed=0)
    conf = default_usr_conf()
    conf["env_conf"]["map_cherry"].update(obstacle_random=False, obstacle_id=[2, 5])
    obs, info = env.reset(conf)
    assert info["game_info"]["obstacle_id"] == [2, 5] and env.training_metrics()["obstacle_count"] == 2
    for oid in (2, 5):
        for x, z in env.map.obstacles[oid].tolist():
            assert not env.grid[z, x] and env.map.passable[z, x]
    bar = {tuple(c) for c in env.map.obstacles[2].tolist()}
    (x, z), (dx, dz) = next(((x, z), (dx, dz)) for x, z in sorted(bar) for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1))
                            if env.grid[z + dz, x + dx])
    env._place_hero(x + dx, z + dz)  # beside the bar, then walk into it
    act = {(-1, 0): E, (1, 0): W, (0, -1): N, (0, 1): S}[(dx, dz)]
    _, obs, *_ = env.step(act)
    assert env.hero == (x + dx, z + dz)
    assert obs["map_info"][5 - dx]["values"][5 - dz] == 0


def test_cherry_obstacles_each_close_their_corridor_and_keep_the_map_connected(cherry):
    assert cherry.num_passable == 3418 and component_sizes(cherry.passable) == [3418]
    assert sorted(cherry.obstacles) == [1, 2, 3, 4, 5, 6]
    assert validate_obstacles(cherry) == []
    for oid in cherry.obstacles:
        assert len(component_sizes(cherry.grid_with([oid]))) == 1
        assert obstacle_detour(cherry, oid) >= 90
    assert validate_v2_map(cherry) == []  # its official points are passable and clear of the obstacles


@pytest.mark.parametrize("map_name", ["map_cherry", "map_fish", "map_butterfly"])
def test_generated_maps_belong_to_the_family(map_name):
    for seed in range(3):
        m = generate_v2_map(seed, map_name)
        assert validate_v2_map(m) == []
        assert 3000 <= m.num_passable <= 3900 and component_sizes(m.passable) == [m.num_passable]
        for oid in m.obstacles:
            assert len(component_sizes(m.grid_with([oid]))) == 1 and obstacle_detour(m, oid) >= 20
    again = generate_v2_map(0, map_name)
    assert (again.passable == generate_v2_map(0, map_name).passable).all()
    assert not (generate_v2_map(1, map_name).passable == again.passable).all()


def test_map_files_load_by_path(tmp_path):
    import json

    grid = corridor_map().passable
    flags = grid.astype(int).reshape(-1).tolist()
    (tmp_path / "map_fish.json").write_text(json.dumps({"Flags": flags}))
    (tmp_path / "obstacles.json").write_text(json.dumps({"1": [[30, 10]]}))
    env = make_env_v2(tmp_path / "map_fish.json", tmp_path / "obstacles.json")
    assert env.map.map_name == "map_fish" and env.map.obstacles[1].tolist() == [[30, 10]]
    assert (env.map.passable == grid).all()
    transposed = load_v2_map(tmp_path / "map_fish.json", flags_order="xz")
    assert (transposed.passable == grid.T).all()
    (tmp_path / "bad.json").write_text(json.dumps({"Flags": [1, 0]}))
    from realm.back_to_the_realm.maps import MapError

    with pytest.raises(MapError, match="Flags must hold 16384"):
        load_v2_map(tmp_path / "bad.json")
    (tmp_path / "wall.json").write_text(json.dumps({"1": [[0, 0]]}))
    with pytest.raises(MapError, match="obstacle 1 cell \\(0, 0\\) is not a passable cell"):
        load_v2_map(tmp_path / "map_fish.json", tmp_path / "wall.json")


# ---- planner -------------------------------------------------------------------------------------------

def test_planner_solves_a_generated_episode():
    env = make_env_v2(map_seed=0)
    result = run_planner_v2(env, default_usr_conf(), seed=4)
    assert result.won and result.chests == 8 and result.talent_count >= 1
    assert result.total_score == pytest.approx(150 + 0.2 * (2000 - result.steps) + 800)
    assert result.step_no == result.steps - 1
    assert planner_score_v2(default_usr_conf(), seed=4, map_seed=0) == result.total_score


def test_planner_solves_cherry_faster_than_walking(cherry):
    env = RealmEnvV2(cherry)
    conf = toml_tree(start=[111, 83], end=[20, 49], buff=[57, 68], obstacle_id=[3])
    result = run_planner_v2(env, conf)
    walk = move_distances(env.grid, 111, 83)[49, 20]
    assert result.won and result.steps < walk
    assert result.total_score == pytest.approx(150 + 0.2 * (1000 - result.steps))


# ---- pictures ----------------------------------------------------------------------------------------

def test_render_frames_show_view_obstacles_end_once_found_and_jumps():
    env = RealmEnvV2(corridor_map({1: [[80, 10]]}))
    env.reset(toml_tree(start=[5, 10], end=[30, 10], obstacle_id=[1]))
    scale = 4

    def at(image, cell):
        col, row = cell_to_pixel(*cell, scale)
        return tuple(int(v) for v in image[int(row), int(col)])

    frame = render_v2_episode(env, scale=scale)
    assert frame.shape == (512, 512, 3) and frame.dtype == np.uint8
    assert at(frame, (5, 10)) == COLORS["hero"]
    assert at(frame, (30, 10)) == COLORS["passable"]  # the end, not found yet
    assert at(frame, (80, 10)) == COLORS["obstacle"]
    col, row = cell_to_pixel(5 - 5, 10, scale)
    assert tuple(int(v) for v in frame[int(row), int(col - 0.5 * scale)]) == COLORS["view"]  # the view box's West edge
    env.step(8 + E)
    jump = env.last_jump
    assert at(render_v2_episode(env, scale=scale), (30, 10)) == COLORS["passable"]  # 9 cells away: still hidden
    for _ in range(4):
        env.step(E)
    frame = render_v2_episode(env, scale=scale, trail=[(5, 10), (21, 10), (25, 10)], jumps=[jump])
    assert at(frame, (30, 10)) == COLORS["end"]  # 5 cells away: found
    assert at(frame, (13, 10)) == COLORS["flash"] and at(frame, (23, 10)) == COLORS["trail"]
    assert at(render_v2_episode(env, scale=scale, show_end="never"), (30, 10)) != COLORS["end"]
    whole = render_v2_map(env.map, scale=2)
    assert whole.shape == (256, 256, 3)


def test_the_replay_frames_darken_what_was_never_in_view_and_end_as_the_episode_did():
    env = RealmEnvV2(corridor_map())
    conf = toml_tree(start=[40, 10], end=[90, 10])
    seen = explored_cells([(5, 10)])
    assert seen.sum() == 121 and seen[10, 0] and seen[15, 10] and not seen[10, 11]  # [z, x]
    scale = 2

    def at(image, cell):
        col, row = cell_to_pixel(*cell, scale)
        return tuple(int(v) for v in image[int(row), int(col)])

    actions = [E] * 6
    frames = render_v2_replay(env, conf, 0, actions, steps=[0, 3], scale=scale)
    assert len(frames) == 3  # before steps 0 and 3, and after the last action
    dim = tuple(int(c * FOG) for c in COLORS["passable"])
    assert at(frames[0], (49, 10)) == dim and at(frames[0], (44, 10)) == COLORS["passable"]
    assert at(frames[2], (49, 10)) == COLORS["passable"]  # in view after 6 steps East
    assert env.hero == (46, 10) and at(frames[2], (46, 10)) == COLORS["hero"]


def test_render_view_is_north_up():
    env = RealmEnvV2(corridor_map())
    obs, _ = env.reset(toml_tree(start=[70, 12], end=[90, 10], buff=[70, 16]))
    scale = 8
    image = render_v2_view(obs, action=8 + N, scale=scale)
    assert image.shape == (88, 88, 3)
    centre = 5 * scale + scale // 2
    buff_row = (5 - 4) * scale + scale // 2  # 4 cells North of the hero = 4 rows up
    assert tuple(image[buff_row, centre]) != COLORS["blocked"]
    assert tuple(image[centre, centre + 2 * scale]) == COLORS["blocked"]  # East of the column is wall
    below = tuple(image[centre + 2 * scale, centre])  # (70, 10): the corridor, South
    assert below == COLORS["passable"]
