"""The competition's reference episode settings (SPEC §8), as ready-made `usr_conf` dicts.

Evaluation, the planner's reference scores and the tools all name a preset instead of spelling
out the keys, so a score reported anywhere in the project means the same episodes.
"""
from __future__ import annotations

import copy

PRESETS: dict[str, dict] = {
    # The 2024 leaderboard: 9 random chests, 30 episodes per evaluation.
    "leaderboard-2024": {
        "diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 9, "max_step": 2000, "talent_type": 1}
    },
    # Every chest slot at once under a tight step limit: the route must be near optimal.
    "fixed-13": {
        "diy": {
            "start": 2,
            "end": 1,
            "treasure_random": 0,
            "treasure_id": list(range(3, 16)),
            "max_step": 1000,
            "talent_type": 1,
        }
    },
    "random-8": {
        "diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 8, "max_step": 2000, "talent_type": 1}
    },
}


def preset(name: str) -> dict:
    """A fresh copy of a preset's usr_conf (callers may edit it without touching the table)."""
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; available: {', '.join(PRESETS)}")
    return copy.deepcopy(PRESETS[name])
