"""RealmEnv18: the 2025 protocol (code package 18.0.2) served from the game state of RealmEnv."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import realm
from realm.back_to_the_realm.env import EpisodeOverError, RealmEnv
from realm.back_to_the_realm.env18 import RealmEnv18
from realm.back_to_the_realm.maps import cell_of
from realm.back_to_the_realm.reference import run_planner
from realm.back_to_the_realm.protocol import as_grid
from realm.back_to_the_realm.protocol18 import MapInfo, Observation, ScoreInfo, State
from realm.back_to_the_realm.usr_conf import UsrConfError, env_conf_to_diy, parse_env_conf, parse_usr_conf, validate_env_conf

REPO_ROOT = Path(__file__).resolve().parents[1]
KAIWU18 = REPO_ROOT.parent / "shared" / "kaiwu18"


def env_conf(**changes) -> dict:
    """The official package's train_env_conf.toml, with `changes`."""
    conf = {"start": 2, "end": 1, "treasure_random": True, "treasure_count": 8, "treasure_id": [],
            "talent_type": 1, "max_step": 2000}
    return {"env_conf": {**conf, **changes}}


def grid_of(obs: Observation) -> np.ndarray:
    assert len(obs.map_info) == 51 and all(isinstance(row, MapInfo) for row in obs.map_info)
    assert all(len(row.values) == 51 and all(type(v) is int for v in row.values) for row in obs.map_info)
    return np.array([row.values for row in obs.map_info])


def window(m, centre_row: int, centre_col: int) -> np.ndarray:
    """passable[centre_row - 25 + r, centre_col - 25 + c], 0 outside the map."""
    out = np.zeros((51, 51), dtype=int)
    for r in range(51):
        for c in range(51):
            row, col = centre_row - 25 + r, centre_col - 25 + c
            if 0 <= row < 128 and 0 <= col < 128:
                out[r, c] = int(m.passable[row, col])
    return out


def hero_cell(env) -> tuple[int, int]:
    return cell_of(*env.hero_position)


def twins(seed=5, **rules):
    """A 2024 and a 2025 env on the same map with the same rules and episode RNG seed."""
    return realm.make_env(seed=seed, **rules), realm.make_env(protocol="18", seed=seed, **rules)


# ---- reset, the window ------------------------------------------------------------------------


def test_reset_returns_observation_and_state():
    env = realm.make_env(protocol="18")
    assert isinstance(env, RealmEnv18) and isinstance(env.game, RealmEnv) and env.map_window == "hero"
    obs, state = env.reset(env_conf(treasure_random=False, treasure_id=[3, 4]), seed=0)
    assert isinstance(obs, Observation) and isinstance(state, State)
    assert obs.legal_act == [1, 1] and obs.frame_state.frame_no == 1 == env.frame_no
    info = obs.game_info
    assert (info.step_no, info.treasure_collected_count, info.treasure_count) == (0, 0, 2)
    start, end = (tuple(round(v) for v in env.map.positions[i]) for i in (2, 1))
    assert (info.start_pos.x, info.start_pos.z) == start == (info.pos.x, info.pos.z)
    assert (info.end_pos.x, info.end_pos.z) == end and type(info.end_pos.x) is int
    assert type(info.score) is float and type(info.total_score) is float and info.buff_duration == 10000
    hero = obs.frame_state.heroes[0]
    assert (hero.pos.x, hero.pos.z) == start and hero.talent.status == 1 and hero.speed_up == 0
    assert grid_of(obs)[25, 25] == 1
    assert env.episode.treasure_id == [3, 4] and not env.done and env.steps == 0


def test_hero_window_is_the_2024_obstacle_map_and_the_passable_window():
    old, new = twins(seed=11, step_jitter=True)
    obs24 = old.reset({"diy": {"treasure_num": 13}})
    obs18, _ = new.reset(env_conf(treasure_count=13))
    rng = np.random.default_rng(0)
    for step in range(150):
        assert np.array_equal(grid_of(obs18), as_grid(obs24.feature.obstacle_map, dtype=int))
        if step % 25 == 0:
            xc, zc = hero_cell(new)
            assert np.array_equal(grid_of(obs18), window(new.map, zc, xc))
        act = int(rng.integers(16))
        _, obs24, *_ = old.step(act)
        _, obs18, *_ = new.step(act)


