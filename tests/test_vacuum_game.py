"""robot_vacuum as a game of the toolkit (games/robot_vacuum.py, evaluation/robot_vacuum.py) on the
real simulator: its presets and usr_conf checks, its evaluation episodes, its [env] rule keys
building the env they name, the reference and a 13.0.1 checkpoint playing, the pictures and what
a recorded episode says of the world, and the registration an export writes."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pytest
import toml

import realm
from evaluation import robot_vacuum as vacuum_evaluation
from games.base import COMPASS, RenderOptions
from games.robot_vacuum import GAME, VacuumRules
from realm.robot_vacuum import RobotVacuumEnv, VacuumUsrConfError, default_usr_conf
from realm.robot_vacuum.constants import DIRECTION_NAMES, NUM_ACTIONS
from realm.robot_vacuum.maps import CELL_X, CELL_Z
from realm.robot_vacuum.options import OPTIONS
from realm.robot_vacuum.presets import PRESETS
from realm.robot_vacuum.reference import RandomPolicy, ReferencePolicy
from feature.robot_vacuum.curriculum import CurriculumConfig
from workflow import platforms
from workflow.config import ConfigError, EnvConfig

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO.parent / "shared" / "kaiwu_vacuum" / "package_13.0.1"
needs_package = pytest.mark.skipif(not PACKAGE.is_dir(), reason=f"the robot_vacuum package is not at {PACKAGE}")
HELDOUT = "vacuum-generated-heldout"  # generated maps 11-20: plays without the official map files
SHORT = {"env_conf": {"map": [12], "max_step": 60}}


def vacuum_env(**env_keys) -> RobotVacuumEnv:
    """The env of an [env] table of robot_vacuum's rule keys, as a run of a 13.0.1 package builds it."""
    return realm.make_env(**GAME.env_kwargs(EnvConfig.for_game(GAME, env_keys), platforms.get("13")), seed=0)


# --- presets and usr_conf ---------------------------------------------------------------------------

def test_the_presets_are_the_simulators_and_each_passes_the_usr_conf_check():
    assert GAME.presets() is PRESETS
    for name in PRESETS:
        GAME.check_usr_conf(GAME.preset(name))
    GAME.preset(HELDOUT)["env_conf"]["map"].append(99)
    assert GAME.preset(HELDOUT)["env_conf"]["map"] == list(range(11, 21))
    with pytest.raises(ValueError, match="unknown preset 'nope'; available: vacuum-open, vacuum-train"):
        GAME.preset("nope")


def test_a_preset_of_the_open_maps_needs_their_files():
    with pytest.raises(ValueError, match="preset vacuum-open plays the official open maps 1-10: give maps_folder"):
        GAME.check_preset_env("vacuum-open", {"map_seed": 0})
    GAME.check_preset_env("vacuum-open", {"maps_folder": "maps"})
    GAME.check_preset_env(HELDOUT, {"map_seed": 0})


@pytest.mark.parametrize("usr_conf, named", [
    ({"env_conf": {"robot_cnt": 2}}, "unknown key 'robot_cnt' in usr_conf\\['env_conf'\\].*did you mean 'robot_count'"),
    ({"env_conf": {"battery_max": 50}}, "\\['battery_max'\\] = 50 is invalid: allowed an int in 100..999"),
    ({"env_conf": {"map_random": 1}}, "\\['map_random'\\] = 1 is invalid: allowed true or false"),
    ({"env_conf": {"map": [0]}}, "\\['map'\\] = \\[0\\] is invalid \\(0 is not a map id\\)"),
    ({"envconf": {}}, "unknown key 'envconf' in usr_conf; allowed keys: env_conf"),
])
def test_a_bad_usr_conf_is_refused_naming_the_key(usr_conf, named):
    with pytest.raises(VacuumUsrConfError, match=named):
        GAME.check_usr_conf(usr_conf)


# --- evaluation episodes ----------------------------------------------------------------------------

