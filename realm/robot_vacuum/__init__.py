"""robot_vacuum (清扫大作战, Kaiwu 2026, code package 13.0.1): maps, the env speaking the 13.0.1
framework API, a full-information reference policy, presets, pictures and the gymnasium env
(`realm/RobotVacuum-v0`, realm/robot_vacuum/gym_env.py). Rules and the choices made where the
sources are silent: docs/games/robot_vacuum.md.

    env = realm.make_env(protocol="vacuum", seed=0)                            # embedded generated maps
    env = realm.make_env(protocol="vacuum", maps_folder="path/to/maps", seed=0)  # official map files
    env_obs = env.reset({"env_conf": {"map": [1, 2], "charger_count": 3, "battery_max": 150}})
    env_reward, env_obs = env.step(act)                                         # act 0..7
"""
from __future__ import annotations

from realm.gym_ids import ROBOT_VACUUM_ID as GYM_ENV_ID
from realm.robot_vacuum.env import EpisodeOverError, RobotVacuumEnv
from realm.robot_vacuum.generator import GeneratedMaps, generated_map, map_stats
from realm.robot_vacuum.maps import (
    MapFolder,
    SingleMap,
    VacuumMap,
    VacuumMapError,
    grid_text,
    load_map_file,
    write_map_json,
)
from realm.robot_vacuum.options import OPTIONS, options_table
from realm.robot_vacuum.usr_conf import VacuumUsrConfError, default_usr_conf, validate_usr_conf

__all__ = [
    "GYM_ENV_ID",
    "OPTIONS",
    "EpisodeOverError",
    "GeneratedMaps",
    "MapFolder",
    "RobotVacuumEnv",
    "SingleMap",
    "VacuumMap",
    "VacuumMapError",
    "VacuumUsrConfError",
    "default_usr_conf",
    "generated_map",
    "grid_text",
    "load_map_file",
    "make_vacuum_env",
    "map_stats",
    "options_table",
    "validate_usr_conf",
    "write_map_json",
]


def make_vacuum_env(map_dir=None, map_id: int | None = None, map_seed: int = 0, seed: int | None = 0,
                    **rules) -> RobotVacuumEnv:
    """`realm.make_env(map_seed=map_seed, protocol="vacuum", maps_folder=map_dir, seed=seed,
    map_id=map_id, **rules)`: the one factory, in this game's argument order (episodes seeded 0
    unless told)."""
    from realm import make_env

    return make_env(map_seed=map_seed, protocol=RobotVacuumEnv.PROTOCOL, maps_folder=map_dir, seed=seed,
                    map_id=map_id, **rules)