def test_platform_window_is_centred_on_the_transposed_cell():
    hero = realm.make_env(protocol="18", seed=2)
    platform = realm.make_env(protocol="18", map_window="platform", seed=2)
    obs_h, _ = hero.reset(env_conf(), seed=2)
    obs_p, _ = platform.reset(env_conf(), seed=2)
    xc, zc = hero_cell(platform)
    assert xc != zc  # start 2 of the generated map is cell (17, 91)
    assert np.array_equal(grid_of(obs_p), window(platform.map, xc, zc))  # values[c] of row r == passable[xc-25+r, zc-25+c]
    assert not np.array_equal(grid_of(obs_p), grid_of(obs_h))
    rng = np.random.default_rng(1)
    for _ in range(60):
        act = int(rng.integers(8))
        _, obs_h, *_ = hero.step(act)
        _, obs_p, *_ = platform.step(act)
        xc, zc = hero_cell(platform)
        assert np.array_equal(grid_of(obs_p), window(platform.map, xc, zc))
        assert np.array_equal(grid_of(obs_h), window(hero.map, zc, xc))
        assert obs_p.frame_state == obs_h.frame_state and obs_p.game_info == obs_h.game_info  # only the window differs


def test_view_size_is_accepted_and_the_window_stays_51():
    env = realm.make_env(protocol="18")
    obs, _ = env.reset({"env_conf": {**env_conf()["env_conf"], "view_size": 10}})
    assert grid_of(obs).shape == (51, 51)


# ---- organs, chest counts ----------------------------------------------------------------------


def test_organs_are_the_ones_within_view():
    env = realm.make_env(protocol="18", seed=4)
    obs, _ = env.reset(env_conf(treasure_count=13))
    seen, hidden = 0, 0
    rng = np.random.default_rng(4)
    for _ in range(400):
        xc, zc = hero_cell(env)
        full = {o.config_id: o for o in env.env_info.frame_state.organs}
        assert len(full) == 14  # 13 chests and the buff
        visible = {i for i in full if max(abs(env.map.position_cells[i][0] - xc), abs(env.map.position_cells[i][1] - zc)) <= 25}
        served = {o.config_id: o for o in obs.frame_state.organs}
        assert set(served) == visible
        for i, organ in served.items():
            old = full[i]
            assert (organ.sub_type, organ.status, organ.pos.x, organ.pos.z, organ.cooldown) == (
                old.sub_type, old.status, old.pos.x, old.pos.z, old.cooldown)
        seen, hidden = seen + len(served), hidden + len(full) - len(served)
        _, obs, _, terminated, truncated, _ = env.step(int(rng.integers(8)))
        if terminated or truncated:
            break
    assert seen and hidden


def test_treasure_count_is_the_total_and_collected_count_grows():
    env = realm.make_env(protocol="18")
    obs, _ = env.reset(env_conf(treasure_random=False, treasure_id=[3, 9, 14], treasure_count=0))
    assert obs.game_info.treasure_count == 3 and obs.game_info.treasure_collected_count == 0
    for n, pid in enumerate([9, 14], start=1):
        env._place_hero(*env.map.positions[pid])
        _, obs, score, *_ = env.step(0)
        info = obs.game_info
        assert (info.treasure_count, info.treasure_collected_count, score.treasure_count) == (3, n, n)
        assert info.score == 100.0 * n and info.treasure_score == 100 * n and score.score == 100 * n
        chest = next(o for o in obs.frame_state.organs if o.config_id == pid)
        assert chest.sub_type == 1 and chest.status == 0  # the hero stands on it: in view, taken
    random = realm.make_env(protocol="18", seed=1)
    obs, _ = random.reset(env_conf(treasure_count=5, treasure_id=[2]))  # treasure_id is ignored when random
    assert obs.game_info.treasure_count == 5 == len(random.episode.treasure_id)


