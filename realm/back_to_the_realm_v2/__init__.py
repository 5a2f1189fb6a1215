"""Back to the Realm v2 (`back_to_the_realm_v2`, the 2025 competition's game): maps, the env
speaking its wire protocol, the planner's reference score, pictures and the gymnasium env
(`realm/BackToTheRealmV2-v0`, realm/back_to_the_realm_v2/gym_env.py). Rules and choices: docs/games/back_to_the_realm_v2.md.

    env = realm.make_env(protocol="v2", map_seed=0)                 # a generated map (default)
    env = realm.make_env("map_data/map_cherry.json", protocol="v2",
                         obstacles_file="map_cherry_obstacles.json")  # an official map file
    obs, extra_info = env.reset(usr_conf)                             # train_env_conf.toml as parsed
    step_no, obs, terminated, truncated, extra_info = env.step(act)  # act 0..15
"""
from __future__ import annotations

from realm.back_to_the_realm_v2.env import OPTIONS, RealmEnvV2, flash_landing, walk
from realm.back_to_the_realm_v2.generator import generate_v2_map, generated_v2_map, validate_v2_map
from realm.back_to_the_realm_v2.map_choice import V2MapChoice
from realm.back_to_the_realm_v2.maps import V2Map, load_v2_map, validate_obstacles
from realm.back_to_the_realm_v2.usr_conf import UsrConfV2Error, default_usr_conf, resolve_episode, validate_usr_conf

__all__ = [
    "OPTIONS",
    "RealmEnvV2",
    "UsrConfV2Error",
    "V2Map",
    "V2MapChoice",
    "default_usr_conf",
    "flash_landing",
    "generate_v2_map",
    "load_v2_map",
    "make_env_v2",
    "resolve_episode",
    "validate_obstacles",
    "validate_usr_conf",
    "validate_v2_map",
    "walk",
]


def make_env_v2(map_file=None, obstacles_file=None, map_seed: int = 0, **rules) -> RealmEnvV2:
    """`realm.make_env(map_file, map_seed=map_seed, protocol="v2", obstacles_file=obstacles_file,
    **rules)`: the one factory, in this game's argument order."""
    from realm import make_env

    return make_env(map_file, map_seed=map_seed, protocol=RealmEnvV2.PROTOCOL, obstacles_file=obstacles_file, **rules)
