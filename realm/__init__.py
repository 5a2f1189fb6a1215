"""The simulators, one home per game (the 2024 game here, realm/v2, realm/gorge_chase): `make_env`
serves each in the protocol its packages speak; the 2024 game's maps, env and gymnasium id."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from realm.gym_ids import register_gym_env
from realm.env import EpisodeOverError, RealmEnv
from realm.env18 import MAP_WINDOWS, RealmEnv18
from realm.generator import generate_map, validate_map
from realm.gorge_chase.hosted import HostedGorgeChaseEnv
from realm.maps import Map, MapError, load_official_map, load_official_map_cached
from realm.usr_conf import UsrConfError, did_you_mean
from realm.v2.env import RealmEnvV2

GYM_ENV_ID = "realm/BackToTheRealm-v0"

__all__ = [
    "GYM_ENV_ID",
    "EpisodeOverError",
    "HostedGorgeChaseEnv",
    "Map",
    "MapError",
    "RealmEnv",
    "RealmEnv18",
    "RealmEnvV2",
    "UsrConfError",
    "generate_map",
    "load_official_map",
    "make_env",
    "validate_map",
]


@lru_cache(maxsize=16)
def _generated_map(seed: int) -> Map:
    """Generated maps are immutable: envs in one process share one instance per seed."""
    return generate_map(seed)


#: The envs by the Kaiwu protocol they speak (each class's PROTOCOL).
ENVS = {env.PROTOCOL: env for env in (RealmEnv, RealmEnv18, RealmEnvV2, HostedGorgeChaseEnv)}
PROTOCOLS = tuple(ENVS)


def make_env(map_file=None, positions_file=None, map_seed: int = 0, *, protocol: str = RealmEnv.PROTOCOL,
             **rules) -> RealmEnv | RealmEnv18 | RealmEnvV2 | HostedGorgeChaseEnv:
    """A RealmEnv on the official map files if given, else on the generated map of `map_seed`.

    `rules`: flash_blocked ("fail" | "nearest"), step_jitter (bool), seed (episode RNG).
    `protocol=RealmEnv18.PROTOCOL` serves the same game in the 2025 protocol (code package 18.0.2): a
    RealmEnv18, with the extra rule map_window ("hero" | "platform", see realm/env18.py).
    `protocol=RealmEnvV2.PROTOCOL` ("v2") plays back_to_the_realm_v2 (realm/v2, docs/V2_RULES.md):
    `map_file` is a map_data/<name>.json with the rule `obstacles_file`, else the generated v2 map of
    `map_seed` (rule `map_name`: whose default points it passes through); the other rules are
    realm.v2.env.OPTIONS.
    `protocol=HostedGorgeChaseEnv.PROTOCOL` ("gorge") plays gorge_chase (realm/gorge_chase): the rule
    `maps_folder` (official map files by id), else the generated maps of `map_seed`; the other
    rules are realm.gorge_chase.options.OPTIONS, `map_id` and `randomize_rules`.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol = {protocol!r} is invalid: allowed {' | '.join(repr(p) for p in PROTOCOLS)}")
    env = ENVS[protocol]
    allowed = ("flash_blocked", "step_jitter", "seed") + env.PROTOCOL_RULES
    for key in rules:
        if key not in allowed:
            owners = [name for name, other in ENVS.items() if key in other.PROTOCOL_RULES]
            hint = f" ({key} is a rule of protocol={owners[0]!r})" if owners else did_you_mean(key, allowed)
            raise TypeError(f"unknown env rule {key!r}; allowed: {', '.join(allowed)}{hint}")
    if hasattr(env, "on_files"):  # a game with maps of its own (back_to_the_realm_v2)
        return env.on_files(map_file, positions_file, map_seed, **rules)
    if map_file is not None:
        if positions_file is None:
            raise ValueError("map_file needs positions_file (the position_pool.json with the 16 special positions)")
        game_map = load_official_map_cached(str(Path(map_file).resolve()), str(Path(positions_file).resolve()))
    elif positions_file is not None:
        raise ValueError("positions_file is only used with map_file; pass both, or neither for a generated map")
    else:
        game_map = _generated_map(map_seed)
    return env.on_map(game_map, **rules)


register_gym_env(GYM_ENV_ID, "realm.gym_env:RealmGymEnv")