# ---- the same game as the 2024 env -----------------------------------------------------------


@pytest.mark.parametrize("rules", [{}, {"step_jitter": True, "flash_blocked": "nearest"}])
def test_same_seed_and_actions_play_the_same_game(rules):
    old, new = twins(seed=7, **rules)
    rng = np.random.default_rng(7)
    for episode in range(3):
        seed = 100 + episode
        old.reset({"diy": {"treasure_num": 6, "max_step": 300}}, seed=seed)
        new.reset(env_conf(treasure_count=6, max_step=300), seed=seed)
        assert new.episode == old.episode
        while not old.done:
            act = int(rng.integers(16))
            f24, o24, s24, t24, tr24, info = old.step(act)
            f18, o18, s18, t18, tr18, state = new.step(act)
            assert (f18, t18, tr18) == (f24, t24, tr24) and isinstance(state, State)
            assert new.hero_position == old.hero_position and new.steps == old.steps
            assert isinstance(s18, ScoreInfo) and type(s18.total_score) is int
            assert (s18.score, s18.total_score) == (int(s24.score), int(s24.total_score))
            assert (s18.treasure_count, s18.buff_count, s18.talent_count) == (s24.treasure_count, s24.buff_count, s24.talent_count)
            g, h, old_info = o18.game_info, o18.frame_state.heroes[0], info.game_info
            assert (g.score, g.total_score, g.step_no, g.pos.x, g.pos.z) == (
                old_info.score, old_info.total_score, old_info.step_no, old_info.pos.x, old_info.pos.z)
            old_hero = info.frame_state.heroes[0]
            assert (h.pos.x, h.pos.z, h.speed_up, h.talent.status, h.talent.cooldown) == (
                old_hero.pos.x, old_hero.pos.z, old_hero.speed_up, old_hero.talent.status, old_hero.talent.cooldown)
            assert o18.legal_act == o24.legal_act
        assert new.done


def test_a_won_episode_scores_spec_6():
    old = realm.make_env(seed=3)
    diy = {"start": 2, "end": 9, "treasure_random": 0, "treasure_id": [14, 11], "max_step": 1000}
    result = run_planner(old, {"diy": diy}, seed=3)
    assert result.won and result.chests == 2
    new = realm.make_env(protocol="18", seed=3)
    new.reset(env_conf(start=2, end=9, treasure_random=False, treasure_id=[14, 11], max_step=1000), seed=3)
    for n, act in enumerate(result.actions, start=1):
        frame_no, obs, score, terminated, truncated, _ = new.step(act)
        assert terminated == (n == len(result.actions)) and not truncated
    steps = len(result.actions)
    final = 150 + 0.2 * (1000 - steps) + 100 * 2
    assert frame_no == 1 + 3 * steps and obs.game_info.step_no == steps
    assert obs.game_info.total_score == pytest.approx(final) == result.total_score
    assert final != int(final) and score.total_score == int(final)  # int32 on the wire, as the adapter's int()
    assert obs.game_info.treasure_collected_count == 2 == score.treasure_count
    with pytest.raises(EpisodeOverError, match="reset"):
        new.step(0)


def test_step_outside_an_episode_raises():
    env = realm.make_env(protocol="18")
    with pytest.raises(EpisodeOverError, match="before step"):
        env.step(0)
    env.reset(env_conf(max_step=1))
    *_, truncated, _ = env.step(0)
    assert truncated and env.done and env.env_info.game_info.total_score == 0
    with pytest.raises(EpisodeOverError):
        env.step(0)
    env.reset(env_conf())
    with pytest.raises(ValueError, match="action 16 is invalid"):
        env.step(16)


# ---- usr_conf ---------------------------------------------------------------------------------


def without(key):
    conf = env_conf()
    del conf["env_conf"][key]
    return conf


