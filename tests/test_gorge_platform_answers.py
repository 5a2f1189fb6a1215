"""gorge_chase answers as the platform does: a bad usr_conf, or a step after the episode's end,
reaches a hosted package as the platform's error env_obs (observation None, extra_info.result_code
< 0, truncated True), which the official workflow's disaster recovery meets; `[env] gorge_errors =
"raise"` raises as before. And the smaller points of fidelity: each env_obs owns its dicts,
total_treasure / total_buff are the configured counts, a monster sub-step without a candidate
follows the script's path."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import games
from realm import make_env
from realm.gorge_chase import EpisodeOverError, GorgeChaseEnv, GorgeMap, GorgeUsrConfError
from tests.official_packages import KAIWU_GORGE, tool
from tests.test_gorge_env import FAR, open_field
from workflow import platforms
from workflow.config import ConfigError, EnvConfig, load_config
from workflow.platforms.v15 import PLATFORM_ROOT

BAD_MAX_STEP = {"env_conf": {"max_step": 0}}
needs_package = pytest.mark.skipif(not KAIWU_GORGE.is_dir(), reason=f"the official package is not at {KAIWU_GORGE}")


def hosted_env(**env_keys):
    """The env a 15.0.1 package is handed: realm.make_env with the platform's kwargs of [env]."""
    return make_env(**EnvConfig.for_game(games.GORGE_CHASE, env_keys).make_kwargs(platforms.get("15")), seed=0)


def disaster_recovery():
    sys.path.insert(0, str(PLATFORM_ROOT))
    try:
        from common_python.utils.workflow_disaster_recovery import handle_disaster_recovery
    finally:
        sys.path.remove(str(PLATFORM_ROOT))
    return handle_disaster_recovery


class Log:
    def __init__(self):
        self.errors = []

    def error(self, message):
        self.errors.append(message)


def assert_error_env_obs(env_obs, code: int, *named: str) -> None:
    assert env_obs["observation"] is None and env_obs["truncated"] is True and env_obs["terminated"] is False
    assert set(env_obs) == {"env_id", "frame_no", "observation", "extra_info", "terminated", "truncated"}
    extra = env_obs["extra_info"]
    assert extra["result_code"] == code and extra["frame_state"] is None
    for text in named:
        assert text in extra["result_message"], extra["result_message"]


# ---- errors --------------------------------------------------------------------------------------


def test_a_bad_usr_conf_reaches_a_hosted_package_as_the_platforms_error_env_obs(capsys, monkeypatch):
    from realm import answered_errors

    monkeypatch.setattr(answered_errors, "_SAID", {})  # said once per process: other tests may have said it
    env = hosted_env()
    env_obs = env.reset(BAD_MAX_STEP)
    assert_error_env_obs(env_obs, -101, "'max_step'", "= 0", "allowed an int in 1..2000")
    assert env_obs["frame_no"] == 0 and env_obs["env_id"] == env.env_id
    assert "result_code -101" in capsys.readouterr().err  # on the terminal too, naming the key
    log = Log()
    assert disaster_recovery()(env_obs, log) and "-101" in log.errors[0]
    env_reward, env_obs = env.step(0)  # no episode after a failed reset
    assert env_reward == {"env_id": env.env_id, "frame_no": 0, "reward": 0.0}
    assert_error_env_obs(env_obs, -201, "step() called before reset()")
    assert_error_env_obs(env.reset({"env_conf": {"max_stp": 5}}), -100, "'max_stp'", "did you mean 'max_step'")
    assert_error_env_obs(env.reset({"env_conf": {"map": [0]}}), -101, "'map'", "0 is not a map id")

    env_obs = env.reset({"env_conf": {"max_step": 2}})  # a good reset plays as ever
    assert env_obs["extra_info"]["result_code"] == 0 and env.answered_error is None
    assert not disaster_recovery()(env_obs, log)
    env.step(0)
    _, env_obs = env.step(0)
    assert env_obs["truncated"] and env_obs["observation"]["step_no"] == 2
    env_reward, env_obs = env.step(0)  # after the end
    assert_error_env_obs(env_obs, -201, "the episode is over")
    assert env_obs["frame_no"] == env_reward["frame_no"] == 2 and env_reward["reward"] == 0.0
    assert env_obs["extra_info"]["map_id"] == env.map_id
    assert isinstance(env.answered_error, EpisodeOverError)


def test_gorge_errors_raise_raises_as_before():
    env = hosted_env(gorge_errors="raise")
    with pytest.raises(GorgeUsrConfError, match="'max_step'.*allowed an int in 1..2000"):
        env.reset(BAD_MAX_STEP)
    with pytest.raises(EpisodeOverError):
        env.step(0)
    with pytest.raises(ValueError, match="errors = 'log' is invalid: allowed 'raise'"):
        GorgeChaseEnv(open_field(), errors="log")
    with pytest.raises(ConfigError, match="gorge_errors"):
        load_config("conf/gorge_chase.toml", ['env.gorge_errors="log"'])


def test_the_checks_before_a_run_still_refuse_what_the_hosted_env_answers():
    assert hosted_env().reset(BAD_MAX_STEP)["extra_info"]["result_code"] == -101
    from workflow.launcher import check_evaluation

    cfg = load_config("conf/gorge_chase.toml", ["eval.every_train_steps=5", "eval.usr_conf={env_conf={max_step=0}}"])
    assert cfg.env.rules.gorge_errors == "env_obs"
    with pytest.raises(ConfigError, match=r"\[eval\].*'max_step'"):
        check_evaluation(cfg)


