"""Episode settings of the v2 package ([curriculum_v2]): the keys of the game's
train_env_conf.toml, one usr_conf for every reset (the server draws the random points and the
random obstacle). The defaults are the 28.1.1 package's own file on map_cherry: start [111, 83]
and buff [57, 68] fixed, its 8 fixed chests, a random end, one random obstacle, 2000 steps.

`usr_conf()` is the tree env.reset takes (`{"env_conf": {"map_name": ..., "<map_name>": {...}}}`,
as the official packages' read_usr_conf parses the toml); tools/export_kaiwu.py writes the same
as the exported package's train_env_conf.toml.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

MAP_NAMES = ("map_cherry", "map_fish", "map_butterfly")
#: the 28.1.1 package's fixed chests on map_cherry
CHERRY_CHESTS = [[80, 50], [64, 20], [109, 52], [46, 55], [20, 84], [26, 116], [66, 97], [101, 28]]


def _point(name: str, value) -> None:
    if len(value) != 2 or not all(0 <= int(v) <= 127 for v in value):
        raise ValueError(f"{name} must be [x, z] with 0 <= x, z <= 127, got {value}")


@dataclass
class CurriculumConfig:
    map_name: Literal["map_cherry", "map_fish", "map_butterfly"] = "map_cherry"
    start: list[int] = field(default_factory=lambda: [111, 83])
    end: list[int] = field(default_factory=lambda: [20, 49])
    buff: list[int] = field(default_factory=lambda: [57, 68])
    start_random: bool = False
    end_random: bool = True
    buff_random: bool = False
    buff_cooldown: int = 100
    talent_cooldown: int = 100
    treasure_random: bool = False
    treasure_count: int = 8
    treasure_pos: list[list[int]] = field(default_factory=lambda: [list(p) for p in CHERRY_CHESTS])
    obstacle_random: bool = True
    obstacle_id: list[int] = field(default_factory=list)
    max_step: int = 2000

    def validate(self):
        for name in ("start", "end", "buff"):
            _point(name, getattr(self, name))
        for i, p in enumerate(self.treasure_pos):
            _point(f"treasure_pos[{i}]", p)
        if len(self.treasure_pos) > 13 or not 0 <= self.treasure_count <= 13:
            raise ValueError("at most 13 chests (treasure_pos, treasure_count 0..13)")
        if not 1 <= self.max_step <= 2000:
            raise ValueError(f"max_step must be in 1..2000, got {self.max_step}")
        if not 1 <= self.buff_cooldown <= 2000 or not 100 <= self.talent_cooldown <= 2000:
            raise ValueError("buff_cooldown must be in 1..2000 and talent_cooldown in 100..2000")
        if any(not 1 <= i <= 6 for i in self.obstacle_id) or len(set(self.obstacle_id)) != len(self.obstacle_id):
            raise ValueError(f"obstacle_id must be distinct ids in 1..6, got {self.obstacle_id}")

    def usr_conf(self) -> dict:
        """The usr_conf of every episode (the server draws what is random)."""
        table = {key: value for key, value in vars(self).items() if key != "map_name"}
        table = {key: [list(p) for p in value] if key == "treasure_pos" else
                 (list(value) if isinstance(value, list) else value) for key, value in table.items()}
        return {"env_conf": {"map_name": self.map_name, self.map_name: table}}


def probe_usr_confs(cfg: CurriculumConfig) -> list[tuple[str, str, dict]]:
    """(section, when, usr_conf): what a host resets its simulator with before a run starts."""
    return [("[curriculum_v2]", "every episode", cfg.usr_conf())]
