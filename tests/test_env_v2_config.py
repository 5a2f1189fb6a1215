"""The run's [env] for back_to_the_realm_v2: its map files and the rule options docs/games/back_to_the_realm_v2.md
names, set through the config (conf/back_to_the_realm_v2.toml, `--set env.<key>=...`) and checked
through the real launcher and the real simulator."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from workflow import platforms

V2_CONF = REPO_ROOT / "conf" / "back_to_the_realm_v2.toml"


def launch(run_dir: Path, *sets: str, config: str = "conf/back_to_the_realm_v2.toml", timeout_s: float = 120,
           extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """./train.sh with `--set` for each of `sets` (one run of one train step)."""
    cmd = ["./train.sh", "--config", config, "--set", f'app.run_dir="{run_dir}"', "--set", 'app.run_name="r"',
           "--set", "app.max_train_steps=1", *extra]
    for line in sets:
        cmd += ["--set", line]
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout_s)


def open_map(flags_value=1) -> list:
    """An all-passable 128×128 map's Flags (walls on the border)."""
    flags = [flags_value] * (128 * 128)
    for i in range(128):
        for j in (0, 127):
            flags[j * 128 + i] = flags[i * 128 + j] = 0
    return flags


def write_map(tmp_path: Path, flags, name: str = "map_cherry.json") -> tuple[Path, Path]:
    map_file, obstacles = tmp_path / name, tmp_path / "obstacles.json"
    map_file.write_text(json.dumps({"Flags": flags}), encoding="utf-8")
    obstacles.write_text(json.dumps({"1": [[30, 10], [31, 10]]}), encoding="utf-8")
    return map_file, obstacles


# --- map files ---------------------------------------------------------------------------------

def not_utf8(tmp_path: Path) -> tuple[Path, Path]:
    map_file, obstacles = write_map(tmp_path, open_map())
    map_file.write_bytes(b"\xff\xfe" + map_file.read_bytes())
    return map_file, obstacles


def flags_of_sevens_and_strings(tmp_path: Path) -> tuple[Path, Path]:
    flags = open_map()
    flags[10 * 128 + 30] = 7  # under obstacle 1
    flags[10 * 128 + 31] = 7
    flags[200] = "1"
    return write_map(tmp_path, flags)


@pytest.mark.parametrize("make, named", [
    (not_utf8, "is not UTF-8 text (byte 0xff at offset 0)"),
    (flags_of_sevens_and_strings, "Flags must hold 0 (blocked) or 1 (passable) only; found '1' (1 cell, first "
                                  "Flags[200]), 7 (2 cells, first Flags[1310])"),
], ids=["not-utf8", "flags-not-0-or-1"])
def test_a_bad_v2_map_file_stops_the_launcher_naming_the_file_and_what_is_wrong(tmp_path, make, named):
    map_file, obstacles = make(tmp_path)
    result = launch(tmp_path / "runs", f'env.map_file="{map_file}"', f'env.obstacles_file="{obstacles}"')
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"map file {map_file}" in result.stderr and named in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "runs").exists()


def test_a_bad_v2_map_file_stops_a_package_run_the_same_way(tmp_path):
    """A package's train_env_conf.toml is checked on the run's map: the map's fault is [env]'s."""
    from tests.official_packages import train
    from tests.test_kaiwu_v2_package import copy_package

    package = copy_package(tmp_path, "28.1.1")
    map_file, obstacles = flags_of_sevens_and_strings(tmp_path)
    result = train(package, tmp_path / "runs", "--set", f'env.map_file="{map_file}"',
                   "--set", f'env.obstacles_file="{obstacles}"', timeout_s=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"[env]: the simulator rejects it: map file {map_file}: Flags must hold 0" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "runs").exists()


# --- rule options --------------------------------------------------------------------------------

E, W = 0, 4
TALENT_E = 8
START, CHEST, BUFF, END = [20, 20], [21, 20], [22, 20], [55, 20]  # the end 35 cells east, out of view


