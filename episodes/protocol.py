"""The Kaiwu wire protocols, one `EnvProtocol` object each: how an env of that protocol resets and
steps, decoded once for everyone who reads an env (the episode runner, episodes.runner, and the
training system's host, workflow.host.platform_env).

2024 (code packages 8.x-10.x): `env.reset(usr_conf={"diy": ...})` returns the observation;
`env.step` returns `(frame_no, obs, score, terminated, truncated, env_info)`; `predict` and
`exploit` return the package's list of ActData.
2025 (18.0.2): `env.reset(usr_conf={"env_conf": ...})` returns `(obs, state)`; `env.step`
returns `(frame_no, obs, score, terminated, truncated, state)` with a slimmer obs; on the
platform's aisrv `predict` and `exploit` return `(list of ActData, model_version)`.
The 2024 game's loops keep the 2024 shapes inside (the curriculum's usr_conf, the features, the
reward): its episodes hand episodes.runner the 2025 reading (feature.back_to_the_realm.observation18.Realm18View,
feature.back_to_the_realm.curriculum.env_conf), which the runner applies to the envs whose protocol `translates`.
back_to_the_realm_v2 (code packages 24.x, 28.x; the version names "v2-24" and "v2-28" both
speak it): `env.reset(usr_conf={"env_conf": ...})` returns `(obs, extra_info)` and `env.step`
`(step_no, obs, terminated, truncated, extra_info)`, obs and extra_info plain dicts. Its
usr_conf is the package's own (feature.back_to_the_realm_v2.curriculum), not a 2024 one; the game's episodes hand
the runner the view that keeps the episode's memory (feature.back_to_the_realm_v2.observation.V2View).
gorge_chase (code package 15.0.1, version name "15"): `env.reset(usr_conf)` returns the env_obs
(a dict holding observation, extra_info, terminated and truncated) and `env.step(act)`
`(env_reward, env_obs)`; its usr_conf is the package's own (feature.gorge_chase.curriculum) and
its game's view keeps the episode's memory (feature.gorge_chase.observation.GorgeView).
robot_vacuum (code package 13.0.1, version name "13") speaks the same engine's env_obs; its score is
the cells cleaned, and surviving to max_step is its win.

Every protocol's step reads as one `StepOutcome`, whose end flags mean the same in every game:
`terminated` the game's own end event (the hero reached the end; in gorge_chase, was caught),
`truncated` the step limit (max_step used up without that event; never both), `won` the
episode ended as the game counts a win (reaching the end; in gorge_chase, surviving to
max_step) and `lost` it ended otherwise. The score has the 2024 ScoreInfo's names.

Which protocol an env speaks must be known before its first reset, since the usr_conf's shape
depends on it and the platform answers a wrong one with nothing: an env may say so
(`env.kaiwu_version`), else the package's `KAIWU_VERSION` decides, which
tools/export_kaiwu.py sets in a package exported for a later platform version.
This module is package code (it ships inside exported packages), so it answers for the episode
loops on its own, and imports no game's features (an export carries only its own game's); the
training system's platform versions are workflow.platforms, and each names its protocol here
(`PlatformVersion.env_protocol`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

#: Which end flag is a protocol's win: reaching the end (terminated) or surviving to max_step (truncated).
WON_BY = ("terminated", "truncated")


@dataclass(frozen=True)
class Score:
    """What a step scored so far, under the 2024 ScoreInfo's names (episodes.runner.EpisodeStats)."""

    total_score: float
    treasure_count: int
    buff_count: int
    talent_count: int


@dataclass(frozen=True)
class ResetOutcome:
    """An env's reset, decoded."""

    obs: Any  # the first observation; None: the env gave none (how the platform answers a bad usr_conf)
    info: Any  # what came beside it (18: the State, v2: extra_info); None when nothing did (2024, 15.0.1)
    returned: Any  # what env.reset returned, as a package's own features take it (18: the (obs, state) pair)


@dataclass(frozen=True)
class StepOutcome:
    """An env's step, decoded; the end flags mean the same in every protocol (module docstring)."""

    obs: Any  # the observation after the step (15.0.1: the whole env_obs)
    info: Any  # what came beside it: 2024 env_info, 18 State, v2 extra_info; None in 15.0.1 (the env_obs holds it)
    score: Any  # total_score, treasure_count, buff_count, talent_count so far
    terminated: bool  # the game's own end event ended the episode (reached the end; gorge_chase: caught)
    truncated: bool  # the step limit ended it (never together with terminated)
    won: bool  # it ended as the game counts a win (reached the end; gorge_chase: survived to max_step)
    lost: bool  # it ended otherwise (timed out; gorge_chase: caught)

    @property
    def ended(self) -> bool:
        return self.terminated or self.truncated


def _reset_alone(result) -> ResetOutcome:
    """2024: the observation alone."""
    return ResetOutcome(result, None, result)


def _reset_pair(result) -> ResetOutcome:
    """18 and v2: (obs, state) / (obs, extra_info)."""
    obs, info = result if result is not None else (None, None)
    return ResetOutcome(obs, info, result)


def _reset_gorge(result) -> ResetOutcome:
    """15.0.1 and 13.0.1: the env_obs; an error env_obs (observation None, the platform's answer to a bad
    usr_conf) is no observation."""
    if result is None or result.get("observation") is None:
        return ResetOutcome(None, None, result)
    return ResetOutcome(result, None, result)


