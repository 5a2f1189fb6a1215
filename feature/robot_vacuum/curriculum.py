"""Episode settings of the robot_vacuum package ([curriculum_vacuum]): the keys of the game's
train_env_conf.toml ([env_conf]), one usr_conf for every reset. The defaults are the official
ones (4 official robots, 4 chargers, 1000 steps, battery 200) on maps 1-8 drawn at random, so
maps 9-10 (official files) and the generated maps 11.. stay held out for evaluation
(realm/robot_vacuum/presets.py: vacuum-heldout, vacuum-generated-heldout).

`usr_conf()` is the tree env.reset takes (`{"env_conf": {...}}`, as the official package's
read_usr_conf parses the toml); tools/export_kaiwu.py writes the same as the exported package's
train_env_conf.toml.
"""
from __future__ import annotations

from dataclasses import dataclass, field


def _in(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"[curriculum_vacuum] {name} must be an int in {low}..{high}, got {value!r}")


@dataclass
class CurriculumConfig:
    map: list[int] = field(default_factory=lambda: list(range(1, 9)))  # maps 9, 10 and 11.. held out
    map_random: bool = True
    robot_count: int = 4
    charger_count: int = 4
    max_step: int = 1000
    battery_max: int = 200

    def validate(self):
        if (not isinstance(self.map, list) or not self.map
                or any(isinstance(i, bool) or not isinstance(i, int) or i < 1 for i in self.map)):
            raise ValueError(f"[curriculum_vacuum] map must be a non-empty list of map ids >= 1, got {self.map!r}")
        if not isinstance(self.map_random, bool):
            raise ValueError(f"[curriculum_vacuum] map_random must be true or false, got {self.map_random!r}")
        _in("robot_count", self.robot_count, 1, 4)
        _in("charger_count", self.charger_count, 1, 4)
        _in("max_step", self.max_step, 1, 2000)
        _in("battery_max", self.battery_max, 100, 999)

    def usr_conf(self) -> dict:
        """The usr_conf of every episode (the env draws the chargers, the spawns and, with
        map_random, the map)."""
        return {"env_conf": {key: list(value) if isinstance(value, list) else value
                             for key, value in vars(self).items()}}


def probe_usr_confs(cfg: CurriculumConfig) -> list[tuple[str, str, dict]]:
    """(section, when, usr_conf): what a host resets its simulator with before a run starts."""
    return [("[curriculum_vacuum]", "every episode", cfg.usr_conf())]
