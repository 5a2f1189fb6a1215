"""What a finished evaluation episode records, for the games whose policies play from the env
itself (back_to_the_realm_v2, gorge_chase): one dataclass each game extends with what it draws,
and its CSV row (evaluation.summary's EPISODE_FIELDS)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

RECORD_FIELDS = ("seed", "total_score", "won", "chests", "steps", "buff_count", "flash_count", "usr_conf")


@dataclass
class GameEpisode:
    """One finished episode: the (usr_conf, seed) it played, its score and counts, its actions (a
    replay of the seed repeats it)."""

    seed: int
    usr_conf: dict
    total_score: float
    won: bool
    chests: int
    chests_available: int
    steps: int
    buff_count: int
    flash_count: int
    actions: list = field(default_factory=list)

    def to_row(self) -> dict:
        row = {key: getattr(self, key) for key in RECORD_FIELDS}
        row["usr_conf"] = json.dumps(self.usr_conf, sort_keys=True)
        return row