def open_usr_conf() -> dict:
    table = {"start": START, "end": END, "buff": BUFF, "start_random": False, "end_random": False,
             "buff_random": False, "buff_cooldown": 100, "talent_cooldown": 100, "treasure_random": False,
             "treasure_count": 1, "treasure_pos": [CHEST], "obstacle_random": False, "obstacle_id": [], "max_step": 1000}
    return {"env_conf": {"map_name": "map_cherry", "map_cherry": table}}


def env_from_config(tmp_path: Path, *sets: str):
    """The v2 env a run builds from conf/back_to_the_realm_v2.toml with `--set` lines, on an open map."""
    from realm import make_env
    from workflow.config import load_config

    map_file, obstacles = write_map(tmp_path, open_map())
    cfg = load_config(V2_CONF,
                      [f'env.map_file="{map_file}"', f'env.obstacles_file="{obstacles}"', *sets])
    return make_env(**cfg.env.make_kwargs(platforms.get("v2-28")), seed=0)


def play(env, *acts):
    """(obs, extra_info) after reset and `acts`."""
    obs, info = env.reset(usr_conf=open_usr_conf())
    for act in acts:
        _, obs, _, _, info = env.step(act)
    return obs, info


def chest_organ(obs) -> dict:
    return next(o for o in obs["frame_state"]["organs"] if o["sub_type"] == 1)


def end_organ(obs) -> dict:
    return next(o for o in obs["frame_state"]["organs"] if o["sub_type"] == 4)


def hero_x(env, *acts) -> int:
    play(env, *acts)
    return env.hero[0]


def stride_with_the_buff(env) -> int:
    """Cells one step east covers once the buff is taken (two plain steps reach it)."""
    return hero_x(env, E, E, E) - hero_x(env, E, E)


def chest_status_on_and_after_its_frame(env) -> list[int]:
    return [chest_organ(play(env, E)[0])["status"], chest_organ(play(env, E, W)[0])["status"]]


PROBES = {  # key: (value set, what the env shows, by default, when set)
    "step_length": (2, lambda env: hero_x(env, E), 21, 22),
    "buff_step_length": (3, stride_with_the_buff, 2, 3),
    "buff_duration": (7, lambda env: play(env, E, E)[0]["frame_state"]["heroes"][0]["buff_remain_time"], 50, 7),
    "distance_bands": ('"v1"', lambda env: end_organ(play(env)[0])["relative_pos"]["l2_distance"], "Small", "Large"),
    "talent_when_cooling": ('"stay"', lambda env: hero_x(env, TALENT_E, TALENT_E), 37, 36),
    "taken_chest_status": ('"taken_frame"', chest_status_on_and_after_its_frame, [0, 0], [0, -1]),
    "treasure_count_reads": ('"chests_plus_2"', lambda env: play(env)[1]["game_info"]["treasure_count"], 1, 3),
    "reveal_end_pos": ('"found"', lambda env: play(env)[1]["game_info"]["end_pos"], {"x": 55, "z": 20},
                       {"x": -1, "z": -1}),
    "view_size": (51, lambda env: view_and_end_status(env, *[E] * 8), (11, 11, -1), (51, 51, 1)),
}


def view_and_end_status(env, *acts) -> tuple[int, int, int]:
    """map_info's rows and values, and the end's status, once the hero is 21 cells from the end
    (in a 51×51 view, not in an 11×11 one)."""
    obs, _ = play(env, *acts)
    assert END[0] - env.hero[0] == 21
    return len(obs["map_info"]), len(obs["map_info"][0]["values"]), end_organ(obs)["status"]


def test_every_v2_rule_option_is_an_env_key_with_a_line_in_ppo_v2_toml():
    from realm.back_to_the_realm_v2.env import OPTIONS

    assert set(PROBES) == set(OPTIONS)
    text = V2_CONF.read_text(encoding="utf-8")
    for key in OPTIONS:
        assert f"\n{key} = " in text, key
        assert f"`{key}`" in (REPO_ROOT / "docs" / "games" / "back_to_the_realm_v2.md").read_text(encoding="utf-8"), key


