"""Back to the Realm v2 (`back_to_the_realm_v2`, the 2025 competition's game): maps, the env
speaking its wire protocol, the planner's reference score and pictures. Rules and choices:
docs/V2_RULES.md.

    env = make_env_v2(map_seed=0)                                    # a generated map (default)
    env = make_env_v2(map_file="map_data/map_cherry.json",
                      obstacles_file="map_cherry_obstacles.json")    # an official map file
    obs, extra_info = env.reset(usr_conf)                             # train_env_conf.toml as parsed
    step_no, obs, terminated, truncated, extra_info = env.step(act)  # act 0..15
"""
from __future__ import annotations

from pathlib import Path

from realm.usr_conf import did_you_mean
from realm.v2.env import OPTIONS, RealmEnvV2, flash_landing, walk
from realm.v2.generator import generate_v2_map, generated_v2_map, validate_v2_map
from realm.v2.map_choice import V2MapChoice
from realm.v2.maps import V2Map, load_v2_map, validate_obstacles
from realm.v2.usr_conf import UsrConfV2Error, default_usr_conf, resolve_episode, validate_usr_conf

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


def make_env_v2(map_file=None, obstacles_file=None, map_seed: int = 0, *, map_name: str | None = None,
                flags_order: str = "zx", maps_dir=None, **options) -> RealmEnvV2:
    """A RealmEnvV2 on an official map file if given (`map_data/<name>.json`, `{"Flags": [...]}`,
    with its obstacles json), else on the generated map of `map_seed` built through the default
    points of `map_name` (default "map_cherry"). An episode whose usr_conf names another map_name
    plays that map: `<maps_dir>/<map_name>.json` when there, else the stand-in (realm.v2.map_choice).
    `options`: `seed`, `randomize_rules` (each reset draws the open rules, realm.v2.env.CANDIDATES)
    and realm.v2.env.OPTIONS."""
    if map_file is None and obstacles_file is not None:
        raise ValueError("obstacles_file is only used with map_file; a generated map has its own obstacles")
    if maps_dir is not None and not Path(maps_dir).is_dir():
        raise ValueError(f"maps_dir {maps_dir}: not a folder (of official <map_name>.json files)")
    allowed = ("seed", "randomize_rules") + tuple(OPTIONS)
    for key in options:
        if key not in allowed:
            raise TypeError(f"unknown v2 env option {key!r}; allowed: {', '.join(allowed)}{did_you_mean(key, allowed)}")
    choice = V2MapChoice(None if maps_dir is None else str(maps_dir), None if map_file is None else str(map_file),
                         None if obstacles_file is None else str(obstacles_file), map_seed, flags_order, map_name)
    return RealmEnvV2(choice.first_map(), maps=choice, **options)