@pytest.mark.parametrize("key", ["start", "end", "treasure_random", "treasure_count", "treasure_id", "talent_type", "max_step"])
def test_every_key_is_required(key):
    with pytest.raises(UsrConfError, match=f"missing {key!r}"):
        realm.make_env(protocol="18").reset(without(key))


@pytest.mark.parametrize(
    "usr_conf, key, allowed",
    [
        (env_conf(treasure_random=1), "treasure_random", "a bool"),
        (env_conf(treasure_random="true"), "treasure_random", "true or false"),
        (env_conf(start=2, end=2), "end", "equals start"),
        (env_conf(start=0), "start", "1..15"),
        (env_conf(start=2.0), "start", "not an int"),
        (env_conf(start=True), "start", "not an int"),
        (env_conf(end=np.int64(3)), "end", "not an int"),
        (env_conf(max_step=2001), "max_step", "1..2000"),
        (env_conf(max_step=0), "max_step", "1..2000"),
        (env_conf(treasure_count=14), "treasure_count", "0..13"),
        (env_conf(treasure_random=False, treasure_id=[2, 5]), "treasure_id", "2 is the start id"),
        (env_conf(treasure_random=False, treasure_id=[5, 1]), "treasure_id", "1 is the end id"),
        (env_conf(treasure_id=[3, 3]), "treasure_id", "ids repeat"),
        (env_conf(treasure_id=[16]), "treasure_id", "1..15"),
        (env_conf(treasure_id=[True]), "treasure_id", "1..15"),
        (env_conf(treasure_id=(3,)), "treasure_id", "not a list"),
        (env_conf(talent_type=2), "talent_type", "super flash"),
        (env_conf(view_size=0), "view_size", "51x51"),
    ],
)
def test_bad_values_name_the_key_and_what_is_allowed(usr_conf, key, allowed):
    with pytest.raises(UsrConfError) as err:
        realm.make_env(protocol="18").reset(usr_conf)
    assert f"[{key!r}]" in str(err.value) and allowed in str(err.value)


@pytest.mark.parametrize(
    "usr_conf, match",
    [
        ({"env_conf": {**env_conf()["env_conf"], "treasure_num": 3}}, "unknown key 'treasure_num'.*allowed keys: start"),
        ({"env_conf": {**env_conf()["env_conf"], "strat": 3}}, "'strat'.*did you mean 'start'"),
        ({"diy": {"start": 2}}, "unknown key 'diy' in usr_conf; allowed keys: env_conf.*2024"),
        ({**env_conf(), "diy": {}}, "unknown key 'diy'"),
        ({}, "needs the key 'env_conf'"),
        ({"env_conf": [1]}, r"usr_conf\['env_conf'\] must be a dict"),
        ([("env_conf", {})], "usr_conf must be a dict"),
    ],
)
def test_bad_shapes_name_the_key(usr_conf, match):
    with pytest.raises(UsrConfError, match=match):
        validate_env_conf(usr_conf)
    with pytest.raises(ValueError):
        realm.make_env(protocol="18").reset(usr_conf)


def test_env_conf_maps_onto_the_2024_episode():
    assert env_conf_to_diy(env_conf(treasure_count=3, treasure_id=[4])) == {
        "diy": {"start": 2, "end": 1, "max_step": 2000, "talent_type": 1, "treasure_random": 1, "treasure_num": 3}}
    fixed = env_conf(start=5, end=6, treasure_random=False, treasure_id=[9, 3], treasure_count=13, max_step=700)
    assert env_conf_to_diy(fixed)["diy"] == {"start": 5, "end": 6, "max_step": 700, "talent_type": 1, "treasure_random": 0, "treasure_id": [9, 3]}
    episode = parse_env_conf(fixed)
    assert (episode.start, episode.end, episode.treasure_id, episode.treasure_num, episode.max_step) == (5, 6, [3, 9], 2, 700)
    drawn = parse_env_conf(env_conf(treasure_count=7), np.random.default_rng(9))
    assert drawn == parse_usr_conf({"diy": {"treasure_num": 7}}, np.random.default_rng(9))
    assert realm.make_env(protocol="18").reset()[0].game_info.treasure_count == 8  # no usr_conf: the toml's defaults


