"""Where the Kaiwu protocols differ for an episode loop: one `EnvProtocol` per protocol.

2024 (code packages 8.x-10.x): `env.reset(usr_conf={"diy": ...})` returns the observation;
`env.step` returns `(frame_no, obs, score, terminated, truncated, env_info)`; `predict` and
`exploit` return the package's list of ActData.
2025 (18.0.2): `env.reset(usr_conf={"env_conf": ...})` returns `(obs, state)`; `env.step`
returns `(frame_no, obs, score, terminated, truncated, state)` with a slimmer obs; on the
platform's aisrv `predict` and `exploit` return `(list of ActData, model_version)`.
The 2024 game's loops keep the 2024 shapes inside (the curriculum's usr_conf, the features, the
reward): its episodes hand episodes.runner the 2025 reading (feature.observation18.Realm18View,
feature.curriculum.env_conf), which the runner applies to the envs whose protocol `translates`.

Which protocol an env speaks must be known before its first reset, since the usr_conf's shape
depends on it and the platform answers a wrong one with nothing: an env may say so
(`env.kaiwu_version`), else the package's `KAIWU_VERSION` decides, which
tools/export_kaiwu.py sets in a package exported for a later platform version.
back_to_the_realm_v2 (code packages 24.x, 28.x; the version names "v2-24" and "v2-28" both
speak it): `env.reset(usr_conf={"env_conf": ...})` returns `(obs, extra_info)` and `env.step`
`(step_no, obs, terminated, truncated, extra_info)`, obs and extra_info plain dicts. Its
usr_conf is the package's own (feature.curriculum_v2), not a 2024 one; the game's episodes hand
the runner the view that keeps the episode's memory (feature.observation_v2.V2View).
gorge_chase (code package 15.0.1, version name "15"): `env.reset(usr_conf)` returns the env_obs
(a dict holding observation, extra_info, terminated and truncated) and `env.step(act)`
`(env_reward, env_obs)`; its usr_conf is the package's own (feature.gorge_chase.curriculum) and
its game's view keeps the episode's memory (feature.gorge_chase.observation.GorgeView).
This module is package code (it ships inside exported packages), so it answers for the episode
loops on its own, and imports no game's features (an export carries only its own game's); the
training system's platform versions are workflow.platforms.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable



@dataclass(frozen=True)
class Score:
    """What a v2 step scored so far, under the 2024 ScoreInfo's names (episodes.runner.EpisodeStats)."""

    total_score: float
    treasure_count: int
    buff_count: int
    talent_count: int


def _step_2024(result) -> tuple:
    """(obs, score, terminated, truncated, env_info) of a 2024 or 2025 step."""
    _, obs, score, terminated, truncated, env_info = result
    return obs, score, terminated, truncated, env_info


def _step_v2(result) -> tuple:
    """(obs, score, terminated, truncated, extra_info) of a v2 step, its score read from game_info."""
    _, obs, terminated, truncated, extra_info = result
    game = extra_info["game_info"]
    score = Score(float(game["total_score"]), int(game["treasure_collected_count"]), int(game["buff_count"]),
                  int(game["talent_count"]))
    return obs, score, terminated, truncated, extra_info


def _step_gorge(result) -> tuple:
    """(env_obs, score, terminated, truncated, None) of a 15.0.1 step, its score read from env_info."""
    _, env_obs = result
    info = env_obs["observation"]["env_info"]
    score = Score(float(info["total_score"]), int(info["treasures_collected"]), int(info["collected_buff"]),
                  int(info["flash_count"]))
    return env_obs, score, bool(env_obs["terminated"]), bool(env_obs["truncated"]), None


@dataclass(frozen=True)
class EnvProtocol:
    """How an episode loop meets an env of one protocol."""

    name: str
    #: a game's view may read this protocol's episodes for the package's features, and its usr_conf
    #: be written in it (the game's episodes hand the runner both); the 2024 protocol's come as they are
    translates: bool = False
    #: env.step's result -> (obs, score, terminated, truncated, env_info)
    step: Callable[[tuple], tuple] = _step_2024
    #: reset returns (obs, info) and the view reads both (v2); else reset's shapes as 2024 / 2025
    info_at_reset: bool = False


#: The v2 protocol, under both names of its platform versions.
V2 = EnvProtocol("v2", True, _step_v2, info_at_reset=True)
#: gorge_chase's 15.0.1 protocol, under its platform version's name and its env's.
GORGE = EnvProtocol("15", True, _step_gorge)
PROTOCOLS = {protocol.name: protocol for protocol in (
    EnvProtocol("2024"),
    EnvProtocol("18", True),
    V2,
    GORGE,
)}
PROTOCOLS.update({"v2-24": V2, "v2-28": V2, "gorge": GORGE})
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
