"""The Back to the Realm simulator: maps, the Kaiwu-protocol env and its gymnasium id."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from realm.env import EpisodeOverError, RealmEnv
from realm.generator import generate_map, validate_map
from realm.maps import Map, MapError, load_official_map, load_official_map_cached
from realm.usr_conf import UsrConfError, did_you_mean

GYM_ENV_ID = "realm/BackToTheRealm-v0"

__all__ = [
    "GYM_ENV_ID",
    "EpisodeOverError",
    "Map",
    "MapError",
    "RealmEnv",
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


def make_env(map_file=None, positions_file=None, map_seed: int = 0, **rules) -> RealmEnv:
    """A RealmEnv on the official map files if given, else on the generated map of `map_seed`.

    `rules`: flash_blocked ("fail" | "nearest"), step_jitter (bool), seed (episode RNG).
    """
    if map_file is not None:
        if positions_file is None:
            raise ValueError("map_file needs positions_file (the position_pool.json with the 16 special positions)")
        game_map = load_official_map_cached(str(Path(map_file).resolve()), str(Path(positions_file).resolve()))
    elif positions_file is not None:
        raise ValueError("positions_file is only used with map_file; pass both, or neither for a generated map")
    else:
        game_map = _generated_map(map_seed)
    allowed = ("flash_blocked", "step_jitter", "seed")
    for key in rules:
        if key not in allowed:
            raise TypeError(f"unknown env rule {key!r}; allowed: {', '.join(allowed)}{did_you_mean(key, allowed)}")
    return RealmEnv(game_map, **rules)


def _register_gym_env() -> None:
    """Register the gymnasium id once; the entry point is a string so nothing is imported now."""
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:  # gymnasium is optional for the core simulator
        return
    if GYM_ENV_ID not in registry:
        register(id=GYM_ENV_ID, entry_point="realm.gym_env:RealmGymEnv")


_register_gym_env()
