"""gorge_chase (峡谷追猎, Kaiwu 2026, code package 15.0.1): maps, the env speaking the 15.0.1
framework API, a full-information reference policy, presets, pictures and the gymnasium env
(`realm/GorgeChase-v0`, realm/gorge_chase/gym_env.py). Rules and the choices made where the
sources are silent: docs/games/gorge_chase.md.

    env = realm.make_env(protocol="gorge", seed=0)                          # embedded generated maps
    env = realm.make_env(protocol="gorge", maps_folder="path/to/maps", seed=0)  # official map files
    env_obs = env.reset({"env_conf": {"map": [1, 2], "monster_interval": 300}})
    env_reward, env_obs = env.step(act)                                      # act 0..15
"""
from __future__ import annotations

from realm.gym_ids import GORGE_CHASE_ID as GYM_ENV_ID
from realm.gorge_chase.env import EpisodeOverError, GorgeChaseEnv, flash_target, walk_path
from realm.gorge_chase.generator import GeneratedMaps, generate_grid, generated_map, map_stats
from realm.gorge_chase.maps import (
    GorgeMap,
    GorgeMapError,
    MapFolder,
    SingleMap,
    load_map_file,
    write_map_json,
)
from realm.gorge_chase.options import OPTIONS, options_table
from realm.gorge_chase.usr_conf import GorgeUsrConfError, default_usr_conf, validate_usr_conf

__all__ = [
    "GYM_ENV_ID",
    "OPTIONS",
    "EpisodeOverError",
    "GeneratedMaps",
    "GorgeChaseEnv",
    "GorgeMap",
    "GorgeMapError",
    "GorgeUsrConfError",
    "MapFolder",
    "SingleMap",
    "default_usr_conf",
    "flash_target",
    "generate_grid",
    "generated_map",
    "load_map_file",
    "make_gorge_env",
    "map_stats",
    "options_table",
    "validate_usr_conf",
    "walk_path",
    "write_map_json",
]


def make_gorge_env(map_dir=None, map_id: int | None = None, map_seed: int = 0, seed: int | None = 0,
                   **rules) -> GorgeChaseEnv:
    """`realm.make_env(map_seed=map_seed, protocol="gorge", maps_folder=map_dir, seed=seed,
    map_id=map_id, **rules)`: the one factory, in this game's argument order (episodes seeded 0
    unless told)."""
    from realm import make_env

    return make_env(map_seed=map_seed, protocol=GorgeChaseEnv.PROTOCOL, maps_folder=map_dir, seed=seed,
                    map_id=map_id, **rules)
