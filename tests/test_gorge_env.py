"""gorge_chase simulator: one test per rule (docs/games/gorge_chase.md), the real env_obs dumps'
shape, usr_conf checks, maps and the generator, the gym checker, determinism."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from realm.gorge_chase import (
    EpisodeOverError,
    GorgeChaseEnv,
    GorgeMap,
    GorgeMapError,
    GorgeUsrConfError,
    MapFolder,
    generate_grid,
    load_map_file,
    make_gorge_env,
    map_stats,
    write_map_json,
)
from realm.gorge_chase.constants import distance_bucket, relative_direction
from realm.gorge_chase.maps import RowCache, components
from realm.gorge_chase.options import OPTIONS, options_table

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "kaiwu_gorge"
GRIDS = SHARED / "map" / "grids"
DUMPS = SHARED / "docs" / "env_internals" / "David205x__Arena_GorgeChase" / "obs_samples"
needs_shared = pytest.mark.skipif(not GRIDS.is_dir() or not DUMPS.is_dir(),
                                  reason=f"the gorge_chase reference data is not at {SHARED}")


def open_field(walls=()) -> GorgeMap:
    """A 60x60 open square of road (x, z in 30..89) with the given (x, z) obstacle cells."""
    grid = np.zeros((128, 128), dtype=bool)
    grid[30:90, 30:90] = True
    for x, z in walls:
        grid[z, x] = False
    return GorgeMap(grid, "field")


def env_on(game_map, **conf) -> GorgeChaseEnv:
    env = GorgeChaseEnv(game_map, seed=0)
    env.reset({"env_conf": conf})
    return env


FAR = (89, 89)  # a monster cell far from the hero's usual (50, 50)


# ---- actions -----------------------------------------------------------------------------------


def test_move_collects_every_chest_on_its_path_and_reward_is_score_change():
    env = env_on(open_field())
    env.place(hero=(50, 50), monsters=[FAR], treasures=[(51, 50), (52, 50)], buffs=[(50, 51)])
    env.buff_remaining = 5  # boosted: 2 cells per move
    reward, obs = env.step(0)
    info = obs["observation"]["env_info"]
    assert info["pos"] == {"x": 52, "z": 50}
    assert info["treasures_collected"] == 2 and info["treasure_id"] == []
    assert reward == {"env_id": env.env_id, "frame_no": 1, "reward": 201.5}
    assert info["total_score"] == 201.5 and isinstance(info["step_score"], float)
    reward, obs = env.step(4)
    assert obs["observation"]["env_info"]["total_score"] == 203 and isinstance(
        obs["observation"]["env_info"]["total_score"], int)
    assert reward["reward"] == 1.5


def test_flash_lands_on_the_farthest_walkable_cell_over_walls():
    walls = [(53, 50), (54, 50), (55, 50), (60, 50)]
    env = env_on(open_field(walls), talent_cooldown=50)
    env.place(hero=(50, 50), monsters=[FAR], treasures=[(56, 50)], buffs=[])
    _, obs = env.step(8)  # flash E: x+10 is a wall, x+9 is road
    o = obs["observation"]
    assert o["frame_state"]["heroes"]["pos"] == {"x": 59, "z": 50}
    assert o["env_info"]["treasures_collected"] == 1  # the flash path passes the chest
    assert o["frame_state"]["heroes"]["flash_cooldown"] == 49 and o["env_info"]["flash_count"] == 1
    assert o["legal_action"] == [True] * 8 + [False] * 8
    _, obs = env.step(12)  # flash W on cooldown: no movement, the step still counts
    assert obs["observation"]["env_info"]["pos"] == {"x": 59, "z": 50} and obs["frame_no"] == 2
    for _ in range(47):
        _, obs = env.step(2 if obs["frame_no"] % 2 else 6)
    assert obs["frame_no"] == 49 and obs["observation"]["legal_action"][8:] == [False] * 8
    _, obs = env.step(2 if obs["frame_no"] % 2 else 6)  # cooldown 50 set at step 1: legal at step 50
    assert obs["frame_no"] == 50 and obs["observation"]["legal_action"][8:] == [True] * 8
    _, obs = env.step(9)  # diagonal flash: 8 cells NE
    assert obs["observation"]["env_info"]["pos"]["x"] - 59 == 8


def test_flash_in_place_succeeds_and_starts_the_cooldown():
    grid = np.zeros((128, 128), dtype=bool)
    grid[50, 30:51] = True  # a dead-end corridor ending at x = 50
    env = env_on(GorgeMap(grid, "corridor"))
    env.place(hero=(50, 50), monsters=[(30, 50)], treasures=[], buffs=[])
    _, obs = env.step(8)  # flash E: nothing walkable within 10
    assert obs["observation"]["env_info"]["pos"] == {"x": 50, "z": 50}
    assert obs["observation"]["frame_state"]["heroes"]["flash_cooldown"] == 99
    assert obs["observation"]["env_info"]["flash_count"] == 1


def test_diagonal_move_needs_one_open_side():
    env = env_on(open_field(walls=[(51, 50), (50, 49)]))
    env.place(hero=(50, 50), monsters=[FAR], treasures=[], buffs=[])
    _, obs = env.step(1)  # NE with both E and N closed: blocked, the step counts
    assert obs["observation"]["env_info"]["pos"] == {"x": 50, "z": 50} and obs["frame_no"] == 1
    env = env_on(open_field(walls=[(51, 50)]))
    env.place(hero=(50, 50), monsters=[FAR], treasures=[], buffs=[])
    _, obs = env.step(1)
    assert obs["observation"]["env_info"]["pos"] == {"x": 51, "z": 49}


def test_buff_gives_49_boosted_moves():
    env = env_on(open_field(), buff_cooldown=200)
    env.place(hero=(40, 40), monsters=[FAR], treasures=[], buffs=[(41, 40)])
    _, obs = env.step(0)
    o = obs["observation"]
    assert o["frame_state"]["heroes"]["buff_remaining_time"] == 49 and o["env_info"]["collected_buff"] == 1
    assert o["frame_state"]["organs"][0]["status"] == 0  # refreshing, still listed
    boosted = 0
    x = 41
    for k in range(60):
        _, obs = env.step(0 if k % 2 == 0 else 4)
        nx = obs["observation"]["env_info"]["pos"]["x"]
        boosted += abs(nx - x) == 2
        x = nx
    assert boosted == 49


def test_buff_reappears_after_buff_cooldown():
    env = env_on(open_field(), buff_cooldown=20)
    env.place(hero=(40, 40), monsters=[FAR], treasures=[], buffs=[(41, 40)])
    env.step(0)  # picked up at step 1: the counter shows it again at step 1 + 20 - 1
    for k in range(20):
        _, obs = env.step(6 if k == 0 or k % 2 == 1 else 2)  # S, S, then N / S between z 42 and 44
        status = obs["extra_info"]["frame_state"]["organs"][0]["status"]
        assert status == (1 if obs["frame_no"] >= 20 else 0), obs["frame_no"]


# ---- monsters ----------------------------------------------------------------------------------


def test_monster_chases_by_shortest_path_round_a_wall():
    walls = [(60, z) for z in range(30, 80)]  # a wall with a gap at the bottom
    game_map = open_field(walls)
    env = env_on(game_map)
    env.place(hero=(55, 40), monsters=[(65, 40)], treasures=[], buffs=[])
    hero = 40 * 128 + 55
    d0 = game_map.distance(hero, 40 * 128 + 65)
    for k in range(5):  # the hero stands still (moving into the map edge is not possible here: N/S shuffle)
        env.step(2 if k % 2 == 0 else 6)
    m = env.monsters[0]
    assert game_map.distance(40 * 128 + 55, m.z * 128 + m.x) <= d0 - 5 + 1
    assert m.x > 60  # it walks round, not through, the wall


def test_capture_at_chebyshev_1_counts_the_step_and_ends_the_episode():
    env = env_on(open_field())
    env.place(hero=(50, 50), monsters=[(53, 50)], treasures=[], buffs=[])
    reward, obs = env.step(0)  # hero to 51, monster to 52: Chebyshev 1
    assert obs["terminated"] is True and obs["truncated"] is False
    assert reward["reward"] == 1.5 and obs["observation"]["env_info"]["total_score"] == 1.5
    with pytest.raises(EpisodeOverError):
        env.step(0)


def test_no_capture_at_chebyshev_2():
    env = env_on(open_field())
    env.place(hero=(50, 50), monsters=[(54, 50)], treasures=[], buffs=[])
    _, obs = env.step(0)  # hero 51, monster 53
    assert not obs["terminated"]


def test_truncation_on_the_last_step_even_when_caught():
    env = env_on(open_field(), max_step=3)
    env.place(hero=(50, 50), monsters=[FAR], treasures=[], buffs=[])
    for _ in range(2):
        _, obs = env.step(0)
        assert not obs["truncated"]
    _, obs = env.step(0)
    assert obs["truncated"] is True and obs["terminated"] is False
    env = env_on(open_field(), max_step=1)
    env.place(hero=(50, 50), monsters=[(53, 50)], treasures=[], buffs=[])
    _, obs = env.step(0)
    assert env.caught and obs["truncated"] is True and obs["terminated"] is False


def test_second_monster_spawns_on_the_heros_cell_ten_steps_earlier():
    env = env_on(open_field(), monster_interval=15)
    env.place(hero=(35, 35), monsters=[FAR], treasures=[], buffs=[])
    seen = {}
    for k in range(15):
        _, obs = env.step(7 if k < 12 else 0)  # SE, then E
        seen[obs["frame_no"]] = (obs["observation"]["env_info"]["pos"]["x"], obs["observation"]["env_info"]["pos"]["z"])
        if obs["frame_no"] == 14:
            assert len(obs["extra_info"]["frame_state"]["monsters"]) == 1
    monsters = obs["extra_info"]["frame_state"]["monsters"]
    assert len(monsters) == 2 and monsters[1]["monster_id"] == monsters[0]["monster_id"] + 1
    assert (monsters[1]["pos"]["x"], monsters[1]["pos"]["z"]) == seen[5]
    assert monsters[1]["start_pos"] == monsters[1]["pos"]  # it does not move on its spawn step
    assert len(obs["observation"]["frame_state"]["monsters"]) == 2


def test_second_monster_never_with_minus_2():
    env = env_on(open_field(), monster_interval=-2, max_step=30)
    env.place(hero=(35, 35), monsters=[FAR], treasures=[], buffs=[])
    for k in range(30):
        _, obs = env.step(0 if k % 2 == 0 else 4)
    assert len(obs["extra_info"]["frame_state"]["monsters"]) == 1


def test_speed_up_at_monster_speedup_and_born_boosted():
    env = env_on(open_field(), monster_speedup=5, monster_interval=12)
    env.place(hero=(35, 35), monsters=[FAR], treasures=[], buffs=[])
    speeds = []
    for k in range(12):
        _, obs = env.step(7 if k < 6 else 0)
        speeds.append([m["speed"] for m in obs["extra_info"]["frame_state"]["monsters"]])
    assert speeds[3] == [1] and speeds[4] == [2]
    assert speeds[11] == [2, 2]


def test_monsters_never_share_a_cell():
    env = GorgeChaseEnv(open_field(), seed=3)
    for episode in range(3):
        env.reset({"env_conf": {"monster_interval": 11, "monster_speedup": 20, "max_step": 200}})
        done = False
        k = 0
        while not done:
            _, obs = env.step((k // 7) % 8)
            k += 1
            cells = [(m.x, m.z) for m in env.monsters]
            assert len(cells) == len(set(cells))
            done = obs["terminated"] or obs["truncated"]


def test_monster1_spawns_on_the_view_edge():
    env = GorgeChaseEnv(open_field(), seed=5)
    for _ in range(5):
        obs = env.reset()
        hero = obs["observation"]["env_info"]["pos"]
        m = obs["extra_info"]["frame_state"]["monsters"][0]["pos"]
        assert max(abs(m["x"] - hero["x"]), abs(m["z"] - hero["z"])) == 10
        assert obs["observation"]["frame_state"]["monsters"][0]["is_in_view"] == 1


# ---- observation shape: the real dumps ---------------------------------------------------------


def shape(value):
    """Keys (recursively) and value types; lists by their first element."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def merge_numbers(a, b):
    """step_score / total_score are int or float by value: compare them as numbers."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(merge_numbers(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return not a or not b or merge_numbers(a[0], b[0])
    return a == b or {a, b} == {"int", "float"}


@pytest.fixture(scope="module")
def folder_env(tmp_path_factory):
    if not GRIDS.is_dir():
        pytest.skip(f"the gorge_chase reference data is not at {SHARED}")
    folder = tmp_path_factory.mktemp("maps")
    for i in (5, 7):
        walkable = load_map_file(GRIDS / f"map_{i}.txt").walkable
        write_map_json(walkable, folder / f"gorge_chase_map_{i}.json")
    return GorgeChaseEnv(MapFolder(folder), seed=0)


def dump(name):
    return json.loads((DUMPS / name).read_text(encoding="utf-8"))


@needs_shared
@pytest.mark.parametrize("name, map_id", [("obs_sample.json", 7), ("sample_obs.json", 7), ("sample_obs_1.json", 5)])
def test_env_obs_has_the_dumps_keys_and_types(folder_env, name, map_id):
    from realm.gorge_chase.reference import ReferencePolicy

    real = dump(name)
    steps = real["frame_no"]
    conf = {"map": [map_id], "monster_interval": 300 if steps > 300 else 2000}
    obs = folder_env.reset({"env_conf": conf}, seed=1)
    policy = ReferencePolicy(0)
    while obs["frame_no"] < min(steps, 320):
        _, obs = folder_env.step(policy.act(folder_env))
        assert not (obs["terminated"] or obs["truncated"]), "the reference policy was caught"
    assert obs["extra_info"]["map_id"] == map_id
    assert merge_numbers(shape(obs), shape(real)), (shape(obs), shape(real))
    assert list(obs["observation"]) == ["step_no", "frame_state", "env_info", "map_info", "legal_action"]
    assert list(obs["observation"]["env_info"]) == list(real["observation"]["env_info"])
    assert obs["extra_info"]["result_message"] == real["extra_info"]["result_message"]
    assert isinstance(obs["frame_no"], int) and obs["frame_no"] == obs["observation"]["step_no"]


@needs_shared
def test_default_ids_match_the_dump(folder_env):
    obs = folder_env.reset({"env_conf": {"map": [7]}})
    real = dump("obs_sample.json")
    assert obs["observation"]["frame_state"]["heroes"]["hero_id"] == 13
    assert [g["config_id"] for g in obs["extra_info"]["frame_state"]["organs"]] == \
        [g["config_id"] for g in real["extra_info"]["frame_state"]["organs"]]
    assert [g["sub_type"] for g in obs["extra_info"]["frame_state"]["organs"]] == [1] * 10 + [2] * 2
    assert obs["extra_info"]["frame_state"]["monsters"][0]["monster_id"] == 14
    assert len(obs["observation"]["map_info"]) == 21 and all(len(r) == 21 for r in obs["observation"]["map_info"])


@needs_shared
@pytest.mark.parametrize("name, map_id", [("obs_sample.json", 7), ("sample_obs.json", 7), ("sample_obs_1.json", 5)])
def test_derived_fields_reproduce_the_dumps(name, map_id):
    real = dump(name)
    game_map = load_map_file(GRIDS / f"map_{map_id}.txt")
    hero = real["observation"]["frame_state"]["heroes"]["pos"]
    assert real["observation"]["map_info"] == game_map.view_window(hero["x"], hero["z"])
    for item in real["extra_info"]["frame_state"]["organs"] + real["extra_info"]["frame_state"]["monsters"]:
        dx, dz = item["pos"]["x"] - hero["x"], item["pos"]["z"] - hero["z"]
        assert item["hero_l2_distance"] == distance_bucket(dx, dz)
        assert item["hero_relative_direction"] == relative_direction(dx, dz)
    seen = {g["config_id"] for g in real["observation"]["frame_state"]["organs"]}
    for g in real["extra_info"]["frame_state"]["organs"]:
        in_view = max(abs(g["pos"]["x"] - hero["x"]), abs(g["pos"]["z"] - hero["z"])) <= 10
        assert (g["config_id"] in seen) == in_view
    for mo, me in zip(real["observation"]["frame_state"]["monsters"], real["extra_info"]["frame_state"]["monsters"]):
        in_view = max(abs(me["pos"]["x"] - hero["x"]), abs(me["pos"]["z"] - hero["z"])) <= 10
        assert mo["is_in_view"] == int(in_view)
        assert (mo["pos"] == {"x": -1, "z": -1} and mo["speed"] == -1) == (not in_view)


def test_out_of_view_monster_keeps_true_distance_and_direction():
    env = env_on(open_field())
    obs = env.place(hero=(40, 40), monsters=[(80, 70)], treasures=[(42, 40), (85, 85)], buffs=[])
    m = obs["observation"]["frame_state"]["monsters"][0]
    assert m["pos"] == {"x": -1, "z": -1} and m["speed"] == -1 and m["is_in_view"] == 0
    assert m["hero_l2_distance"] == distance_bucket(40, 30) == 1 and m["hero_relative_direction"] == 8
    assert [g["config_id"] for g in obs["observation"]["frame_state"]["organs"]] == [1]
    assert [g["config_id"] for g in obs["extra_info"]["frame_state"]["organs"]] == [1, 2]
    _, obs = env.step(0)  # collect chest 1 on the way
    _, obs = env.step(0)
    assert obs["observation"]["frame_state"]["organs"] == []
    assert [g["config_id"] for g in obs["extra_info"]["frame_state"]["organs"]] == [2]
    assert obs["observation"]["env_info"]["treasure_id"] == [2]


# ---- usr_conf ----------------------------------------------------------------------------------


@pytest.mark.parametrize("key, value", [
    ("treasure_count", 11), ("treasure_count", True), ("buff_count", 3), ("buff_cooldown", 0),
    ("talent_cooldown", 49), ("monster_interval", 10), ("monster_interval", -3), ("monster_speedup", 0),
    ("max_step", 2001), ("max_step", 1.0), ("map", []), ("map", [0]), ("map", [True]), ("map_random", 1),
])
def test_bad_usr_conf_values_name_the_key(key, value):
    env = GorgeChaseEnv(open_field(), seed=0)
    with pytest.raises(GorgeUsrConfError, match=key) as err:
        env.reset({"env_conf": {key: value}})
    assert repr(value) in str(err.value) or key == "map"


def test_unknown_usr_conf_key_suggests_the_right_one():
    env = make_gorge_env()
    with pytest.raises(GorgeUsrConfError, match="did you mean 'treasure_count'"):
        env.reset({"env_conf": {"treasure_cnt": 3}})
    with pytest.raises(GorgeUsrConfError, match="env_conf"):
        env.reset({"env_cnf": {}})


def test_defaults_and_random_values():
    env = make_gorge_env(seed=4)
    obs = env.reset()
    info = obs["observation"]["env_info"]
    assert (info["max_step"], info["total_treasure"], info["total_buff"], info["buff_refresh_time"],
            info["flash_cooldown_max"], info["monster_interval"], info["monster_speed_boost_step"]) == \
        (1000, 10, 2, 200, 100, 300, 500)
    obs = env.reset(usr_conf={"env_conf": {"monster_interval": -1, "monster_speedup": -1}})
    info = obs["observation"]["env_info"]
    assert 11 <= info["monster_interval"] <= 2000 and 1 <= info["monster_speed_boost_step"] <= 2000
    raw = make_gorge_env(seed=4, random_values_in_env_info="raw")
    info = raw.reset({"env_conf": {"monster_interval": -1}})["observation"]["env_info"]
    assert info["monster_interval"] == -1 and 11 <= raw.monster_interval <= 2000


def test_map_sequence_cycles_when_not_random():
    env = make_gorge_env(seed=0)
    ids = [env.reset({"env_conf": {"map": [3, 1, 2]}})["extra_info"]["map_id"] for _ in range(4)]
    assert ids == [3, 1, 2, 3]
    first = make_gorge_env(seed=0, map_order="first")
    assert {first.reset({"env_conf": {"map": [3, 1]}})["extra_info"]["map_id"] for _ in range(3)} == {3}


def test_bad_option_is_named():
    with pytest.raises(ValueError, match="monster_distance"):
        make_gorge_env(monster_distance="astar")
    with pytest.raises(TypeError, match="did you mean 'capture_radius'"):
        make_gorge_env(capture_radus=1)
    assert "monster_distance" in options_table() and set(OPTIONS) >= {"monster_distance", "map_order", "capture_radius"}


@pytest.mark.parametrize("metric", ["bfs8", "chebyshev", "manhattan"])
def test_other_distance_options_play(metric):
    env = make_gorge_env(seed=0, monster_distance=metric)
    env.reset({"env_conf": {"monster_interval": 11, "max_step": 50}})
    for k in range(50):
        _, obs = env.step(k % 8)
        if obs["terminated"] or obs["truncated"]:
            break


def test_bad_action_and_step_before_reset():
    env = make_gorge_env()
    with pytest.raises(EpisodeOverError):
        env.step(0)
    env.reset()
    for bad in (16, -1, 1.0, True, "0"):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    env.step(np.int64(3))


def test_same_seed_same_episode():
    def run(seed):
        env = make_gorge_env(seed=seed)
        env.reset({"env_conf": {"monster_interval": 11}})
        out = []
        for k in range(40):
            _, obs = env.step((k * 5) % 16)
            out.append(json.dumps(obs, sort_keys=True))
            if obs["terminated"] or obs["truncated"]:
                break
        return out

    assert run(7) == run(7)
    assert run(7) != run(8)


# ---- maps --------------------------------------------------------------------------------------


def test_map_file_errors_name_the_file_and_problem(tmp_path):
    bad = tmp_path / "gorge_chase_map_1.json"
    bad.write_bytes(b"\xff\xfe{}")
    with pytest.raises(GorgeMapError, match="not UTF-8"):
        load_map_file(bad)
    bad.write_text(json.dumps({"width": 128, "height": 128, "cells": [{"x": 0, "z": 0, "type_id": 3}]}))
    with pytest.raises(GorgeMapError, match="16384"):
        load_map_file(bad)
    grid = np.zeros((128, 128), dtype=bool)
    with pytest.raises(GorgeMapError, match="no road"):
        write_map_json(grid, bad) and load_map_file(bad)
    grid[20, 20:30] = True
    grid[40, 20:30] = True
    with pytest.raises(GorgeMapError, match="2 separate components"):
        write_map_json(grid, bad) and load_map_file(bad)
    data = json.loads(bad.read_text())
    data["cells"][5]["type_id"] = 2
    bad.write_text(json.dumps(data))
    with pytest.raises(GorgeMapError, match="type_id 2"):
        load_map_file(bad)
    txt = tmp_path / "map_2.txt"
    txt.write_text("." * 127 + "\n")
    with pytest.raises(GorgeMapError, match=str(txt.name)):
        load_map_file(txt)
    with pytest.raises(GorgeMapError, match="gorge_chase_map_3.json"):
        MapFolder(tmp_path).get(3)


@needs_shared
def test_open_maps_load_and_generated_maps_look_alike():
    open_stats = [map_stats(load_map_file(GRIDS / f"map_{i}.txt").walkable) for i in range(1, 11)]
    gen_stats = [map_stats(generate_grid(s)) for s in range(10)]
    for s in open_stats + gen_stats:
        assert s["components"] == 1 and s["margin"] >= 9
        assert 3900 <= s["road_cells"] <= 5000
        assert 4 <= s["width_median"] <= 8 and s["width_p10"] >= 4
    gen_median = np.median([s["width_median"] for s in gen_stats])
    open_median = np.median([s["width_median"] for s in open_stats])
    assert abs(gen_median - open_median) <= 1.5
    assert generate_grid(3).tobytes() == generate_grid(3).tobytes()
    assert components(generate_grid(11)) == 1


def test_a_bounded_row_cache_keeps_its_bytes_and_the_same_episodes():
    """Rows dropped from a small cache are grown again with the same distances: an episode on
    a cache of a few rows plays exactly as on an ample one, and the small one stays in bounds."""
    grid = generate_grid(5)

    def play(rows: RowCache):
        env = GorgeChaseEnv(GorgeMap(grid, "g5", rows=rows), seed=3)
        env.reset({"env_conf": {"monster_interval": 11}})
        out = []
        for k in range(300):
            _, obs = env.step((k * 7) % 8)
            out.append(json.dumps(obs, sort_keys=True))
            if obs["terminated"] or obs["truncated"]:
                env.reset({"env_conf": {"monster_interval": 11}})
        return out

    row_bytes = 2 * int(grid.sum()) + 150
    small, ample = RowCache(max_bytes=4 * row_bytes), RowCache(max_bytes=1 << 30)
    assert play(small) == play(ample)
    assert len(small) <= 4 and small.bytes <= small.max_bytes
    assert len(ample) > 50  # the ample cache kept a row per hero cell the monsters chased
    game_map = GorgeMap(grid, "g5", rows=small)
    a, b = game_map.road_cells[0], game_map.road_cells[-1]
    before = game_map.distance(a, b)
    for c in game_map.road_cells[1:20]:
        game_map.distance_row(c)  # pushes a and b's fields out
    assert game_map.distance(a, b) == before and game_map.cached_rows() <= 4
    with pytest.raises(ValueError, match="max_bytes"):
        RowCache(max_bytes=0)


def test_distance_rows_are_exact_bfs():
    game_map = open_field(walls=[(60, z) for z in range(30, 80)])
    a, b = 40 * 128 + 55, 40 * 128 + 65
    assert game_map.distance(a, b) == 10 + 2 * (80 - 40)
    row = game_map.distance_row(a)
    assert row[game_map.index[a]] == 0 and max(row) < 0xFFFF


# ---- gym ---------------------------------------------------------------------------------------


def test_gym_env_passes_the_checker():
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    import realm.gorge_chase  # noqa: F401 - registers the id

    env = gymnasium.make("realm/GorgeChase-v0", seed=0)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(0)
    assert reward == 1.5 and "total_score" in info


# ---- the full-information reference policy ------------------------------------------------------


def pillars() -> GorgeMap:
    """A 40x40 square of road (x, z in 40..79) round four 12x12 pillars: loops of 4-6 wide corridors."""
    grid = np.zeros((128, 128), dtype=bool)
    grid[40:80, 40:80] = True
    for x0 in (46, 62):
        for z0 in (46, 62):
            grid[z0:z0 + 12, x0:x0 + 12] = False
    return GorgeMap(grid, "pillars")


def test_reference_outlives_random_by_far():
    from realm.gorge_chase.reference import RandomLegalPolicy, ReferencePolicy, play

    env = GorgeChaseEnv(pillars(), seed=0)
    slow = {"env_conf": {"max_step": 200, "monster_interval": 40, "monster_speedup": 2000, "treasure_count": 4,
                         "buff_count": 1}}
    fast = {"env_conf": {"max_step": 200, "monster_interval": 40, "monster_speedup": 80, "treasure_count": 4,
                         "buff_count": 1}}
    ref_slow = [play(env, ReferencePolicy(k), slow, seed=k) for k in range(3)]
    ref_fast = [play(env, ReferencePolicy(k), fast, seed=k) for k in range(3)]
    rnd = [play(env, RandomLegalPolicy(k), fast, seed=k) for k in range(3)]
    # monsters at speed 1 never catch it, and it takes chests
    assert all(r["survived"] for r in ref_slow)
    assert sum(r["chests"] for r in ref_slow) >= 6
    # speed 2 from step 80: it flees along the loops, far longer than a random player, and survives some
    assert sum(r["steps"] for r in ref_fast) >= 4 * sum(r["steps"] for r in rnd)
    assert sum(r["steps"] for r in ref_fast) >= 3 * 150 and any(r["survived"] for r in ref_fast)
