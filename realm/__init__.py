"""The simulators, one home per game (the 2024 game here, realm/back_to_the_realm_v2, realm/gorge_chase,
realm/robot_vacuum): `make_env` is the one factory of every game's env, in the protocol its
packages speak; the 2024 game's maps, env and gymnasium id; every game's gymnasium id
(realm.gym_ids)."""
from __future__ import annotations

from realm.back_to_the_realm.env import EpisodeOverError, RealmEnv
from realm.back_to_the_realm.env18 import MAP_WINDOWS, RealmEnv18
from realm.back_to_the_realm.generator import generate_map, validate_map
from realm.gorge_chase.env import GorgeChaseEnv
from realm.gym_ids import BACK_TO_THE_REALM_ID as GYM_ENV_ID
from realm.gym_ids import register_gym_env, register_gym_envs
from realm.map_source import MapSource
from realm.back_to_the_realm.maps import Map, MapError, load_official_map, load_official_map_cached
from realm.robot_vacuum.env import RobotVacuumEnv
from realm.back_to_the_realm.usr_conf import UsrConfError, did_you_mean
from realm.back_to_the_realm_v2.env import RealmEnvV2

__all__ = [
    "ENVS",
    "GYM_ENV_ID",
    "EpisodeOverError",
    "GorgeChaseEnv",
    "MAP_WINDOWS",
    "Map",
    "MapError",
    "MapSource",
    "RealmEnv",
    "RealmEnv18",
    "RealmEnvV2",
    "RobotVacuumEnv",
    "UsrConfError",
    "generate_map",
    "load_official_map",
    "load_official_map_cached",
    "make_env",
    "register_gym_env",
    "validate_map",
]

#: The envs by the Kaiwu protocol they speak (each class's PROTOCOL), one game each (its GAME).
ENVS = {env.PROTOCOL: env for env in (RealmEnv, RealmEnv18, RealmEnvV2, GorgeChaseEnv, RobotVacuumEnv)}
PROTOCOLS = tuple(ENVS)
#: The rules every protocol's env takes (each as its game has them) beside its PROTOCOL_RULES.
COMMON_RULES = ("flash_blocked", "step_jitter")


def make_env(map_file=None, positions_file=None, map_seed: int = 0, *, protocol: str = RealmEnv.PROTOCOL,
             obstacles_file=None, maps_folder=None, seed: int | None = None,
             **rules) -> RealmEnv | RealmEnv18 | RealmEnvV2 | GorgeChaseEnv | RobotVacuumEnv:
    """The env of `protocol` (a key of ENVS) on its maps, with its rules: every game's env, built
    one way (each class's `from_source`).

    The maps (realm.map_source.MapSource; a field the game does not read is refused, naming what
    it reads): `map_file` with its companion file, `positions_file` for the 2024 game's official
    map, `obstacles_file` for a v2 map_data/<name>.json; `maps_folder`, official maps an episode's
    usr_conf picks by name (v2) or id (gorge_chase, robot_vacuum); else the generated map(s) of
    `map_seed`.
    `seed`: the episode RNG. `rules`: flash_blocked ("fail" | "nearest"), step_jitter (bool), and
    the protocol's own (its class's PROTOCOL_RULES):
    "2024" back_to_the_realm (realm.RealmEnv): none.
    "18" the same game in the 2025 protocol (code package 18.0.2, realm.RealmEnv18): map_window
    ("hero" | "platform", see realm/back_to_the_realm/env18.py).
    "v2" back_to_the_realm_v2 (realm/back_to_the_realm_v2, docs/games/back_to_the_realm_v2.md): map_name (whose default points a
    generated map passes through), randomize_rules and realm.back_to_the_realm_v2.env.OPTIONS.
    "gorge" gorge_chase (realm/gorge_chase, docs/games/gorge_chase.md): map_id, randomize_rules, errors
    and realm.gorge_chase.options.OPTIONS.
    "vacuum" robot_vacuum (code package 13.0.1, realm/robot_vacuum, docs/games/robot_vacuum.md): map_id,
    randomize_rules, errors and realm.robot_vacuum.options.OPTIONS.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol = {protocol!r} is invalid: allowed {' | '.join(repr(p) for p in PROTOCOLS)}")
    env = ENVS[protocol]
    allowed = COMMON_RULES + env.PROTOCOL_RULES
    for key in rules:
        if key not in allowed:
            owners = [name for name, other in ENVS.items() if key in other.PROTOCOL_RULES]
            hint = f" ({key} is a rule of protocol={owners[0]!r})" if owners else did_you_mean(key, allowed)
            raise TypeError(f"unknown {protocol} env option {key!r}; allowed: seed, {', '.join(allowed)}{hint}")
    source = MapSource(map_file, positions_file, obstacles_file, maps_folder, map_seed)
    source.check_for(env)
    return env.from_source(source, seed=seed, **rules)


register_gym_envs()