def test_make_env_protocols():
    env = realm.make_env(protocol="18", map_window="platform", flash_blocked="nearest", step_jitter=True, seed=1)
    assert env.map_window == "platform" and env.flash_blocked == "nearest" and env.step_jitter
    assert env.map is realm.make_env().map and type(realm.make_env(protocol="2024")) is RealmEnv
    with pytest.raises(TypeError, match="map_window is a rule of protocol='18'"):
        realm.make_env(map_window="hero")
    with pytest.raises(ValueError, match=re.escape("allowed '2024' | '18'")):
        realm.make_env(protocol="2025")
    with pytest.raises(ValueError, match=re.escape("allowed hero | platform")):
        realm.make_env(protocol="18", map_window="centre")
    with pytest.raises(TypeError, match="did you mean 'map_window'"):
        realm.make_env(protocol="18", map_windw="hero")


# ---- the official 18.0.2 package reads what is served ------------------------------------------

PREPROCESS = r"""
import dataclasses, json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2] + "/package", sys.argv[2] + "/platform"]
from agent_dqn.feature.preprocessor import Preprocessor
from arena_proto.back_to_the_realm import custom_pb2
from google.protobuf import json_format
import realm
from realm.back_to_the_realm.maps import cell_center

env = realm.make_env(protocol="18", seed=0)
far, _ = env.reset({"env_conf": {"start": 2, "end": 9, "treasure_random": False, "treasure_count": 0,
                                 "treasure_id": [14], "talent_type": 1, "max_step": 2000}})
field = env.map.distance_fields[9]
zc, xc = [int(v[0]) for v in (field == 8).nonzero()]
env._place_hero(*cell_center(xc, zc))
_, near, *_ = env.step(0)
out = {}
for name, obs in (("far", far), ("near", near)):
    wire = json_format.ParseDict(dataclasses.asdict(obs), custom_pb2.Observation())  # field names and int32s checked
    a, b = Preprocessor().process(obs), Preprocessor().process(wire)
    assert str(a[:10]) == str(b[:10]) and a[10:] == b[10:]
    out[name] = {"n": len(a), "maps": [len(m) for m in a[6:10]], "end_grid_distance": a[3].grid_distance,
                 "obstacle": a[6], "end_map": a[9], "counts": a[11:13],
                 "served": [v for row in obs.map_info for v in row.values]}
out["hero_cell"] = [int(c) for c in realm.back_to_the_realm.maps.cell_of(*env.hero_position)]
out["end_cell"] = [int(c) for c in env.map.position_cells[9]]
print(json.dumps(out))
"""


def has_protobuf() -> bool:
    try:
        return importlib.util.find_spec("google.protobuf") is not None
    except ModuleNotFoundError:  # no `google` package at all
        return False


def test_the_official_preprocessor_reads_the_served_observation():
    if not (KAIWU18 / "package").is_dir():
        pytest.skip(f"the 18.0.2 reference package is not at {KAIWU18}")
    if not has_protobuf():
        pytest.skip("protobuf is not installed (the platform's compiled protos need it)")
    run = subprocess.run([sys.executable, "-c", PREPROCESS, str(REPO_ROOT), str(KAIWU18)],
                         capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    for name in ("far", "near"):
        assert out[name]["n"] == 13 and out[name]["maps"] == [51 * 51] * 4
        assert out[name]["obstacle"] == out[name]["served"]
    assert out["far"]["end_grid_distance"] == -1  # the end is out of view at the start
    assert out["near"]["end_grid_distance"] > 0
    assert out["near"]["counts"] == [0, 1]  # (treasure_collected_count, treasure_count)
    (xc, zc), (ex, ez) = out["hero_cell"], out["end_cell"]
    end_index = (25 + ez - zc) * 51 + (25 + ex - xc)  # the hero frame: row = zc offset, column = xc offset
    assert out["near"]["end_map"][end_index] == 1 and out["near"]["obstacle"][end_index] == 1
