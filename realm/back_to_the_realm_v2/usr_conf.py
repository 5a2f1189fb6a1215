"""The v2 episode configuration: `train_env_conf.toml` as a package reads it, checked with the
official key ranges, then resolved on a map (walls, obstacles, random draws) into an `Episode`.

Accepted forms (every key of the map's table is required except `talent_type`, which only the
24.x packages have):
- the toml tree as parsed: `{"env_conf": {"map_name": "map_cherry", "map_cherry": {...}}}`;
- the table alone: `{"env_conf": {...}}` or `{...}`, optionally with `"map_name"`.
Types are exact as in a parsed toml: positions are `[x, z]` lists of ints, flags are bools.
Every mistake raises `UsrConfV2Error` (a `realm.back_to_the_realm.usr_conf.UsrConfError`) naming the key and
what it allows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from realm.back_to_the_realm.usr_conf import UsrConfError, did_you_mean
from realm.back_to_the_realm_v2.constants import (
    BUFF_COOLDOWN_RANGE,
    CHERRY_TREASURES_28,
    DEFAULT_POINTS,
    GRID_SIZE,
    MAP_NAMES,
    MAX_STEP_RANGE,
    MAX_TREASURES,
    NUM_OBSTACLES,
    RANDOM_MIN_SPACING,
    TALENT_COOLDOWN_RANGE,
    TALENT_TYPE_SUPER_FLASH,
)

POSITION_HELP = "[x, z], a list of two ints in 0..127"
ALLOWED = {
    "start": POSITION_HELP,
    "end": POSITION_HELP + ", different from start",
    "buff": POSITION_HELP + ", different from start and end",
    "start_random": "true or false (a bool)",
    "end_random": "true or false (a bool)",
    "buff_random": "true or false (a bool)",
    "buff_cooldown": f"an int in {BUFF_COOLDOWN_RANGE[0]}..{BUFF_COOLDOWN_RANGE[1]}",
    "talent_cooldown": f"an int in {TALENT_COOLDOWN_RANGE[0]}..{TALENT_COOLDOWN_RANGE[1]}",
    "treasure_random": "true or false (a bool)",
    "treasure_count": f"an int in 0..{MAX_TREASURES}",
    "treasure_pos": f"a list of 0..{MAX_TREASURES} distinct [x, z] pairs of ints in 0..127, none on the start, end or buff",
    "obstacle_random": "true or false (a bool)",
    "obstacle_id": f"a list of 0..{NUM_OBSTACLES} distinct ints in 1..{NUM_OBSTACLES}",
    "talent_type": f"{TALENT_TYPE_SUPER_FLASH} (super flash)",
    "max_step": f"an int in {MAX_STEP_RANGE[0]}..{MAX_STEP_RANGE[1]}",
}
OPTIONAL = ("talent_type",)
REQUIRED = tuple(k for k in ALLOWED if k not in OPTIONAL)
MAP_NAME_HELP = " | ".join(repr(n) for n in MAP_NAMES)


class UsrConfV2Error(UsrConfError):
    """An invalid v2 usr_conf (or one that does not fit the map); the message names the key."""


def default_usr_conf(map_name: str = "map_cherry") -> dict:
    """The official package's train_env_conf.toml of `map_name`, as parsed (a new dict):
    map_cherry = 28.1.1 (fixed start, random end, fixed buff, 8 fixed chests, one random
    obstacle, 2000 steps); map_fish = 24.0.2 and map_butterfly = 24.0.3 (random start, end and
    buff, no chests, no obstacle, 1000 steps)."""
    if map_name not in MAP_NAMES:
        raise UsrConfV2Error(f"map_name = {map_name!r} is invalid: allowed {MAP_NAME_HELP}")
    points = DEFAULT_POINTS[map_name]
    table = {"start": list(points["start"]), "end": list(points["end"]), "buff": list(points["buff"]),
             "buff_cooldown": 100, "talent_cooldown": 100, "treasure_random": False, "treasure_count": 8}
    if map_name == "map_cherry":
        table.update(start_random=False, end_random=True, buff_random=False,
                     treasure_pos=[list(p) for p in CHERRY_TREASURES_28], obstacle_random=True, obstacle_id=[], max_step=2000)
    else:
        table.update(start_random=True, end_random=True, buff_random=True, treasure_pos=[], obstacle_random=False,
                     obstacle_id=[], talent_type=TALENT_TYPE_SUPER_FLASH, max_step=1000)
    return {"env_conf": {"map_name": map_name, map_name: table}}


@dataclass(frozen=True)
class EpisodeConf:
    """A valid usr_conf, flat (map independent)."""

    map_name: str | None
    start: tuple[int, int]
    end: tuple[int, int]
    buff: tuple[int, int]
    start_random: bool
    end_random: bool
    buff_random: bool
    buff_cooldown: int
    talent_cooldown: int
    treasure_random: bool
    treasure_count: int
    treasure_pos: tuple[tuple[int, int], ...]
    obstacle_random: bool
    obstacle_id: tuple[int, ...]
    talent_type: int
    max_step: int


@dataclass
class Episode:
    """An episode resolved on a map: every point drawn, the obstacles chosen."""

    conf: EpisodeConf
    start: tuple[int, int]
    end: tuple[int, int]
    buff: tuple[int, int]
    treasures: list[tuple[int, int]]
    obstacle_ids: list[int]
    max_step: int = field(init=False)

    def __post_init__(self):
        self.max_step = self.conf.max_step


class _Where:
    """Names keys as the package wrote them: usr_conf['env_conf']['map_cherry']['start']."""

    def __init__(self, prefix: str):
        self.prefix = prefix

    def key(self, key: str) -> str:
        return f"{self.prefix}[{key!r}]"

    def fail(self, key: str, value, detail: str = "") -> UsrConfV2Error:
        extra = f" ({detail})" if detail else ""
        return UsrConfV2Error(f"{self.key(key)} = {value!r} is invalid{extra}: allowed {ALLOWED[key]}")


def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _int_in(where: _Where, key: str, value, low: int, high: int) -> int:
    if not _is_int(value):
        raise where.fail(key, value, f"a {type(value).__name__}, not an int")
    if not low <= value <= high:
        raise where.fail(key, value, "out of range")
    return int(value)


def _bool(where: _Where, key: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise where.fail(key, value, f"a {type(value).__name__}, not a bool")
    return bool(value)


def _point(where: _Where, key: str, value, whole=None) -> tuple[int, int]:
    shown = value if whole is None else whole
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise where.fail(key, shown, f"{value!r} is not an [x, z] pair")
    for v in value:
        if not _is_int(v):
            raise where.fail(key, shown, f"{v!r} is not an int")
        if not 0 <= v < GRID_SIZE:
            raise where.fail(key, shown, f"{v} is out of range")
    return int(value[0]), int(value[1])


def _table(usr_conf) -> tuple[dict, str | None, _Where]:
    """(the map's table, map_name or None, how to name its keys) of any accepted form."""
    if not isinstance(usr_conf, dict):
        raise UsrConfV2Error(f"usr_conf must be a dict like {{'env_conf': {{'map_name': ..., <map_name>: {{...}}}}}}, "
                             f"got {type(usr_conf).__name__}")
    if "env_conf" in usr_conf:
        for key in usr_conf:
            if key != "env_conf":
                raise UsrConfV2Error(f"unknown key {key!r} in usr_conf; allowed keys: env_conf")
        env_conf, where = usr_conf["env_conf"], "usr_conf['env_conf']"
        if not isinstance(env_conf, dict):
            raise UsrConfV2Error(f"usr_conf['env_conf'] must be a dict, got {type(env_conf).__name__}")
    else:
        env_conf, where = usr_conf, "usr_conf"
    map_name = env_conf.get("map_name")
    if map_name is not None and map_name not in MAP_NAMES:
        raise UsrConfV2Error(f"{where}['map_name'] = {map_name!r} is invalid: allowed {MAP_NAME_HELP}")
    if map_name is not None and map_name in env_conf:  # the toml tree
        for key in env_conf:
            if key not in ("map_name",) + MAP_NAMES:
                raise UsrConfV2Error(f"unknown key {key!r} in {where}; allowed keys: map_name, {map_name}"
                                     f"{did_you_mean(key, ('map_name', map_name))}")
        table = env_conf[map_name]
        where = f"{where}[{map_name!r}]"
        if not isinstance(table, dict):
            raise UsrConfV2Error(f"{where} must be a dict of {', '.join(REQUIRED)}, got {type(table).__name__}")
        return table, map_name, _Where(where)
    if any(name in env_conf for name in MAP_NAMES):
        names = [n for n in MAP_NAMES if n in env_conf]
        raise UsrConfV2Error(f"{where} has the table {names[0]!r} but map_name = {map_name!r}: "
                             f"allowed map_name {' | '.join(repr(n) for n in names)}")
    table = {k: v for k, v in env_conf.items() if k != "map_name"}
    return table, map_name, _Where(where)


def validate_usr_conf(usr_conf) -> EpisodeConf:
    """Check a v2 usr_conf against the official key ranges; returns it flat."""
    table, map_name, where = _table(usr_conf)
    for key in table:
        if key not in ALLOWED:
            raise UsrConfV2Error(f"unknown key {key!r} in {where.prefix}; allowed keys: {', '.join(ALLOWED)}"
                                 f"{did_you_mean(key, ALLOWED)}")
    for key in REQUIRED:
        if key not in table:
            raise UsrConfV2Error(f"{where.prefix} is missing {key!r}: allowed {ALLOWED[key]}")
    start = _point(where, "start", table["start"])
    end = _point(where, "end", table["end"])
    buff = _point(where, "buff", table["buff"])
    flags = {k: _bool(where, k, table[k]) for k in ("start_random", "end_random", "buff_random", "treasure_random", "obstacle_random")}
    buff_cooldown = _int_in(where, "buff_cooldown", table["buff_cooldown"], *BUFF_COOLDOWN_RANGE)
    talent_cooldown = _int_in(where, "talent_cooldown", table["talent_cooldown"], *TALENT_COOLDOWN_RANGE)
    treasure_count = _int_in(where, "treasure_count", table["treasure_count"], 0, MAX_TREASURES)
    max_step = _int_in(where, "max_step", table["max_step"], *MAX_STEP_RANGE)
    talent_type = _int_in(where, "talent_type", table.get("talent_type", TALENT_TYPE_SUPER_FLASH),
                          TALENT_TYPE_SUPER_FLASH, TALENT_TYPE_SUPER_FLASH)

    raw = table["treasure_pos"]
    if not isinstance(raw, (list, tuple)):
        raise where.fail("treasure_pos", raw, f"a {type(raw).__name__}, not a list")
    if len(raw) > MAX_TREASURES:
        raise where.fail("treasure_pos", raw, f"{len(raw)} positions")
    treasure_pos = tuple(_point(where, "treasure_pos", p, raw) for p in raw)
    if len(set(treasure_pos)) != len(treasure_pos):
        twice = next(p for p in treasure_pos if treasure_pos.count(p) > 1)
        raise where.fail("treasure_pos", raw, f"{list(twice)} repeats")

    raw = table["obstacle_id"]
    if not isinstance(raw, (list, tuple)):
        raise where.fail("obstacle_id", raw, f"a {type(raw).__name__}, not a list")
    if len(raw) > NUM_OBSTACLES:
        raise where.fail("obstacle_id", raw, f"{len(raw)} ids")
    for item in raw:
        if not _is_int(item) or not 1 <= item <= NUM_OBSTACLES:
            raise where.fail("obstacle_id", raw, f"{item!r} is not an id in 1..{NUM_OBSTACLES}")
    obstacle_id = tuple(int(i) for i in raw)
    if len(set(obstacle_id)) != len(obstacle_id):
        raise where.fail("obstacle_id", raw, "ids repeat")

    # Fixed points the episode uses must differ (random points never collide with anything).
    if not flags["start_random"] and not flags["end_random"] and end == start:
        raise where.fail("end", list(end), "equals start")
    if not flags["buff_random"]:
        for other in ("start", "end"):
            if not flags[f"{other}_random"] and buff == (start if other == "start" else end):
                raise where.fail("buff", list(buff), f"equals {other}")
    if not flags["treasure_random"]:
        for other, point in (("start", start), ("end", end), ("buff", buff)):
            if not flags[f"{other}_random"] and point in treasure_pos:
                raise where.fail("treasure_pos", [list(p) for p in treasure_pos], f"{list(point)} is the {other}")
    return EpisodeConf(map_name, start, end, buff, flags["start_random"], flags["end_random"], flags["buff_random"],
                       buff_cooldown, talent_cooldown, flags["treasure_random"], treasure_count, treasure_pos,
                       flags["obstacle_random"], obstacle_id, talent_type, max_step)


def _where_of(usr_conf) -> _Where:
    try:
        return _table(usr_conf)[2]
    except UsrConfV2Error:  # pragma: no cover - validated before
        return _Where("usr_conf")


def resolve_episode(usr_conf, game_map, rng: np.random.Generator) -> Episode:
    """Validate `usr_conf`, then place it on `game_map` (a realm.back_to_the_realm_v2.maps.V2Map).

    ▶ Obstacles first: fixed `obstacle_id`s must exist on the map and cover no fixed point; a
    random obstacle is drawn uniformly from the map's obstacles that cover no fixed point and
    leave the fixed points connected (none when none qualifies). Then random points, in the order
    start, end, buff, chests: uniform over the passable cells outside the active obstacles that
    the start reaches, at Chebyshev distance >= RANDOM_MIN_SPACING from every point already
    placed. A fixed point on a wall, on an active obstacle or cut off from the start is an error.
    """
    conf = validate_usr_conf(usr_conf)
    where = _where_of(usr_conf)
    fixed = _fixed_points(conf)
    _check_fixed_cells(fixed, conf, game_map, where)
    obstacle_ids = _choose_obstacles(conf, fixed, game_map, rng, where)
    points = _RandomPoints(game_map, obstacle_ids, [p for ps in fixed.values() for p in ps], rng, where)
    start, reach = points.start(conf)
    end = points.draw(reach) if conf.end_random else conf.end
    buff = points.draw(reach) if conf.buff_random else conf.buff
    treasures = ([points.draw(reach) for _ in range(conf.treasure_count)] if conf.treasure_random
                 else list(conf.treasure_pos))
    return Episode(conf, start, end, buff, treasures, obstacle_ids)


def _fixed_points(conf) -> dict[str, list]:
    """The usr_conf's fixed points by key (start, end, buff, treasure_pos)."""
    fixed = {}
    if not conf.start_random:
        fixed["start"] = [conf.start]
    if not conf.end_random:
        fixed["end"] = [conf.end]
    if not conf.buff_random:
        fixed["buff"] = [conf.buff]
    if not conf.treasure_random:
        fixed["treasure_pos"] = list(conf.treasure_pos)
    return fixed


def _shown(key: str, conf, x: int, z: int):
    """What an error shows of a fixed point's key: the whole chest list, else the point."""
    return [list(p) for p in conf.treasure_pos] if key == "treasure_pos" else [x, z]


def _check_fixed_cells(fixed: dict, conf, game_map, where) -> None:
    """Every fixed point on a passable cell, all of them reachable from the first."""
    for key, points in fixed.items():
        for x, z in points:
            if not game_map.is_passable(x, z):
                raise where.fail(key, _shown(key, conf, x, z), f"cell [{x}, {z}] is a wall of map {game_map.name}")
    fixed_points = [p for points in fixed.values() for p in points]
    if not fixed_points:
        return
    reach = game_map.reachable_from(*fixed_points[0])
    for key, points in fixed.items():
        for x, z in points:
            if not reach[z, x]:
                raise where.fail(key, _shown(key, conf, x, z),
                                 f"cell [{x}, {z}] is cut off from {list(fixed_points[0])} on map {game_map.name}")


def _choose_obstacles(conf, fixed: dict, game_map, rng: np.random.Generator, where) -> list[int]:
    """The episode's active obstacles: a random one that covers no fixed point and keeps them
    connected, or the usr_conf's own, checked the same way."""
    fixed_points = [p for points in fixed.values() for p in points]

    def connected(obstacle_ids) -> bool:
        if not fixed_points:
            return True
        reach = game_map.reachable_from(*fixed_points[0], obstacle_ids)
        return all(reach[z, x] for x, z in fixed_points)

    if conf.obstacle_random:
        candidates = [oid for oid in sorted(game_map.obstacles)
                      if not any(oid in game_map.obstacle_at(x, z) for x, z in fixed_points) and connected([oid])]
        return [int(candidates[int(rng.integers(len(candidates)))])] if candidates else []
    obstacle_ids = list(conf.obstacle_id)
    for oid in obstacle_ids:
        if oid not in game_map.obstacles:
            raise where.fail("obstacle_id", list(conf.obstacle_id),
                             f"map {game_map.name} has obstacles {sorted(game_map.obstacles) or 'none'}")
    for key, points in fixed.items():
        for x, z in points:
            covering = [oid for oid in game_map.obstacle_at(x, z) if oid in obstacle_ids]
            if covering:
                raise where.fail("obstacle_id", list(conf.obstacle_id), f"obstacle {covering[0]} covers the {key} [{x}, {z}]")
    if not connected(obstacle_ids):
        raise where.fail("obstacle_id", list(conf.obstacle_id), "these obstacles cut the fixed points "
                         f"{[list(p) for p in fixed_points]} apart on map {game_map.name}")
    return obstacle_ids


class _RandomPoints:
    """Draws an episode's random points, each at Chebyshev distance >= RANDOM_MIN_SPACING from
    every point placed before it (the fixed ones first)."""

    def __init__(self, game_map, obstacle_ids: list[int], fixed_points: list, rng: np.random.Generator, where):
        self.game_map, self.obstacle_ids, self.rng, self.where = game_map, obstacle_ids, rng, where
        self.fixed_points = fixed_points
        self.placed = list(fixed_points)
        self.grid = game_map.grid_with(obstacle_ids)

    def draw(self, pool_grid) -> tuple[int, int]:
        pool = pool_grid.copy()
        for x, z in self.placed:
            r = RANDOM_MIN_SPACING - 1
            pool[max(z - r, 0): z + r + 1, max(x - r, 0): x + r + 1] = False
        zs, xs = np.nonzero(pool)
        if len(xs) == 0:
            raise UsrConfV2Error(f"{self.where.prefix}: no free cell left for a random point on map {self.game_map.name}")
        k = int(self.rng.integers(len(xs)))
        point = (int(xs[k]), int(zs[k]))
        self.placed.append(point)
        return point

    def start(self, conf) -> tuple[tuple[int, int], np.ndarray]:
        """(the start, the cells it reaches): fixed, or drawn where the fixed points are reachable."""
        if not conf.start_random:
            return conf.start, self.game_map.reachable_from(*conf.start, self.obstacle_ids)
        start = self.draw(self.grid)
        reach = self.game_map.reachable_from(*start, self.obstacle_ids)
        if self.fixed_points and not all(reach[z, x] for x, z in self.fixed_points):
            # ▶ a random start is drawn where the fixed points are reachable
            self.placed.pop()
            start = self.draw(self.grid & self.game_map.reachable_from(*self.fixed_points[0], self.obstacle_ids))
            reach = self.game_map.reachable_from(*start, self.obstacle_ids)
        return start, reach