def _step_realm(result) -> tuple:
    """2024 and 18: (frame_no, obs, score, terminated, truncated, env_info | state)."""
    _, obs, score, terminated, truncated, info = result
    return obs, info, score, terminated, truncated


def _step_v2(result) -> tuple:
    """v2: (step_no, obs, terminated, truncated, extra_info), the score read from game_info."""
    _, obs, terminated, truncated, extra_info = result
    game = extra_info["game_info"]
    score = Score(float(game["total_score"]), int(game["treasure_collected_count"]), int(game["buff_count"]),
                  int(game["talent_count"]))
    return obs, extra_info, score, terminated, truncated


def _env_obs_step(score_of: Callable[[dict], Score]) -> Callable[[Any], tuple]:
    """The 2026 engine's step reader (15.0.1, 13.0.1): (env_reward, env_obs), the end flags in the
    env_obs, the score read from its env_info by `score_of`. An error env_obs (the platform's
    answer to a step after the end) raises, naming its result code."""
    def reads_step(result) -> tuple:
        _, env_obs = result
        observation = env_obs.get("observation")
        if observation is None:
            extra = env_obs.get("extra_info") or {}
            raise RuntimeError(f"env.step answered an error env_obs (result_code {extra.get('result_code')}: "
                               f"{extra.get('result_message')})")
        return env_obs, None, score_of(observation["env_info"]), env_obs["terminated"], env_obs["truncated"]
    return reads_step


def _gorge_score(info: dict) -> Score:
    return Score(float(info["total_score"]), int(info["treasures_collected"]), int(info["collected_buff"]),
                 int(info["flash_count"]))


def _vacuum_score(info: dict) -> Score:
    """robot_vacuum scores the cells cleaned; it has no chests, buffs or flashes."""
    return Score(float(info["total_score"]), 0, 0, 0)


@dataclass(frozen=True)
class EnvProtocol:
    """One wire protocol: its resets and steps decoded (`reset`, `step`) and how the episode
    loops meet it."""

    name: str
    reads_reset: Callable[[Any], ResetOutcome]
    #: env.step's result -> (obs, info, score, terminated, truncated)
    reads_step: Callable[[Any], tuple]
    #: a game's view may read this protocol's episodes for the package's features, and its usr_conf
    #: be written in it (the game's episodes hand the runner both); the 2024 protocol's come as they are
    translates: bool = False
    #: the features read the reset's info beside its observation (v2); else the reset's observation alone
    info_at_reset: bool = False
    #: which end flag is the game's win (WON_BY)
    won_by: str = "terminated"

    def __post_init__(self):
        if self.won_by not in WON_BY:
            raise ValueError(f"won_by = {self.won_by!r} is invalid: allowed {' | '.join(WON_BY)}")

    def reset(self, result) -> ResetOutcome:
        """What env.reset returned, decoded."""
        return self.reads_reset(result)

    def step(self, result) -> StepOutcome:
        """What env.step returned, decoded, with won and lost as the game counts them."""
        obs, info, score, terminated, truncated = self.reads_step(result)
        terminated, truncated = bool(terminated), bool(truncated)
        won = terminated if self.won_by == "terminated" else truncated and not terminated
        return StepOutcome(obs, info, score, terminated, truncated, won, (terminated or truncated) and not won)


REALM_2024 = EnvProtocol("2024", _reset_alone, _step_realm)
REALM_18 = EnvProtocol("18", _reset_pair, _step_realm, translates=True)
#: The v2 protocol, under both names of its platform versions.
V2 = EnvProtocol("v2", _reset_pair, _step_v2, translates=True, info_at_reset=True)
#: gorge_chase's 15.0.1 protocol, under its platform version's name and its env's.
GORGE = EnvProtocol("15", _reset_gorge, _env_obs_step(_gorge_score), translates=True, won_by="truncated")
#: robot_vacuum's 13.0.1 protocol (the same engine's env_obs), under its platform version's name and its env's.
VACUUM = EnvProtocol("13", _reset_gorge, _env_obs_step(_vacuum_score), translates=True, won_by="truncated")
PROTOCOLS = {protocol.name: protocol for protocol in (REALM_2024, REALM_18, V2, GORGE, VACUUM)}
PROTOCOLS.update({"v2-24": V2, "v2-28": V2, "gorge": GORGE, "vacuum": VACUUM})
KAIWU_VERSIONS = tuple(PROTOCOLS)

#: The protocol of the envs this package is given, unless an env says otherwise.
KAIWU_VERSION = "2024"


def env_protocol(env, kaiwu_version: str | None = None) -> EnvProtocol:
    """The protocol `env` speaks: `kaiwu_version` if given, else the env's own
    `kaiwu_version` attribute, else the package's KAIWU_VERSION."""
    version = kaiwu_version or getattr(env, "kaiwu_version", None) or KAIWU_VERSION
    if version not in PROTOCOLS:
        raise ValueError(f"kaiwu_version {version!r}: allowed {' | '.join(KAIWU_VERSIONS)}")
    return PROTOCOLS[version]


def env_kaiwu_version(env, kaiwu_version: str | None = None) -> str:
    """The name of the protocol `env` speaks (env_protocol)."""
    return env_protocol(env, kaiwu_version).name


def act_list(result) -> list:
    """predict / exploit's answer as the list of ActData: the 2025 aisrv's
    `(list, model_version)` unpacked, the package's own list as it is."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], (list, tuple)):
        return list(result[0])
    return result
