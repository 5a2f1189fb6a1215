"""Evaluation presets of robot_vacuum: usr_confs on named map sets. The final evaluation's 5 maps
are not public; these measure a policy on the open maps, split into a training and a held-out
part, and on generated maps it never saw, under the official defaults (4 official robots, 4
chargers, 1000 steps, battery 200) and under the final ladder's reported setting (4 robots, 3
chargers, 1000 steps, battery 150; second-hand, SPEC_DRAFT §11).

- "vacuum-open": official defaults on open maps 1-10 (needs the official map files: a
  maps_folder; without them it is refused, not played on the generated maps of the same ids);
- "vacuum-train": open maps 1-8; "vacuum-heldout": open maps 9-10 (train on 1-8, score on 9-10);
- "vacuum-generated-heldout": generated maps 11-20 (training on the default generated ids 1-10
  never sees them);
- "vacuum-final-generated-heldout": the final ladder's setting on generated maps 11-20.
"""
from __future__ import annotations

import copy

from realm.robot_vacuum.usr_conf import default_usr_conf


def _with(ids, **values) -> dict:
    conf = default_usr_conf()
    conf["env_conf"]["map"] = list(ids)
    conf["env_conf"].update(values)
    return conf


FINAL_LADDER = {"robot_count": 4, "charger_count": 3, "max_step": 1000, "battery_max": 150}
PRESETS: dict[str, dict] = {
    "vacuum-open": _with(range(1, 11)),
    "vacuum-train": _with(range(1, 9)),
    "vacuum-heldout": _with((9, 10)),
    "vacuum-generated-heldout": _with(range(11, 21)),
    "vacuum-final-generated-heldout": _with(range(11, 21), **FINAL_LADDER),
}
#: presets that need the official map files (realm.make_env(protocol="vacuum", maps_folder=...))
NEEDS_MAP_FILES = ("vacuum-open", "vacuum-train", "vacuum-heldout")


def check_preset_maps(name: str, maps_folder) -> None:
    """ValueError naming maps_folder when preset `name` needs the official map files and no folder
    is given (the generated maps of the same ids would stand in unnoticed)."""
    if name in NEEDS_MAP_FILES and not maps_folder:
        ids = PRESETS[name]["env_conf"]["map"]
        raise ValueError(f"preset {name} plays the official open maps {ids[0]}-{ids[-1]}: give maps_folder, the "
                         "folder of their files (robot_vacuum_map_<id>.json or map_<id>.txt), or choose preset "
                         "vacuum-generated-heldout (the simulator's generated maps)")


def vacuum_preset(name: str) -> dict:
    """A fresh copy of a preset's usr_conf."""
    if name not in PRESETS:
        raise KeyError(f"unknown robot_vacuum preset {name!r}; available: {', '.join(PRESETS)}")
    return copy.deepcopy(PRESETS[name])