@pytest.mark.parametrize("key", list(PROBES))
def test_a_v2_rule_set_through_the_config_changes_the_simulator_as_documented(tmp_path, key):
    value, probe, by_default, when_set = PROBES[key]
    assert probe(env_from_config(tmp_path)) == by_default
    assert probe(env_from_config(tmp_path, f"env.{key}={value}")) == when_set


@pytest.mark.parametrize("line, named", [
    ("env.step_length=3", "step_length = 3 is invalid: allowed 1 | 2"),
    ("env.buff_step_length=5", "buff_step_length = 5 is invalid: allowed 1 | 2 | 3 | 4"),
    ("env.buff_duration=0", "buff_duration = 0 is invalid: allowed 1..2000"),
    ("env.distance_bands=\"v2\"", "env.distance_bands: got 'v2', allowed: 'uniform20', 'v1'"),
    ("env.talent_when_cooling=\"wait\"", "env.talent_when_cooling: got 'wait'"),
    ("env.taken_chest_status=\"gone\"", "env.taken_chest_status: got 'gone', allowed: 'stays_0', 'taken_frame'"),
    ("env.treasure_count_reads=2", "env.treasure_count_reads: got 2"),
    ("env.view_size=12", "view_size = 12 is invalid: allowed 11, 13, ..., 51"),
    ("env.view_size=53", "view_size = 53 is invalid: allowed 11, 13, ..., 51"),
])
def test_a_v2_rule_out_of_its_range_is_refused_naming_the_key(line, named):
    from workflow.config import ConfigError, load_config

    with pytest.raises(ConfigError) as refused:
        load_config(V2_CONF, [line])
    assert named in str(refused.value)


def test_buff_step_length_below_step_length_is_refused():
    from workflow.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=r"env: buff_step_length = 1 is invalid: allowed 2..4 \(at least step_length\)"):
        load_config(V2_CONF, ["env.step_length=2", "env.buff_step_length=1"])


# --- a folder of official maps: the package's map_name picks its map ------------------------------------

def maps_folder(tmp_path: Path, *names: str) -> Path:
    """A folder of map files: an open map as `<name>.json` with `<name>_obstacles.json`, per name."""
    folder = tmp_path / "map_data"
    folder.mkdir()
    for name in names:
        (folder / f"{name}.json").write_text(json.dumps({"Flags": open_map()}), encoding="utf-8")
        (folder / f"{name}_obstacles.json").write_text(json.dumps({"1": [[30, 10], [31, 10]]}), encoding="utf-8")
    return folder


def usr_conf_of(map_name: str) -> dict:
    tree = open_usr_conf()
    tree["env_conf"] = {"map_name": map_name, map_name: tree["env_conf"]["map_cherry"]}
    return tree


def test_an_episode_plays_the_map_file_its_map_name_names_in_maps_dir(tmp_path):
    from realm import make_env
    from realm.back_to_the_realm_v2 import default_usr_conf
    from workflow.config import load_config

    folder = maps_folder(tmp_path, "map_fish")
    cfg = load_config(V2_CONF, [f'env.maps_dir="{folder}"'])
    env = make_env(**cfg.env.make_kwargs(platforms.get("v2-28")), seed=0)
    env.reset(usr_conf=usr_conf_of("map_fish"))
    assert (env.map.name, env.map.map_name, env.map_notes) == ("map_fish.json", "map_fish", [])
    assert env.map.num_passable == 126 * 126 and env.map.obstacles[1].tolist() == [[30, 10], [31, 10]]
    env.reset(usr_conf=default_usr_conf("map_cherry"))  # no map_cherry.json there: the stand-in, said once
    assert env.map.name == "generated-v2-map_cherry-0"
    assert env.map_notes == [f"[env] maps_dir {folder} has no map_cherry.json: episodes of map_name 'map_cherry' "
                             "play the generated map of map_seed 0 through map_cherry's official points instead"]
    env.reset(usr_conf=usr_conf_of("map_fish"))
    assert env.map.name == "map_fish.json" and len(env.map_notes) == 1
    with pytest.raises(Exception, match="maps_dir: not a folder"):
        load_config(V2_CONF, [f'env.maps_dir="{tmp_path / "none"}"'])