def test_episodes_play_one_map_each_and_are_the_same_for_a_seed():
    usr_conf = GAME.preset(HELDOUT)
    episodes = GAME.episodes(vacuum_env(), usr_conf, 4, base_seed=7)
    assert [e.seed for e in episodes] == [7, 8, 9, 10] and [e.index for e in episodes] == [0, 1, 2, 3]
    assert [e.usr_conf["env_conf"]["map"] for e in episodes] == [[11], [12], [13], [14]]
    assert all(e.usr_conf["env_conf"]["map_random"] is False for e in episodes)
    assert usr_conf == PRESETS[HELDOUT]  # the preset's own usr_conf is left as it was
    assert GAME.episodes(vacuum_env(), usr_conf, 4, base_seed=7) == episodes

    drawn = {"env_conf": {**usr_conf["env_conf"], "map_random": True}}
    maps = [e.usr_conf["env_conf"]["map"] for e in GAME.episodes(vacuum_env(), drawn, 6, base_seed=3)]
    assert maps == [e.usr_conf["env_conf"]["map"] for e in GAME.episodes(vacuum_env(), drawn, 6, base_seed=3)]
    assert all(len(m) == 1 and m[0] in range(11, 21) for m in maps) and len({m[0] for m in maps}) > 1


def test_episodes_of_a_usr_conf_the_env_answers_with_an_error_env_obs_raise_it():
    env = vacuum_env()
    assert env.errors == "env_obs"  # the platform's answer, the [env] default
    with pytest.raises(VacuumUsrConfError, match="'charger_count'"):
        GAME.episodes(env, {"env_conf": {"charger_count": 5}}, 2)


def test_the_maps_line_names_the_generated_maps_the_episodes_play():
    line = GAME.maps_line(vacuum_env(), [GAME.preset(HELDOUT)])
    assert line.startswith("maps: generated maps of map_seed 0, ids 11-20")


# --- [env] rule keys --------------------------------------------------------------------------------

def test_the_rule_keys_are_the_simulators_options_with_its_defaults():
    names = {f.name for f in fields(VacuumRules)}
    assert names - {"vacuum_errors", "randomize_unknown_rules"} == set(OPTIONS)
    defaults = VacuumRules()
    assert {name: getattr(defaults, name) for name in OPTIONS} == {name: d for name, (d, _, _) in OPTIONS.items()}
    assert (defaults.vacuum_errors, defaults.randomize_unknown_rules) == ("env_obs", False)
    assert GAME.info_rule in names and GAME.env_rules is VacuumRules
    assert set(defaults.make_kwargs(platforms.get("13"))) <= set(RobotVacuumEnv.PROTOCOL_RULES)


@pytest.mark.parametrize("key, value, named", [
    ("npc_moves", "6dir", "option npc_moves = '6dir' is invalid: allowed '4dir' | '8dir'"),
    ("npc_tries", 0, "option npc_tries = 0 is invalid: allowed an int in 1..10"),
    ("vacuum_extra_info", "none", "option vacuum_extra_info = 'none' is invalid: allowed 'full' | 'withheld'"),
    ("vacuum_errors", "ignore", "vacuum_errors = 'ignore' is invalid: allowed 'env_obs'"),
])
def test_a_rule_out_of_its_readings_is_refused_naming_the_key(key, value, named):
    with pytest.raises(ValueError, match=named):
        VacuumRules(**{key: value}).validate()


def test_an_env_table_with_a_bad_rule_or_another_games_rule_is_refused_naming_it():
    with pytest.raises(ConfigError, match="option diagonal_rule = 'none' is invalid"):
        EnvConfig.for_game(GAME, {"diagonal_rule": "none"})
    with pytest.raises(ConfigError, match="gorge_errors is gorge_chase's rule; this run plays robot_vacuum"):
        EnvConfig.for_game(GAME, {"gorge_errors": "raise"})


def test_the_rule_keys_build_the_env_they_name():
    env = vacuum_env(npc_moves="8dir", charger_pos="centre", vacuum_extra_info="withheld", vacuum_errors="raise")
    assert (env.npc_moves, env.charger_pos, env.errors, env.randomize_rules) == ("8dir", "centre", "raise", False)
    env_obs = env.reset(SHORT, seed=1)
    assert set(env_obs["extra_info"]) == {"result_code", "result_message"}
    top_left = {env.map.chargers[i] for i in env.charger_sites}
    shown = {(o["pos"]["x"] - 1, o["pos"]["z"] - 1) for o in env_obs["observation"]["frame_state"]["organs"]}
    assert shown == top_left  # charger_pos "centre": each pos one cell in from the top-left
    with pytest.raises(VacuumUsrConfError):
        env.reset({"env_conf": {"robot_count": 0}})

    answering = vacuum_env()
    assert answering.reset({"env_conf": {"robot_count": 0}})["observation"] is None
    assert isinstance(answering.answered_error, VacuumUsrConfError)
    assert "frame_state" in answering.reset(SHORT, seed=1)["extra_info"]
    assert vacuum_env(randomize_unknown_rules=True).randomize_rules