def test_answered_errors_count_as_env_errors_not_as_steps_or_episodes():
    from workflow.host.platform_env import LoopStats, PlatformEnv

    sent = []
    stats = LoopStats()
    env = PlatformEnv(hosted_env(), stats, type("Telemetry", (), {"send": lambda self, *a: sent.append(a)})(),
                      lambda: False, platforms.get("15"))
    env.reset(BAD_MAX_STEP)
    env.step(0)
    assert (stats.env_errors, stats.env_steps, stats.episodes, sent) == (2, 0, 0, [])
    env.reset({"env_conf": {"max_step": 1}})
    env.step(0)
    assert (stats.env_errors, stats.env_steps, stats.episodes, len(sent)) == (2, 1, 1, 1)


OFFICIAL_LOOP = r"""
import json, sys
sys.dont_write_bytecode = True  # the package is read-only
package, platform_root, kaiwu_base = sys.argv[1:4]
from realm import make_env
import games
from workflow import platforms
from workflow.config import EnvConfig
sys.path[:0] = [package, platform_root, kaiwu_base]
from agent_ppo.workflow.train_workflow import EpisodeRunner


class Stop(Exception):
    pass


class Log:
    def __init__(self):
        self.errors = []

    def error(self, message):
        self.errors.append(message)

    def info(self, message):
        pass


env = make_env(**EnvConfig.for_game(games.GORGE_CHASE).make_kwargs(platforms.get("15")), seed=0)
answers = []


class ThirdResetStops:
    def reset(self, usr_conf):
        if len(answers) == 2:
            raise Stop()
        answers.append(env.reset(usr_conf))
        return answers[-1]


log = Log()
runner = EpisodeRunner(env=ThirdResetStops(), agent=None, usr_conf={"env_conf": {"max_step": 0}}, logger=log,
                       monitor=None)
try:
    next(runner.run_episodes())
except Stop:
    pass
print(json.dumps({"answers": answers, "logged": log.errors}))
"""


@needs_package
def test_the_official_workflow_drops_the_failed_episode_and_resets_again():
    """The official ppo's EpisodeRunner meets the error env_obs with handle_disaster_recovery and
    resets again (the platform's loop), where a raise would end its workflow."""
    from tests.conftest import REPO_ROOT

    result = tool("-c", OFFICIAL_LOOP, str(KAIWU_GORGE), str(PLATFORM_ROOT), str(REPO_ROOT / "kaiwu_platform" / "base"))
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(out["answers"]) == 2
    for env_obs in out["answers"]:
        assert_error_env_obs(env_obs, -101, "'max_step'")
    assert len(out["logged"]) == 2 and all("-101" in line for line in out["logged"])
    assert "result_code -101" in result.stderr and "'max_step'" in result.stderr


# ---- fidelity --------------------------------------------------------------------------------------


def test_each_env_obs_owns_its_organ_dicts():
    env = GorgeChaseEnv(open_field(), seed=0)
    env.reset({"env_conf": {"monster_interval": -2}})
    env.place(hero=(50, 50), monsters=[FAR], treasures=[(55, 50)], buffs=[(50, 55)])
    _, first = env.step(4)  # W: the chest stays east, the buff south-east, in the same distance bucket
    seen, every = first["observation"]["frame_state"]["organs"], first["extra_info"]["frame_state"]["organs"]
    assert len(seen) == len(every) == 2
    for organ in seen:  # a package that edits what it is given
        organ["status"] = 7
        organ["pos"]["x"] = -9
    assert all(o["status"] == 1 and o["pos"]["x"] in (55, 50) for o in every)
    _, second = env.step(4)
    for organs in (second["observation"]["frame_state"]["organs"], second["extra_info"]["frame_state"]["organs"]):
        assert [(o["status"], o["pos"]) for o in organs] == [(1, {"x": 55, "z": 50}), (1, {"x": 50, "z": 55})]


def test_total_treasure_and_total_buff_are_the_configured_counts():
    """The script's total_treasures is treasure_count as configured, whatever could be placed:
    on a map whose road lies outside the chests' x, z range 5..123 none is."""
    grid = np.zeros((128, 128), dtype=bool)
    grid[:, 0:5] = True
    env = GorgeChaseEnv(GorgeMap(grid, "edge strip"), seed=0)
    env_obs = env.reset({"env_conf": {"treasure_count": 7, "buff_count": 2}})
    info = env_obs["observation"]["env_info"]
    assert (env.treasures, env.buffs, info["treasure_id"]) == ([], [], [])
    assert (info["total_treasure"], info["total_buff"]) == (7, 2)
    info = env.place(treasures=[(2, 20), (2, 40)])["observation"]["env_info"]  # an arranged scenario: what it holds
    assert (info["total_treasure"], info["total_buff"], info["treasure_id"]) == (2, 2, [1, 2])


def test_a_monster_sub_step_without_a_candidate_follows_its_path():
    """bfs8: monster 1's only orthogonal way out is held by monster 2, its 8-connected path to
    the hero leaves diagonally: the script moves it to the path's next cell."""
    walls = [(49, 50), (50, 49), (50, 51), (61, 40)]  # (61, 40): the hero's move east fails, it stays
    env = GorgeChaseEnv(open_field(walls), seed=0, monster_distance="bfs8")
    env.reset({"env_conf": {"monster_interval": -2}})
    env.place(hero=(60, 40), monsters=[(50, 50), (51, 50)], treasures=[], buffs=[])
    game_map = env.map
    path = game_map.shortest_path(50 * 128 + 50, 40 * 128 + 60, "bfs8")
    assert path[0] == 50 * 128 + 50 and path[1] == 49 * 128 + 51 and path[-1] == 40 * 128 + 60
    assert len(path) == 11
    env.step(0)
    first = env.monsters[0]
    assert (env.hero_x, env.hero_z) == (60, 40)
    assert (first.x, first.z, first.prev, first.last_axis) == (51, 49, 50 * 128 + 50, 0)
