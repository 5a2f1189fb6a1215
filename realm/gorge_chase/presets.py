"""Evaluation presets of gorge_chase: usr_confs (the official defaults: 10 chests, 2 buffs, buff
cooldown 200, talent cooldown 100, monster 2 at step 300, speed-up at 500, 1000 steps) on named
map sets. The final evaluation's settings and its 5 maps are not public; these measure a policy
on the open maps, split into a training and a held-out part, and on generated maps it never saw.

- "gorge-open": official defaults on open maps 1-10 (needs the official map files: [env] maps_dir;
  without them it is refused, not played on the generated maps of the same ids);
- "gorge-train": open maps 1-8; "gorge-heldout": open maps 9-10 (train on 1-8, score on 9-10);
- "gorge-generated-heldout": generated maps 11-20 (the embedded generator; training on the
  default generated ids 1-10 never sees them);
- "gorge-generated-train": generated maps 21-30, which conf/gorge_chase.toml trains on (against
  the held-out 11-20: the train / held-out gap);
- "...-harder": the held-out sets under the harder settings competitors train with (monster 2 at
  step 200, the speed-up at 300, flash cooldown 200).
"""
from __future__ import annotations

import copy

from realm.gorge_chase.usr_conf import default_usr_conf


HARDER = {"monster_interval": 200, "monster_speedup": 300, "talent_cooldown": 200}


def _with_maps(ids, **settings) -> dict:
    conf = default_usr_conf()
    conf["env_conf"]["map"] = list(ids)
    conf["env_conf"].update(settings)
    return conf


PRESETS: dict[str, dict] = {
    "gorge-open": _with_maps(range(1, 11)),
    "gorge-train": _with_maps(range(1, 9)),
    "gorge-heldout": _with_maps((9, 10)),
    "gorge-generated-heldout": _with_maps(range(11, 21)),
    "gorge-generated-train": _with_maps(range(21, 31)),
    "gorge-heldout-harder": _with_maps((9, 10), **HARDER),
    "gorge-generated-heldout-harder": _with_maps(range(11, 21), **HARDER),
}
#: presets that need the official map files (realm.make_env(protocol="gorge", maps_folder=...), [env] maps_dir)
NEEDS_MAP_FILES = ("gorge-open", "gorge-train", "gorge-heldout", "gorge-heldout-harder")


def check_preset_maps(name: str, maps_folder) -> None:
    """ValueError naming [env] maps_dir when preset `name` needs the official map files and
    no folder is given (the generated maps of the same ids would stand in unnoticed)."""
    if name in NEEDS_MAP_FILES and not maps_folder:
        ids = PRESETS[name]["env_conf"]["map"]
        raise ValueError(f"preset {name} plays the official open maps {ids[0]}-{ids[-1]}: set [env] maps_dir to the "
                         "folder of their files (gorge_chase_map_<id>.json or map_<id>.txt), or choose preset "
                         "gorge-generated-heldout (the simulator's generated maps)")


def gorge_preset(name: str) -> dict:
    """A fresh copy of a preset's usr_conf."""
    if name not in PRESETS:
        raise KeyError(f"unknown gorge_chase preset {name!r}; available: {', '.join(PRESETS)}")
    return copy.deepcopy(PRESETS[name])