# --- policies ---------------------------------------------------------------------------------------

def test_the_reference_plays_a_presets_episodes_scoring_the_same_each_time():
    def played():
        env = vacuum_env()
        return [GAME.reference_policy().play(env, e.usr_conf, e.seed)
                for e in GAME.episodes(env, GAME.preset(HELDOUT), 2, base_seed=3)]

    first, again = played(), played()
    assert [(r.total_score, r.actions) for r in first] == [(r.total_score, r.actions) for r in again]
    for record in first:
        assert 0 < record.total_score <= record.total_dirt and record.steps == len(record.actions) == 1000
        assert record.won and record.ended_by == "" and record.charges > 0
        assert (record.chests, record.chests_available, record.buff_count, record.flash_count) == (0, 0, 0, 0)
        row = record.to_row()
        assert row["total_score"] == record.total_score and json.loads(row["usr_conf"]) == record.usr_conf


def test_an_episode_that_ends_early_is_lost_and_says_how():
    env = vacuum_env()
    wanderer = RandomPolicy(seed=1)
    usr_conf = {"env_conf": {"map": [11], "battery_max": 100, "max_step": 2000}}
    record = vacuum_evaluation.play(env, usr_conf, 1, lambda env_obs: wanderer.act(env))
    assert not record.won and record.steps < 2000 and record.ended_by in ("battery", "collision")
    assert record.ended_by == env.fail_reason
    assert GAME.outcomes == ("survived", "failed")


def test_a_mode_the_game_does_not_evaluate_is_refused_naming_greedy():
    with pytest.raises(ValueError, match="policy mode 'sample': a robot_vacuum agent is evaluated with greedy"):
        GAME.agent_policy(None, name="agent", mode="sample")


AGENT_SCRIPT = """
import json, sys
sys.path[:0] = [{package!r}, {v13!r}, {base!r}]
from agent_ppo.agent import Agent
import realm
from evaluation.episodes import LoadedAgent
from evaluation.robot_vacuum import AgentPolicy
policy = AgentPolicy(LoadedAgent(Agent(device="cpu"), lambda env_obs: env_obs, int), name="official")
env = realm.make_env(protocol="vacuum", seed=0, errors="env_obs")
records = [policy.play(env, {usr_conf!r}, 2) for _ in range(2)]
print(json.dumps([[r.total_score, r.steps, r.won, r.actions] for r in records]))
"""


@needs_package
def test_a_13_checkpoint_plays_with_its_packages_own_exploit_on_the_raw_env_obs():
    """The official package's agent (its freshly seeded model) with its own reset and exploit, in
    a process of its own: every package names its modules alike (agent_ppo)."""
    script = AGENT_SCRIPT.format(package=str(PACKAGE), v13=str(REPO / "kaiwu_platform" / "v13"),
                                 base=str(REPO / "kaiwu_platform" / "base"), usr_conf=SHORT)
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    first, again = json.loads(out.stdout.strip().splitlines()[-1])
    assert first == again  # the same episode, the same greedy actions
    score, steps, won, actions = first
    assert steps == len(actions) == 60 and won and all(a in range(len(COMPASS)) for a in actions)


# --- pictures and recordings ------------------------------------------------------------------------

def test_play_and_draw_draws_the_map_and_the_heros_views():
    env = vacuum_env()
    reference = GAME.reference_policy()
    drawn = GAME.render(env, reference, SHORT, 3, "reference", RenderOptions(scale=1, view_scale=1, max_frames=5))
    assert drawn.record.actions == reference.play(env, SHORT, 3).actions
    assert drawn.png.ndim == 3 and drawn.png.shape[2] == 3 and len(np.unique(drawn.png.reshape(-1, 3), axis=0)) > 4
    assert len(drawn.frames) == 5 and all(frame.shape == (63, 63, 3) for frame in drawn.frames)
    assert not GAME.render(env, reference, SHORT, 3, "", RenderOptions(gif=False)).frames


