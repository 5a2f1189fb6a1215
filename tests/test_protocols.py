"""The wire protocols (episodes.protocol): each protocol's reset and step decoded once, into one
StepOutcome whose terminated / truncated / won / lost mean the same in every game, and read alike
by the episode runner (episodes.runner) and the training system's host
(workflow.host.platform_env), on real episodes of the simulators: a win, a time-out, a capture."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

import pytest

from episodes.protocol import GORGE, PROTOCOLS, REALM_18, REALM_2024, V2, EnvProtocol, env_protocol
from episodes.runner import EpisodeRunner
from realm import make_env
from workflow import platforms
from workflow.host.platform_env import LoopStats, PlatformEnv
from workflow.platforms.v18 import env_conf_of

#: the 2024 game's episode: three fixed chests (no draw), so every fresh env plays the same one
REALM_EPISODE = {"diy": {"start": 2, "end": 1, "treasure_random": 0, "treasure_id": [3, 4, 5], "max_step": 2000,
                         "talent_type": 1}}


def with_max_step(usr_conf: dict, max_step: int) -> dict:
    """A copy of `usr_conf` (any game's) with its max_step set."""
    usr_conf = copy.deepcopy(usr_conf)
    table = next(iter(usr_conf.values()))
    inner = table[table["map_name"]] if "map_name" in table else table
    inner["max_step"] = max_step
    return usr_conf


def realm_win() -> list[int]:
    """The planner's actions that reach the end of REALM_EPISODE on generated map 3."""
    from realm.back_to_the_realm.reference import run_planner

    result = run_planner(make_env(map_seed=3, seed=0), REALM_EPISODE, seed=0)
    assert result.won
    return result.actions


def v2_episode(max_step: int | None = None) -> dict:
    from realm.back_to_the_realm_v2.usr_conf import default_usr_conf

    usr_conf = default_usr_conf("map_cherry")
    return with_max_step(usr_conf, max_step) if max_step is not None else usr_conf


def v2_win() -> list[int]:
    """The v2 planner's actions that reach the end of map_cherry's default episode (env seed 1)."""
    from realm.back_to_the_realm_v2.reference import run_planner_v2

    result = run_planner_v2(make_env(protocol="v2", seed=1), v2_episode())
    assert result.won
    return result.actions


def gorge_capture() -> list[int]:
    """East and west in turn until the monster catches the hero (env seed 0)."""
    env = make_env(protocol="gorge", seed=0)
    env_obs, actions = env.reset(None), []
    while not (env_obs["terminated"] or env_obs["truncated"]):
        actions.append(4 * (len(actions) % 2))
        _, env_obs = env.step(actions[-1])
    assert env_obs["terminated"], "the hero outran the monster: pick another dance"
    return actions


@dataclass
class Episode:
    """One real episode: the platform version whose packages meet the env, a fresh env, the
    usr_conf and the actions, and how it ends."""

    version: str
    env: Callable[[], object]
    usr_conf: dict
    actions: Callable[[], list[int]]
    ended_by: str  # "terminated" | "truncated"
    won: bool


EPISODES = {
    "2024 win": Episode("2024", lambda: make_env(map_seed=3, seed=0), REALM_EPISODE, realm_win, "terminated", True),
    "2024 time-out": Episode("2024", lambda: make_env(map_seed=3, seed=0), with_max_step(REALM_EPISODE, 5),
                             lambda: [0] * 5, "truncated", False),
    "18 win": Episode("18", lambda: make_env(map_seed=3, seed=0, protocol="18"), env_conf_of(REALM_EPISODE),
                      realm_win, "terminated", True),
    "18 time-out": Episode("18", lambda: make_env(map_seed=3, seed=0, protocol="18"),
                           with_max_step(env_conf_of(REALM_EPISODE), 5), lambda: [0] * 5, "truncated", False),
    "v2 win": Episode("v2-28", lambda: make_env(protocol="v2", seed=1), v2_episode(), v2_win, "terminated", True),
    "v2 time-out": Episode("v2-24", lambda: make_env(protocol="v2", seed=1), v2_episode(max_step=5),
                           lambda: [0] * 5, "truncated", False),
    "gorge capture": Episode("15", lambda: make_env(protocol="gorge", seed=0), {"env_conf": {}}, gorge_capture,
                             "terminated", False),
    "gorge survival (its win)": Episode("15", lambda: make_env(protocol="gorge", seed=0),
                                        {"env_conf": {"max_step": 5}}, lambda: [0, 4] * 2 + [0], "truncated", True),
}


def protocol_of(episode: Episode) -> EnvProtocol:
    return env_protocol(None, platforms.get(episode.version).env_protocol)


def decoded(episode: Episode, actions: list[int]):
    protocol, env = protocol_of(episode), episode.env()
    reset = protocol.reset(env.reset(usr_conf=episode.usr_conf))
    return reset, [protocol.step(env.step(act)) for act in actions]


@pytest.mark.parametrize("name", EPISODES)
def test_every_protocol_decodes_an_episode_to_one_meaning_of_its_end(name):
    episode = EPISODES[name]
    actions = episode.actions()
    reset, outcomes = decoded(episode, actions)
    assert reset.obs is not None
    *before, last = outcomes
    assert not any(o.ended or o.won or o.lost for o in before)
    assert (last.terminated, last.truncated) == (episode.ended_by == "terminated", episode.ended_by == "truncated")
    assert (last.won, last.lost, last.ended) == (episode.won, not episode.won, True)
    assert last.score.total_score == pytest.approx(float(last.score.total_score))  # the 2024 ScoreInfo's names
    assert {"treasure_count", "buff_count", "talent_count"} <= set(dir(last.score))
    if episode.ended_by == "truncated" and protocol_of(episode).won_by == "terminated":
        assert last.score.total_score == 0.0  # a realm game's time-out scores nothing


@pytest.mark.parametrize("name", EPISODES)
def test_the_runner_and_the_host_report_the_episode_as_the_protocol_decodes_it(name):
    episode = EPISODES[name]
    actions = episode.actions()
    _, outcomes = decoded(episode, actions)
    version = platforms.get(episode.version)

    remaining = iter(actions)
    runner = EpisodeRunner([episode.env()], lambda batch: [next(remaining) for _ in batch], lambda obs, info: None,
                           int, kaiwu_version=version.env_protocol)
    stats, played = runner.play(episode.usr_conf)

    reports = []
    telemetry = type("Telemetry", (), {"send": lambda self, kind, report: reports.append((kind, report))})()
    loop = LoopStats()
    host = PlatformEnv(episode.env(), loop, telemetry, lambda: False, version)
    host.reset(episode.usr_conf)
    for act in actions:
        host.step(act)

    assert played == actions
    assert stats.win is outcomes[-1].won and stats.steps == len(actions)
    assert (loop.episodes, loop.env_steps) == (1, len(actions))
    ((kind, report),) = reports
    assert kind == "episode" and report == stats.report()


def test_each_protocol_names_its_win_once_and_the_names_of_a_version_agree():
    assert (REALM_2024.won_by, REALM_18.won_by, V2.won_by, GORGE.won_by) == (
        "terminated", "terminated", "terminated", "truncated")
    assert PROTOCOLS["v2-24"] is PROTOCOLS["v2-28"] is PROTOCOLS["v2"] is V2
    assert PROTOCOLS["15"] is PROTOCOLS["gorge"] is GORGE
    for version in platforms.VERSIONS.values():  # every platform version's env protocol has its decoder
        assert env_protocol(None, version.env_protocol) is PROTOCOLS[version.env_protocol]
    with pytest.raises(ValueError, match="won_by = 'caught' is invalid: allowed terminated | truncated"):
        EnvProtocol("x", REALM_2024.reads_reset, REALM_2024.reads_step, won_by="caught")


def test_a_gorge_error_env_obs_is_no_observation_at_reset_and_an_error_at_a_step():
    env = make_env(protocol="gorge", seed=0, errors="env_obs")
    assert GORGE.reset(env.reset({"env_conf": {"max_step": 0}})).obs is None
    with pytest.raises(RuntimeError, match="result_code -201"):
        GORGE.step(env.step(0))
