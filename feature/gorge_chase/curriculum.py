"""Episode settings of the gorge_chase package ([curriculum_gorge]): the keys of the game's
train_env_conf.toml ([env_conf]), one usr_conf for every reset. The defaults are the official
ones on maps 1-8 drawn at random, so maps 9-10 (official files) and the generated maps 11.. stay
held out for evaluation (realm/gorge_chase/presets.py).

`usr_conf()` is the tree env.reset takes (`{"env_conf": {...}}`, as the official package's
read_usr_conf parses the toml); tools/export_kaiwu.py writes the same as the exported package's
train_env_conf.toml.
"""
from __future__ import annotations

from dataclasses import dataclass, field


def _in(name: str, value: int, low: int, high: int, extra: tuple = ()) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not (low <= value <= high or value in extra):
        more = f" or {', '.join(map(str, extra))}" if extra else ""
        raise ValueError(f"{name} must be an int in {low}..{high}{more}, got {value!r}")


@dataclass
class CurriculumConfig:
    map: list[int] = field(default_factory=lambda: list(range(1, 9)))  # maps 9, 10 and 11.. held out
    map_random: bool = True
    treasure_count: int = 10
    buff_count: int = 2
    buff_cooldown: int = 200
    talent_cooldown: int = 100
    monster_interval: int = 300  # -1: random in 11..2000; -2: no second monster
    monster_speedup: int = 500  # -1: random in 1..2000
    max_step: int = 1000

    def validate(self):
        if not self.map or any(isinstance(i, bool) or not isinstance(i, int) or i < 1 for i in self.map):
            raise ValueError(f"map must be a non-empty list of map ids >= 1, got {self.map!r}")
        _in("treasure_count", self.treasure_count, 0, 10)
        _in("buff_count", self.buff_count, 0, 2)
        _in("buff_cooldown", self.buff_cooldown, 1, 500)
        _in("talent_cooldown", self.talent_cooldown, 50, 2000)
        _in("monster_interval", self.monster_interval, 11, 2000, (-1, -2))
        _in("monster_speedup", self.monster_speedup, 1, 2000, (-1,))
        _in("max_step", self.max_step, 1, 2000)

    def usr_conf(self) -> dict:
        """The usr_conf of every episode (the env draws the spawns and, with map_random, the map)."""
        return {"env_conf": {key: list(value) if isinstance(value, list) else value for key, value in vars(self).items()}}


def probe_usr_confs(cfg: CurriculumConfig) -> list[tuple[str, str, dict]]:
    """(section, when, usr_conf): what a host resets its simulator with before a run starts."""
    return [("[curriculum_gorge]", "every episode", cfg.usr_conf())]
