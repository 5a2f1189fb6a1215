"""gorge_chase's open rules as a run's [env] keys (realm.gorge_chase.options.OPTIONS, the same
names), set through the config (conf/gorge_chase.toml, `--set env.<key>=...`) and handed by the
15.0.1 platform to realm.make_env: each changes the simulator as docs/games/gorge_chase.md says;
`randomize_unknown_rules` draws them per episode, reproducibly by seed; and the maps a run or an
evaluation plays are said on the terminal, the presets of the official maps refusing to play
without their folder."""
from __future__ import annotations

import json
import sys

import pytest

from realm import make_env
from realm.gorge_chase.constants import GRID_SIZE
from realm.gorge_chase.env import walk_path
from realm.gorge_chase.options import CANDIDATES, OPTIONS, options_table
from tests.conftest import REPO_ROOT, needs_gorge_maps
from workflow import platforms

GORGE_CONF = REPO_ROOT / "conf" / "gorge_chase.toml"
GRIDS = REPO_ROOT.parent / "shared" / "kaiwu_gorge" / "map" / "grids"
#: one monster, no items, map 1: the probes place the hero and the monster themselves
ONE_MONSTER = {"env_conf": {"map": [1], "monster_interval": -2, "treasure_count": 0, "buff_count": 0,
                            "max_step": 300}}


def env_from_config(*sets: str, seed: int = 0):
    """The gorge env a run builds from conf/gorge_chase.toml with `--set` lines (the 15.0.1 platform's env_kwargs),
    handing the full extra_info unless a line says otherwise: the probes read the truth in its frame_state."""
    from workflow.config import load_config

    cfg = load_config(GORGE_CONF, ['env.gorge_extra_info="full"', *sets])
    return make_env(**cfg.env.make_kwargs(platforms.get("15")), seed=seed)


