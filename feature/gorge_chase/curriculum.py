"""Episode settings of the gorge_chase package ([curriculum_gorge]): the keys of the game's
train_env_conf.toml ([env_conf]), one usr_conf for every reset. The defaults are the official
ones on maps 1-8 drawn at random, so maps 9-10 (official files) and the generated maps 11.. stay
held out for evaluation (realm/gorge_chase/presets.py).

`usr_conf()` is the tree env.reset takes (`{"env_conf": {...}}`, as the official package's
read_usr_conf parses the toml); tools/export_kaiwu.py writes the same as the exported package's
train_env_conf.toml. `draw` varies settings per episode (`usr_conf(rng)`): the package's own
workflow resets each episode with a draw, as a package may; the exported train_env_conf.toml
keeps the values the draw replaces, and the package's settings.json carries `draw`.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

#: each int key's allowed values: (low, high, the special values beside)
RANGES: dict[str, tuple[int, int, tuple]] = {
    "treasure_count": (0, 10, ()),
    "buff_count": (0, 2, ()),
    "buff_cooldown": (1, 500, ()),
    "talent_cooldown": (50, 2000, ()),
    "monster_interval": (11, 2000, (-1, -2)),
    "monster_speedup": (1, 2000, (-1,)),
    "max_step": (1, 2000, ()),
}


def _in(name: str, value: int, low: int, high: int, extra: tuple = ()) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not (low <= value <= high or value in extra):
        more = f" or {', '.join(map(str, extra))}" if extra else ""
        raise ValueError(f"{name} must be an int in {low}..{high}{more}, got {value!r}")


def _check_draw(draw: dict) -> None:
    if not isinstance(draw, dict):
        raise ValueError(f"draw must be a table of key = [values], got {draw!r}")
    for key, values in draw.items():
        if key not in RANGES:
            raise ValueError(f"draw.{key}: not a key drawn per episode; allowed: {', '.join(RANGES)}")
        if not isinstance(values, list) or not values:
            raise ValueError(f"draw.{key} must be a non-empty list of values, got {values!r}")
        for value in values:
            _in(f"draw.{key}", value, *RANGES[key])


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
    # per episode, each key listed takes one of its values (uniformly, each key on its own) in
    # place of its value above: {monster_interval = [300, 200], monster_speedup = [500, 300],
    # talent_cooldown = [100, 200]} trains across the official defaults and the harder settings
    draw: dict[str, list[int]] = field(default_factory=dict)

    def validate(self):
        if not self.map or any(isinstance(i, bool) or not isinstance(i, int) or i < 1 for i in self.map):
            raise ValueError(f"map must be a non-empty list of map ids >= 1, got {self.map!r}")
        for key, limits in RANGES.items():
            _in(key, getattr(self, key), *limits)
        _check_draw(self.draw)

    def usr_conf(self, rng: random.Random | None = None) -> dict:
        """The usr_conf of an episode (the env draws the spawns and, with map_random, the map):
        with `rng`, `draw`'s keys drawn from it; without, the values above."""
        env_conf = {key: list(value) if isinstance(value, list) else value
                    for key, value in vars(self).items() if key != "draw"}
        if rng is not None:
            for key, values in self.draw.items():
                env_conf[key] = values[rng.randrange(len(values))]
        return {"env_conf": env_conf}


def probe_usr_confs(cfg: CurriculumConfig) -> list[tuple[str, str, dict]]:
    """(section, when, usr_conf): what a host resets its simulator with before a run starts (each
    drawn value other than the key's own once, beside the others' values)."""
    probes = [("[curriculum_gorge]", "every episode" if not cfg.draw else "the values not drawn", cfg.usr_conf())]
    for key, values in cfg.draw.items():
        for value in dict.fromkeys(values):
            if value == getattr(cfg, key):
                continue
            usr_conf = cfg.usr_conf()
            usr_conf["env_conf"][key] = value
            probes.append(("[curriculum_gorge]", f"an episode drawing {key} = {value}", usr_conf))
    return probes