@pytest.mark.parametrize("charger_pos", ["top_left", "centre"])
def test_a_view_picture_marks_the_chargers_where_the_env_has_them(charger_pos):
    env = vacuum_env(charger_pos=charger_pos)
    env.reset(SHORT, seed=4)
    x0, z0 = env.map.chargers[env.charger_sites[0]]
    env_obs = env.place(hero=(x0 + 1, z0 + 1), npcs=[])  # on the charger's centre, no robot around
    anchor = 0 if charger_pos == "top_left" else 1
    picture = vacuum_evaluation.view_picture(env_obs, 1, anchor)
    green = {(x0 + 1 - 10 + i, z0 + 1 - 10 + j) for j, i in zip(*np.nonzero(
        (picture == np.array(vacuum_evaluation.CHARGER, np.uint8)).all(-1)))}
    in_view = {(x, z) for x in range(x0 - 9, x0 + 12) for z in range(z0 - 9, z0 + 12)
               if 0 <= x < 128 and 0 <= z < 128 and env.on_charger(z * 128 + x)}
    assert green == in_view - {(x0 + 1, z0 + 1)} and len(in_view) >= 9
    assert tuple(picture[10, 10]) == vacuum_evaluation.HERO


def test_the_recorded_world_and_state_have_the_map_the_chargers_the_robots_and_the_hero():
    env = vacuum_env()
    episode = GAME.episodes(env, GAME.preset(HELDOUT), 1, base_seed=2)[0]
    env_obs = env.reset(episode.usr_conf, seed=episode.seed)
    world = GAME.recorded_world(env)
    assert len(world["rows"]) == 128 and all(len(row) == 128 for row in world["rows"])
    assert all((world["rows"][z][x] == ".") == bool(env.map.walkable[z, x]) for z in range(0, 128, 7)
               for x in range(0, 128, 5))
    hero = env_obs["observation"]["frame_state"]["heroes"]["pos"]
    assert world["start"] == [hero["x"], hero["z"]] and world["map_name"] == env.map.name == "generated_11"
    assert world["chargers"] == [list(env.map.chargers[i]) for i in env.charger_sites] and len(world["chargers"]) == 4
    assert (world["chests"], world["buffs"], world["end"], world["z_up"], world["view_radius"]) == ([], [], None,
                                                                                                   False, 10)
    planner = ReferencePolicy(seed=episode.seed)
    for _ in range(30):
        _, env_obs = env.step(planner.act(env))
    state = GAME.recorded_state(env)
    hero = env_obs["observation"]["frame_state"]["heroes"]["pos"]
    assert state["hero"] == [hero["x"], hero["z"]] == [CELL_X[env.hero_cell], CELL_Z[env.hero_cell]]
    assert state["monsters"] == [[n["pos"]["x"], n["pos"]["z"]] for n in env_obs["extra_info"]["frame_state"]["npcs"]]
    assert state["battery"] == env_obs["observation"]["env_info"]["remaining_charge"]
    assert (state["chests"], state["buffs"]) == ([], [])


def test_the_game_acts_with_the_eight_moves_the_env_numbers():
    assert GAME.action_names == COMPASS == DIRECTION_NAMES and len(GAME.action_names) == NUM_ACTIONS


# --- export -----------------------------------------------------------------------------------------

@dataclass
class Settings:
    """What an export asks of the project's agent's settings: its [curriculum_vacuum]."""

    curriculum_vacuum: CurriculumConfig


def test_an_export_keeps_the_map_ids_the_platform_has_and_falls_back_to_the_official_settings():
    official = toml.loads((PACKAGE / "agent_ppo" / "conf" / "train_env_conf.toml").read_text(encoding="utf-8")) \
        if PACKAGE.is_dir() else default_usr_conf()
    usr_conf, comment = GAME.train_env_conf(object())
    assert usr_conf == official == default_usr_conf() and "official defaults" in comment
    for maps, kept in (([2, 21, 9], [2, 9]), ([21, 22], list(range(1, 11))), ([3], [3])):
        usr_conf, comment = GAME.train_env_conf(Settings(CurriculumConfig(map=maps, map_random=False)))
        assert usr_conf["env_conf"]["map"] == kept
        dropped = [m for m in maps if m > 10]
        assert (f"generated maps {dropped} exist only" in comment) == bool(dropped), comment


@needs_package
def test_the_registration_is_the_official_packages():
    files = GAME.registration_files(object(), "ppo", "agent_ppo")
    assert set(files) == {"agent_ppo/conf/train_env_conf.toml", "conf/algo_conf_robot_vacuum.toml",
                          "conf/app_conf_robot_vacuum.toml"}
    official_algo = toml.loads((PACKAGE / "conf" / "algo_conf_robot_vacuum.toml").read_text(encoding="utf-8"))
    official_app = toml.loads((PACKAGE / "conf" / "app_conf_robot_vacuum.toml").read_text(encoding="utf-8"))
    assert files["conf/algo_conf_robot_vacuum.toml"][1] == {"ppo": official_algo["ppo"]}
    assert files["conf/app_conf_robot_vacuum.toml"][1] == official_app