def test_a_map_name_without_a_file_in_maps_dir_is_said_on_stderr_once_per_process(tmp_path, capsys):
    """The env a package is handed says which map a map_name with no file plays, naming the folder
    and the generated map, once per process (every env of an aisrv plays the same names); its
    first episode too, when the env already stands on that name's stand-in."""
    from realm import make_env
    from realm.back_to_the_realm_v2 import default_usr_conf
    from workflow.config import load_config

    folder = maps_folder(tmp_path, "map_fish")
    cfg = load_config(V2_CONF, [f'env.maps_dir="{folder}"'])
    said = (f"warning: [env] maps_dir {folder} has no map_cherry.json: episodes of map_name 'map_cherry' play the "
            "generated map of map_seed 0 through map_cherry's official points instead")
    env = make_env(**cfg.env.make_kwargs(platforms.get("v2-28")), seed=0)
    assert env.map.map_name == "map_cherry"  # where it starts: the stand-in
    env.reset(usr_conf=default_usr_conf("map_cherry"))
    assert capsys.readouterr().err.count(said) == 1 and len(env.map_notes) == 1
    env.reset(usr_conf=usr_conf_of("map_fish"))
    env.reset(usr_conf=default_usr_conf("map_cherry"))
    other = make_env(**cfg.env.make_kwargs(platforms.get("v2-28")), seed=1)
    other.reset(usr_conf=default_usr_conf("map_cherry"))
    assert said not in capsys.readouterr().err and other.map_notes == env.map_notes


@pytest.mark.slow
def test_a_package_whose_map_name_has_no_file_in_maps_dir_is_told_which_map_plays(tmp_path):
    from tests.official_packages import train
    from tests.official_packages import KAIWU_V2 as SHARED_V2
    from tests.test_kaiwu_v2_package import copy_package

    fish = SHARED_V2 / "fragments" / "train_env_conf_24.0.2_map_fish.toml"
    if not fish.is_file():
        pytest.skip(f"{fish} not found")
    package = copy_package(tmp_path, "28.1.1")
    (package / "agent_dqn" / "conf" / "train_env_conf.toml").write_bytes(fish.read_bytes())
    folder = maps_folder(tmp_path, "map_cherry")
    result = train(package, tmp_path / "runs", "--train-test", "--set", f'env.maps_dir="{folder}"', timeout_s=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (f"warning: [env] maps_dir {folder} has no map_fish.json: episodes of map_name "
            "'map_fish' play the generated map of map_seed 0 through map_fish's official points instead") in result.stderr


# --- the open rules drawn per episode ---------------------------------------------------------------

def test_randomized_unknown_rules_draw_each_reading_per_episode_and_replay_by_seed(tmp_path):
    from realm.back_to_the_realm_v2.env import CANDIDATES

    env = env_from_config(tmp_path, "env.randomize_unknown_rules=true")
    seen = {name: set() for name in CANDIDATES}
    strides = set()
    for seed in range(40):
        env.reset(usr_conf=open_usr_conf(), seed=seed)
        for name in CANDIDATES:
            seen[name].add(env.options[name])
        assert env.buff_step_length >= env.step_length
        env.step(E)
        strides.add(env.hero[0] - START[0])
        *_, info = env.step(E)
        assert info["game_info"]["buff_duration"] == env.buff_duration
    assert seen == {name: set(readings) for name, readings in CANDIDATES.items()}
    assert strides == {1, 2}  # the simulator plays the drawn step_length
    options = [(env.reset(usr_conf=open_usr_conf(), seed=seed), env.options)[1] for seed in (3, 3)]
    assert options[0] == options[1]  # the same seed, the same rules
    fixed = env_from_config(tmp_path, "env.buff_duration=70")
    assert {(fixed.reset(usr_conf=open_usr_conf(), seed=s), fixed.buff_duration)[1] for s in range(10)} == {70}
