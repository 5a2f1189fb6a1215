"""The v2 map: a 128×128 grid of integer cells and its six dynamic obstacles.

Official map files are `map_data/<name>.json` with `{"Flags": [16384 ints]}`, `Flags[z * 128 + x]`,
1 = passable (as in the 2024 files); the obstacles come from a json of their own,
`{"1": [[x, z], ...], ..., "6": [...]}`. Generated maps (realm/back_to_the_realm_v2/generator.py) build the same
`V2Map`. Grids are indexed `[z, x]` like the 2024 `realm.back_to_the_realm.maps.Map`.

Movement is 8-connected and a diagonal step needs both orthogonal neighbours free, so
connectivity is the 4-connected one of `realm.back_to_the_realm.maps.bfs_distances`; `move_distances` gives the
number of single-cell moves instead (the v2 planner's metric).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import numpy as np

from realm.back_to_the_realm.maps import UNREACHABLE, MapError, bfs_distances, frontier_distances
from realm.back_to_the_realm_v2.constants import DIRECTIONS, GRID_SIZE, MAP_NAMES, NUM_CELLS, NUM_OBSTACLES

FLAGS_ORDERS = ("zx", "xz")  # Flags[z * 128 + x] (▶ default, as the 2024 files) | Flags[x * 128 + z]
#: An obstacle "closes its corridor" when crossing it costs at least this many extra moves.
MIN_OBSTACLE_DETOUR = 20
LABEL_MEMO = 64  # obstacle sets whose connected parts a map keeps (64 KiB each)


class V2Map:
    """`passable[z, x]` (bool, read-only), `obstacles` {id: array of (x, z) cells}, `name`, and
    `map_name` (the official map it stands for: which default points a default episode uses)."""

    def __init__(self, passable: np.ndarray, obstacles: dict[int, np.ndarray] | None, name: str, map_name: str = "map_cherry"):
        passable = np.array(passable, dtype=bool)
        if passable.shape != (GRID_SIZE, GRID_SIZE):
            raise MapError(f"map {name!r}: grid must be {GRID_SIZE}x{GRID_SIZE}, got {passable.shape}")
        if map_name not in MAP_NAMES:
            raise MapError(f"map {name!r}: map_name = {map_name!r} is invalid: allowed {' | '.join(MAP_NAMES)}")
        passable.setflags(write=False)
        self.passable = passable
        self.name = name
        self.map_name = map_name
        self.obstacles: dict[int, np.ndarray] = {}
        for oid, cells in sorted((obstacles or {}).items()):
            cells = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
            if not 1 <= oid <= NUM_OBSTACLES:
                raise MapError(f"map {name!r}: obstacle id {oid} is invalid: allowed 1..{NUM_OBSTACLES}")
            if len(cells) == 0:
                raise MapError(f"map {name!r}: obstacle {oid} has no cells")
            for x, z in cells.tolist():
                if not self.is_passable(x, z):
                    raise MapError(f"map {name!r}: obstacle {oid} cell ({x}, {z}) is not a passable cell of the map")
            cells.setflags(write=False)
            self.obstacles[int(oid)] = cells
        self.passable_flat = passable.reshape(-1).tolist()  # [z * 128 + x], for per-step lookups
        self._label_memo: OrderedDict = OrderedDict()
        self._obstacles_on: dict[tuple[int, int], list[int]] = {}
        for oid, cells in self.obstacles.items():
            for x, z in cells.tolist():
                self._obstacles_on.setdefault((x, z), []).append(oid)

    @property
    def num_passable(self) -> int:
        return int(self.passable.sum())

    def is_passable(self, x: int, z: int) -> bool:
        return 0 <= x < GRID_SIZE and 0 <= z < GRID_SIZE and bool(self.passable[z, x])

    def grid_with(self, obstacle_ids=()) -> np.ndarray:
        """The passable grid [z, x] with the given obstacles closed (a new writable array)."""
        grid = self.passable.copy()
        for oid in obstacle_ids:
            cells = self.obstacles[oid]
            grid[cells[:, 1], cells[:, 0]] = False
        return grid

    def labels(self, obstacle_ids=()) -> np.ndarray:
        """Connected parts [z, x] with the given obstacles closed: 0 blocked, 1.. one per part
        (read-only; a map keeps the latest LABEL_MEMO of them)."""
        key = tuple(sorted(obstacle_ids))
        found = self._label_memo.get(key)
        if found is None:
            found = component_labels(self.grid_with(key))
            found.setflags(write=False)
            self._label_memo[key] = found
            if len(self._label_memo) > LABEL_MEMO:
                self._label_memo.popitem(last=False)
        else:
            self._label_memo.move_to_end(key)
        return found

    def reachable_from(self, x: int, z: int, obstacle_ids=()) -> np.ndarray:
        """The cells [z, x] reachable from (x, z) with the given obstacles closed (a new array)."""
        labels = self.labels(obstacle_ids)
        label = labels[z, x]
        if label == 0:
            return np.zeros_like(labels, dtype=bool)
        return labels == label

    def obstacle_at(self, x: int, z: int) -> list[int]:
        """Ids of the obstacles that cover cell (x, z)."""
        return list(self._obstacles_on.get((int(x), int(z)), ()))

    def __repr__(self) -> str:
        return f"V2Map({self.name!r}, passable={self.num_passable}, obstacles={sorted(self.obstacles)})"


def component_labels(passable: np.ndarray) -> np.ndarray:
    """The connected parts of a grid [z, x]: 0 blocked, 1, 2, ... one label per part."""
    labels = np.zeros(passable.shape, dtype=np.int32)
    left = passable.copy()
    label = 0
    while left.any():
        zs, xs = np.nonzero(left)
        reached = bfs_distances(left, int(xs[0]), int(zs[0])) >= 0
        label += 1
        labels[reached] = label
        left &= ~reached
    return labels


def component_sizes(passable: np.ndarray) -> list[int]:
    """Sizes of the connected parts of a grid (largest first)."""
    counts = np.bincount(component_labels(passable).ravel())[1:]
    return sorted(counts.tolist(), reverse=True)


def move_distances(passable: np.ndarray, x: int, z: int) -> np.ndarray:
    """Fewest single-cell moves from (x, z) to every cell (8 directions, no corner cutting);
    UNREACHABLE where none. Indexed [z, x]. About 3 ms on a v2 map."""
    return frontier_distances(passable, x, z, _eight_way_ring)


def _eight_way_ring(frontier: np.ndarray, free: np.ndarray, stride: int) -> np.ndarray:
    rings = []
    for dx, dz in DIRECTIONS:
        ring = frontier + (dz * stride + dx)
        if dx and dz:  # a diagonal needs both orthogonal neighbours free
            ring = ring[free[frontier + dx] & free[frontier + dz * stride]]
        rings.append(ring)
    return np.concatenate(rings)


def obstacle_detour(m: V2Map, oid: int) -> int:
    """Extra moves the obstacle forces between the free cells on its sides (-1: it disconnects them)."""
    return bar_detour(m.passable, m.obstacles[oid])


def bar_detour(passable: np.ndarray, cells) -> int:
    """Extra moves that closing `cells` ((x, z) pairs) forces between the free cells around them
    (-1 when it disconnects them)."""
    bar = {(int(x), int(z)) for x, z in np.asarray(cells).tolist()}
    closed = passable.copy()
    for x, z in bar:
        closed[z, x] = False
    sides = sorted({(x + dx, z + dz) for x, z in bar for dx, dz in DIRECTIONS
                    if (x + dx, z + dz) not in bar and 0 <= x + dx < GRID_SIZE and 0 <= z + dz < GRID_SIZE
                    and passable[z + dz, x + dx]})
    if not sides:
        return 0
    ax, az = sides[0]
    before = move_distances(passable, ax, az)
    after = move_distances(closed, ax, az)
    worst = 0
    for x, z in sides[1:]:
        if after[z, x] < 0:
            return -1
        worst = max(worst, int(after[z, x] - before[z, x]))
    return worst


def validate_obstacles(m: V2Map) -> list[str]:
    """What keeps the map's obstacles from the v2 family: each one must leave the map one
    connected part and close its corridor (a detour of at least MIN_OBSTACLE_DETOUR moves)."""
    problems = []
    if len(component_sizes(m.passable)) != 1:
        problems.append(f"the map is not one connected part: {component_sizes(m.passable)}")
    for oid in sorted(m.obstacles):
        parts = component_sizes(m.grid_with([oid]))
        if len(parts) != 1:
            problems.append(f"obstacle {oid} splits the map into parts of {parts} cells")
            continue
        detour = obstacle_detour(m, oid)
        if detour < MIN_OBSTACLE_DETOUR:
            problems.append(f"obstacle {oid} does not close a corridor (detour {detour} moves, want >= {MIN_OBSTACLE_DETOUR})")
    return problems


def _read_json(path: Path, what: str):
    """The parsed file, or MapError naming it: missing, unreadable, not UTF-8 text, not JSON."""
    if not path.is_file():
        raise MapError(f"{what} file not found: {path}")
    try:
        text = path.read_bytes().decode("utf-8-sig")  # a byte-order mark, as some editors write, is fine
    except OSError as e:
        raise MapError(f"{what} file {path} cannot be read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise MapError(f"{what} file {path} is not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}): "
                       f"want UTF-8 JSON") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise MapError(f"{what} file {path} is not valid JSON: {e}") from e


def _bad_flags(flags: list) -> str | None:
    """'7 (169 cells, first Flags[0]), 'x' (1 cell, first Flags[5])': the values of `flags` that
    are neither 0 nor 1, at most five of them; None when all are 0 or 1."""
    bad: dict[str, list[int]] = {}
    for i, value in enumerate(flags):
        if not (type(value) is int and value in (0, 1)):
            seen = bad.setdefault(repr(value), [0, i])
            seen[0] += 1
    if not bad:
        return None
    shown = [f"{value} ({count} cell{'s' if count != 1 else ''}, first Flags[{first}])"
             for value, (count, first) in list(bad.items())[:5]]
    return ", ".join(shown) + (f" and {len(bad) - 5} more values" if len(bad) > 5 else "")


def read_flags(map_file: str | Path, flags_order: str = "zx") -> np.ndarray:
    """The passable grid [z, x] of a `{"Flags": [...]}` map file."""
    if flags_order not in FLAGS_ORDERS:
        raise ValueError(f"flags_order = {flags_order!r} is invalid: allowed {' | '.join(FLAGS_ORDERS)}")
    map_file = Path(map_file)
    raw = _read_json(map_file, "map")
    if not isinstance(raw, dict) or "Flags" not in raw:
        raise MapError(f"map file {map_file}: missing key 'Flags' (a list of {NUM_CELLS} ints, Flags[z*128+x], 1 = passable)")
    for key in ("Width", "Height"):
        if key in raw and raw[key] != GRID_SIZE:
            raise MapError(f"map file {map_file}: {key} must be {GRID_SIZE}, got {raw[key]!r}")
    flags = raw["Flags"]
    if not isinstance(flags, list) or len(flags) != NUM_CELLS:
        got = len(flags) if isinstance(flags, list) else type(flags).__name__
        raise MapError(f"map file {map_file}: Flags must hold {NUM_CELLS} values, got {got}")
    bad = _bad_flags(flags)
    if bad is not None:
        raise MapError(f"map file {map_file}: Flags must hold 0 (blocked) or 1 (passable) only; found {bad}")
    grid = np.asarray(flags, dtype=np.int8).reshape(GRID_SIZE, GRID_SIZE) == 1
    return grid if flags_order == "zx" else grid.T.copy()


def read_obstacles(obstacles_file: str | Path) -> dict[int, np.ndarray]:
    """`{"1": [[x, z], ...], ...}` -> {1: array of (x, z)}; ids 1..6."""
    obstacles_file = Path(obstacles_file)
    raw = _read_json(obstacles_file, "obstacles")
    if not isinstance(raw, dict):
        raise MapError(f"obstacles file {obstacles_file}: want an object {{\"1\": [[x, z], ...], ...}}")
    out = {}
    for key, cells in raw.items():
        try:
            oid = int(key)
        except ValueError:
            raise MapError(f"obstacles file {obstacles_file}: key {key!r} is not an obstacle id 1..{NUM_OBSTACLES}") from None
        arr = np.asarray(cells)
        if arr.ndim != 2 or arr.shape[1] != 2 or not np.issubdtype(arr.dtype, np.integer):
            raise MapError(f"obstacles file {obstacles_file}: obstacle {key} must be a list of [x, z] int pairs")
        out[oid] = arr
    return out


def _map_name_of(stem: str) -> str:
    for known in MAP_NAMES:
        if stem.startswith(known):
            return known
    return MAP_NAMES[0]


def load_v2_map(map_file: str | Path, obstacles_file: str | Path | None = None, *, map_name: str | None = None,
                flags_order: str = "zx") -> V2Map:
    """An official `map_data/<name>.json` (plus its obstacles json) as a V2Map.

    `map_name` (which official map's default points a default episode uses) defaults to the
    known name the file's stem starts with ("map_cherry" otherwise).
    """
    map_file = Path(map_file)
    grid = read_flags(map_file, flags_order)
    obstacles = read_obstacles(obstacles_file) if obstacles_file is not None else {}
    return V2Map(grid, obstacles, name=map_file.name, map_name=map_name or _map_name_of(map_file.stem))


@lru_cache(maxsize=8)
def load_v2_map_cached(map_file: str, obstacles_file: str | None = None, map_name: str | None = None,
                       flags_order: str = "zx") -> V2Map:
    """V2Maps are immutable: envs in one process share one instance per file."""
    return load_v2_map(map_file, obstacles_file, map_name=map_name, flags_order=flags_order)