def first_cell(env, test) -> tuple[int, int]:
    """The first road cell (x, z) of the env's map that passes test(walkable_flat, x, z)."""
    w = env.map.walkable_flat
    return next((c % GRID_SIZE, c // GRID_SIZE) for c in env.map.road_cells if test(w, c % GRID_SIZE, c // GRID_SIZE))


def stuck_direction(w, x: int, z: int) -> int | None:
    """An orthogonal move that enters no cell from (x, z): the hero stays while it plays it."""
    return next((d for d in (0, 2, 4, 6) if not walk_path(w, x, z, d, 1)), None)


def caught_at_distance(env) -> int:
    """The Chebyshev distance between the monster and a hero that never moves, when it is caught."""
    env.reset(ONE_MONSTER, seed=0)
    x, z = first_cell(env, lambda w, x, z: stuck_direction(w, x, z) is not None)
    env.place(hero=(x, z))
    direction = stuck_direction(env.map.walkable_flat, x, z)
    while True:
        _, env_obs = env.step(direction)
        if env_obs["terminated"] or env_obs["truncated"]:
            break
    assert env_obs["terminated"] and (env.hero_x, env.hero_z) == (x, z)
    monster = env.monsters[0]
    return max(abs(monster.x - x), abs(monster.z - z))


def cells_moved_east(env) -> int:
    """Cells one plain move east covers from a cell with four free cells east of it."""
    env.reset(ONE_MONSTER, seed=0)
    x, z = first_cell(env, lambda w, x, z: len(walk_path(w, x, z, 0, 4)) == 4)
    env.place(hero=(x, z))
    env.step(0)
    return env.hero_x - x


def one_corner_free(w, x: int, z: int) -> bool:
    """The NE cell is road and exactly one of the two orthogonal cells beside the step is."""
    if len(walk_path(w, x, z, 1, 1, "target_only")) != 1:
        return False
    return bool(w[z * GRID_SIZE + x + 1]) != bool(w[(z - 1) * GRID_SIZE + x])


def diagonal_step(env) -> tuple[int, int]:
    """(dx, dz) of a NE move past a corner with one orthogonal cell free."""
    env.reset(ONE_MONSTER, seed=0)
    x, z = first_cell(env, one_corner_free)
    env.place(hero=(x, z))
    env.step(1)
    return env.hero_x - x, env.hero_z - z


def _unique_best(scores: dict):
    best = min(scores.values())
    at = [n for n, s in scores.items() if s == best]
    return at[0] if len(at) == 1 else None


def metrics_disagree(game_map):
    """(hero cell, a direction that keeps it there, a monster cell 4..8 away whose single best
    orthogonal step toward the hero differs by path distance and by Manhattan distance)."""
    w, orth = game_map.walkable_flat, game_map.orthogonal_neighbours()
    for h in game_map.road_cells:
        hx, hz = h % GRID_SIZE, h // GRID_SIZE
        stay = stuck_direction(w, hx, hz)
        if stay is None:
            continue
        for dz in range(-8, 9):
            for dx in range(-8, 9):
                mx, mz = hx + dx, hz + dz
                if max(abs(dx), abs(dz)) < 4 or not (0 <= mx < GRID_SIZE and 0 <= mz < GRID_SIZE
                                                     and w[mz * GRID_SIZE + mx]):
                    continue
                near = [n for n, _ in orth[mz * GRID_SIZE + mx]]
                by_path = _unique_best({n: game_map.distance(n, h, "bfs4") for n in near})
                by_line = _unique_best({n: abs(n % GRID_SIZE - hx) + abs(n // GRID_SIZE - hz) for n in near})
                if by_path is not None and by_line is not None and by_path != by_line:
                    return (hx, hz), stay, (mx, mz)
    raise AssertionError("no cell where the two distances disagree")


def monster_first_step_is_by_path(env) -> bool:
    """Whether a monster's first step goes to its neighbour nearest the hero by path (True) or by
    the straight-line Manhattan distance (False), where the two disagree."""
    env.reset(ONE_MONSTER, seed=0)
    hero, stay, monster = metrics_disagree(env.map)
    env.place(hero=hero, monsters=[monster])
    env.step(stay)
    m, h = env.monsters[0], hero[1] * GRID_SIZE + hero[0]
    near = [n for n, _ in env.map.orthogonal_neighbours()[monster[1] * GRID_SIZE + monster[0]]]
    return m.z * GRID_SIZE + m.x == min(near, key=lambda n: env.map.distance(n, h, "bfs4"))


def map_of_second_episode(env) -> int:
    conf = {"env_conf": {**ONE_MONSTER["env_conf"], "map": [1, 2], "map_random": False}}
    env.reset(conf, seed=0)
    env.reset(conf)
    return env.map_id


def monster_interval_shown(env) -> int:
    conf = {"env_conf": {**ONE_MONSTER["env_conf"], "monster_interval": -1}}
    return env.reset(conf, seed=0)["observation"]["env_info"]["monster_interval"]


def monster_speed_in_frame_state(env) -> int:
    return env.reset(ONE_MONSTER, seed=0)["extra_info"]["frame_state"]["monsters"][0]["speed"]


def extra_info_keys(env) -> list:
    return sorted(env.reset(ONE_MONSTER, seed=0)["extra_info"])


PROBES = {  # key: (value set, what the env shows, by default, when set)
    "monster_distance": ('"manhattan"', monster_first_step_is_by_path, True, False),
    "map_order": ('"first"', map_of_second_episode, 2, 1),
    "random_values_in_env_info": ('"raw"', lambda env: monster_interval_shown(env) == -1, False, True),
    "diagonal_rule": ('"both_free"', diagonal_step, (1, -1), (0, 0)),
    "capture_radius": (2, caught_at_distance, 1, 2),
    "hero_move_bonus": (2, cells_moved_east, 1, 3),
    "monster_speed_bonus": (1, monster_speed_in_frame_state, 1, 2),
    "gorge_extra_info": ('"withheld"', extra_info_keys, ["frame_state", "map_id", "result_code", "result_message"],
                         ["result_code", "result_message"]),
}


def test_every_gorge_option_is_an_env_key_with_its_default_a_line_in_gorge_chase_toml_and_the_docs_table():
    from dataclasses import fields

    from games.gorge_chase import GorgeRules

    assert set(PROBES) == set(OPTIONS) == {f.name for f in fields(GorgeRules)} - {"gorge_errors", "randomize_unknown_rules"}
    defaults = GorgeRules()
    text = GORGE_CONF.read_text(encoding="utf-8")
    for key, (default, _, _) in OPTIONS.items():
        assert getattr(defaults, key) == default, key
        assert f"\n{key} = " in text, key
    assert options_table() in (REPO_ROOT / "docs" / "games" / "gorge_chase.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("key", list(PROBES))
def test_a_gorge_option_set_through_the_config_changes_the_simulator_as_documented(key):
    value, probe, by_default, when_set = PROBES[key]
    assert probe(env_from_config()) == by_default
    assert probe(env_from_config(f"env.{key}={value}")) == when_set


def test_the_other_readings_of_the_diagonal_and_capture_rules():
    assert diagonal_step(env_from_config('env.diagonal_rule="target_only"')) == (1, -1)
    assert caught_at_distance(env_from_config("env.capture_radius=0")) == 0


@pytest.mark.parametrize("line, named", [
    ('env.monster_distance="astar"', "option monster_distance = 'astar' is invalid: allowed 'bfs4' | 'bfs8'"),
    ('env.map_order="random"', "option map_order = 'random' is invalid: allowed 'cycle' | 'first'"),
    ('env.random_values_in_env_info="drawn"', "option random_values_in_env_info = 'drawn' is invalid"),
    ('env.diagonal_rule="none"', "option diagonal_rule = 'none' is invalid: allowed 'one_free' | 'both_free'"),
    ("env.capture_radius=3", "option capture_radius = 3 is invalid: allowed an int in 0..2"),
    ("env.hero_move_bonus=-1", "option hero_move_bonus = -1 is invalid: allowed an int in 0..3"),
    ("env.monster_speed_bonus=4", "option monster_speed_bonus = 4 is invalid: allowed an int in 0..3"),
    ('env.gorge_extra_info="none"', "option gorge_extra_info = 'none' is invalid: allowed 'full' | 'withheld'"),
])
def test_a_gorge_option_out_of_its_range_is_refused_naming_the_key(line, named):
    from workflow.config import ConfigError, load_config

    with pytest.raises(ConfigError) as refused:
        load_config(GORGE_CONF, [line])
    assert str(refused.value).startswith("env: ") and named in str(refused.value)


# --- randomize_unknown_rules ---------------------------------------------------------------------

def drawn_rules(env, episodes: int, seeds=None) -> list[dict]:
    """The rule options each of `episodes` resets played (reset seeds from `seeds`, else none)."""
    drawn = []
    for k in range(episodes):
        env.reset(ONE_MONSTER, seed=None if seeds is None else seeds[k])
        drawn.append(env.options)
    return drawn


def test_randomize_unknown_rules_draws_each_rule_per_episode_from_its_readings_reproducibly_by_seed():
    draws = drawn_rules(env_from_config("env.randomize_unknown_rules=true", seed=7), 40)
    for name, readings in CANDIDATES.items():
        assert {d[name] for d in draws} == set(readings), name  # every reading turns up, nothing else
    for name in set(OPTIONS) - set(CANDIDATES):  # map_order, gorge_extra_info: the config's value
        assert {d[name] for d in draws} == {OPTIONS[name][0]}, name
    assert drawn_rules(env_from_config("env.randomize_unknown_rules=true", seed=7), 40) == draws
    assert drawn_rules(env_from_config("env.randomize_unknown_rules=true", seed=8), 40) != draws
    seeded = env_from_config("env.randomize_unknown_rules=true", seed=0)
    assert drawn_rules(seeded, 6, seeds=[3] * 6) == [drawn_rules(seeded, 1, seeds=[3])[0]] * 6  # a reset seed replays
    assert drawn_rules(env_from_config(seed=7), 5) == [drawn_rules(env_from_config(seed=7), 1)[0]] * 5  # off: fixed


def test_a_drawn_rule_is_the_rule_the_episode_plays_and_leaves_the_spawns_as_they_were():
    randomized, plain = env_from_config("env.randomize_unknown_rules=true", seed=5), env_from_config(seed=5)
    speeds = set()
    for _ in range(12):
        drawn, fixed = randomized.reset(ONE_MONSTER)["extra_info"], plain.reset(ONE_MONSTER)["extra_info"]
        monster = drawn["frame_state"]["monsters"][0]
        assert monster["speed"] == 1 + randomized.monster_speed_bonus
        speeds.add(monster["speed"])
        assert drawn["frame_state"]["heroes"]["pos"] == fixed["frame_state"]["heroes"]["pos"]
        assert monster["pos"] == fixed["frame_state"]["monsters"][0]["pos"]
    assert speeds == {1, 2}


# --- which maps play -------------------------------------------------------------------------------

def gorge_run(*sets: str):
    from workflow.config import load_config

    return load_config(GORGE_CONF, ["curriculum_gorge.map=[1, 2, 3, 9]", *sets])


@needs_gorge_maps
def test_a_training_run_says_which_maps_it_plays(capsys):
    from workflow.launcher import check_episode_settings

    check_episode_settings(gorge_run())
    out = capsys.readouterr().out
    assert ("maps: generated maps of map_seed 0, ids 1-3, 9 (the simulator's own, not the official maps); "
            "the official map files: set [env] maps_dir\n") in out
    check_episode_settings(gorge_run("env.map_seed=4"))
    assert "maps: generated maps of map_seed 4, ids 1-3, 9 " in capsys.readouterr().out
    check_episode_settings(gorge_run(f'env.maps_dir="{GRIDS}"'))
    assert f"maps: the files in {GRIDS}: map_1.txt, map_2.txt, map_3.txt, map_9.txt\n" in capsys.readouterr().out


@needs_gorge_maps
def test_an_evaluation_says_which_maps_it_plays(tmp_path, capsys):
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate

    usr_conf = json.dumps({"env_conf": {"map": [2, 5], "max_step": 5}})
    assert evaluate.main(["--agent", "planner", "--usr-conf", usr_conf, "--config", str(GORGE_CONF), "--episodes", "2",
                          "--workers", "1", "--quiet", "--out", str(tmp_path / "out")]) == 0
    assert "maps: generated maps of map_seed 0, ids 2, 5 (the simulator's own" in capsys.readouterr().out
    config = tmp_path / "open_maps.toml"
    config.write_text(f'include = ["{GORGE_CONF}"]\n[env]\nmaps_dir = "{GRIDS}"\n')
    assert evaluate.main(["--agent", "planner", "--usr-conf", usr_conf, "--config", str(config), "--episodes", "2",
                          "--workers", "1", "--quiet", "--out", str(tmp_path / "out")]) == 0
    assert f"maps: the files in {GRIDS}: map_2.txt, map_5.txt\n" in capsys.readouterr().out


@pytest.mark.parametrize("preset", ["gorge-open", "gorge-train", "gorge-heldout"])
def test_the_presets_of_the_official_maps_refuse_to_play_without_maps_dir(preset, capsys):
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate
    import render

    assert evaluate.main(["--agent", "planner", "--preset", preset, "--episodes", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"preset {preset} plays the official open maps" in err and "set [env] maps_dir" in err
    assert render.main(["--agent", "planner", "--preset", preset, "--no-gif"]) == 2
    assert "set [env] maps_dir" in capsys.readouterr().err


@needs_gorge_maps
def test_a_run_evaluating_an_official_maps_preset_needs_maps_dir():
    from workflow.config import ConfigError
    from workflow.launcher import check_evaluation

    evaluating = ("eval.every_train_steps=10", 'eval.preset="gorge-heldout"')
    with pytest.raises(ConfigError, match=r"\[eval\]: preset gorge-heldout plays the official open maps 9-10: "
                                          r"set \[env\] maps_dir"):
        check_evaluation(gorge_run(*evaluating))
    check_evaluation(gorge_run(*evaluating, f'env.maps_dir="{GRIDS}"'))
    check_evaluation(gorge_run("eval.every_train_steps=10", 'eval.preset="gorge-generated-heldout"'))


@needs_gorge_maps
def test_generated_maps_say_their_ids_and_a_folder_its_files():
    from realm.gorge_chase.maps import id_ranges

    assert id_ranges([9, 1, 2, 3, 21, 22, 7]) == "1-3, 7, 9, 21-22"
    env = env_from_config("env.map_seed=2")
    assert env.describe_maps([]).startswith("maps: generated maps of map_seed 2, ids as the episodes name them")
    folder = env_from_config(f'env.maps_dir="{GRIDS}"')
    assert folder.describe_maps([10, 11]) == f"maps: the files in {GRIDS}: map_10.txt; no file for id 11"
    assert folder.describe_maps([]) == f"maps: the files in {GRIDS}: {', '.join(f'map_{i}.txt' for i in range(1, 11))}"

