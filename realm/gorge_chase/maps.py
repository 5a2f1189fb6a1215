"""The gorge_chase map: a 128x128 grid of road and obstacle cells, how to load it (the official
`gorge_chase_map_<id>.json` files, or the 128-line `.txt` grid form), and the per-map tables a
step needs (cell neighbours, shortest-path distance rows, the 21x21 view windows).

`GorgeMap.walkable[z, x]` is a read-only bool array (True = road). Cells are addressed by
their flat id `c = z * 128 + x`; distance rows are indexed by the compact road index
`index[c]` (0..num_road-1) so that a row costs 2 bytes per road cell. The rows of every map in
a process share one bounded cache (`RowCache`): a run on many maps keeps its memory flat.

Official JSON: `{"name", "width": 128, "height": 128, "cells": [{"x", "z", "type_id", "height"}, ...],
"objects": [], "metadata": {...}}`, `type_id` 3 = road, 1 = obstacle. The `.txt` form has 128
lines of 128 characters, '.' road and '#' obstacle (line = z, character = x).

Every problem raises `GorgeMapError` naming the file and what is wrong.
"""
from __future__ import annotations

import itertools
import json
from array import array
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import numpy as np

from realm.gorge_chase.constants import DIRECTIONS, GRID_SIZE, OPEN_MAP_IDS, VIEW_RADIUS
from realm.back_to_the_realm.maps import MapError

ROAD_TYPE, OBSTACLE_TYPE = 3, 1
UNREACHABLE = 0xFFFF
#: Distance metrics with a per-map table (the heuristics are computed directly)
TABLE_METRICS = ("bfs4", "bfs8")
GENERATED_IDS = range(1, 100_000)  # ids a generated source answers to (1..10 train, 11.. held out)
MAP_FILE_PATTERN = "gorge_chase_map_{id}.json"
GRID_FILE_PATTERN = "map_{id}.txt"
ROW_CACHE_BYTES = 512 << 20  # distance rows a process keeps over all its maps (about 55 k rows of a generated map)


class RowCache:
    """Distance fields of the maps of a process, least recently used dropped once they hold
    more than `max_bytes` (a dropped field is grown again when asked for). Without a bound an
    aisrv on 48 maps reached 4 GB in an hour: a row per hero cell a monster chased on each map."""

    def __init__(self, max_bytes: int = ROW_CACHE_BYTES):
        if max_bytes <= 0:
            raise ValueError(f"RowCache max_bytes = {max_bytes}: allowed a positive number of bytes")
        self.max_bytes = max_bytes
        self.bytes = 0
        self._fields: OrderedDict = OrderedDict()

    def __len__(self) -> int:
        return len(self._fields)

    def get(self, key):
        field = self._fields.get(key)
        if field is not None:
            self._fields.move_to_end(key)
        return field

    def put(self, key, field: "DistanceField") -> None:
        self._fields[key] = field
        self.bytes += field.nbytes
        while self.bytes > self.max_bytes and len(self._fields) > 1:
            _, dropped = self._fields.popitem(last=False)
            self.bytes -= dropped.nbytes

    def count(self, owner: int, metric: str) -> int:
        """Fields kept for one map's metric (a diagnostic: walks the cache)."""
        return sum(1 for o, m, _ in self._fields if o == owner and m == metric)


PROCESS_ROWS = RowCache()  # one per process, as the maps themselves (generated_map, load_map_cached)
_MAP_TOKENS = itertools.count()


class GorgeMapError(MapError):
    """A map file or grid that is not a valid gorge_chase map; the message names the file."""


class GorgeMap:
    """One map: `walkable[z, x]`, `name`, and lazily built tables shared by every env on it."""

    def __init__(self, walkable, name: str = "map", *, check: bool = True, rows: RowCache = PROCESS_ROWS):
        walkable = np.array(walkable, dtype=bool)
        if walkable.shape != (GRID_SIZE, GRID_SIZE):
            raise GorgeMapError(f"map {name!r}: grid must be {GRID_SIZE}x{GRID_SIZE}, got {walkable.shape}")
        if check:
            check_connected(walkable, name)
        walkable.setflags(write=False)
        self.walkable = walkable
        self.name = name
        self.walkable_flat = walkable.reshape(-1).tolist()  # [c], for per-step lookups
        flat = np.flatnonzero(walkable.reshape(-1))
        self.road_cells = flat.tolist()  # flat ids, row-major
        self.num_road = len(self.road_cells)
        index = np.full(GRID_SIZE * GRID_SIZE, -1, dtype=np.int64)
        index[flat] = np.arange(len(flat))
        self.index = index.tolist()  # flat id -> compact index (-1 off road)
        self._rows = rows
        self._token = next(_MAP_TOKENS)  # this map's part of a cache key (names can repeat)
        self._neighbours: dict[str, list] = {}
        padded = np.zeros((GRID_SIZE + 2 * VIEW_RADIUS,) * 2, dtype=np.uint8)
        padded[VIEW_RADIUS:-VIEW_RADIUS, VIEW_RADIUS:-VIEW_RADIUS] = walkable
        self._padded = padded

    def __repr__(self) -> str:
        return f"GorgeMap({self.name!r}, road cells={self.num_road})"

    def is_walkable(self, x: int, z: int) -> bool:
        return 0 <= x < GRID_SIZE and 0 <= z < GRID_SIZE and bool(self.walkable[z, x])

    # ---- per-map tables -----------------------------------------------------------------------

    def orthogonal_neighbours(self) -> list:
        """[c] -> tuple of (flat id, axis) of the walkable E, W, S, N neighbours (the script's
        order); axis 0 = a move along x, 1 = along z. Empty for obstacle cells."""
        return self._cell_table("orth", _orthogonal_steps)

    def moves8(self) -> list:
        """[c] -> tuple of flat ids reachable in one 8-connected step under the diagonal rule
        (target walkable; a diagonal needs one of its two orthogonal cells walkable)."""
        return self._cell_table("moves8", _diagonal_rule_steps)

    def _cell_table(self, key: str, steps_from) -> list:
        """[c] -> tuple(steps_from(walkable, x, z)) for walkable cells, () for obstacles; built once."""
        if key not in self._neighbours:
            w = self.walkable_flat
            self._neighbours[key] = [tuple(steps_from(w, c % GRID_SIZE, c // GRID_SIZE)) if w[c] else ()
                                     for c in range(GRID_SIZE * GRID_SIZE)]
        return self._neighbours[key]

    def distance_field(self, cell: int, metric: str = "bfs4") -> "DistanceField":
        """The (lazily grown) shortest-path distances from road cell `cell` (flat id); kept in
        the process's row cache, so all envs of the process on this map share it."""
        key = (self._token, metric, cell)
        field = self._rows.get(key)
        if field is None:
            if not (0 <= cell < GRID_SIZE * GRID_SIZE and self.walkable_flat[cell]):
                raise ValueError(f"cell {cell} is not a road cell of map {self.name!r}")
            field = DistanceField(self._adjacency(metric), self.index[cell], self.num_road)
            self._rows.put(key, field)
        return field

    def distance_row(self, cell: int, metric: str = "bfs4") -> array:
        """Shortest-path lengths (in cells) from road cell `cell` (flat id) to every road cell,
        indexed by the compact index; UNREACHABLE where there is no path."""
        field = self.distance_field(cell, metric)
        field.complete()
        return field.dist

    def distance(self, a: int, b: int, metric: str = "bfs4") -> int:
        """Path length between road cells a and b (flat ids), UNREACHABLE if none."""
        field = self._rows.get((self._token, metric, b))
        if field is None:
            field = self._rows.get((self._token, metric, a))
            if field is not None:
                return field.get(self.index[b])
            field = self.distance_field(b, metric)
        return field.get(self.index[a])

    def shortest_path(self, start: int, goal: int, metric: str = "bfs4") -> list:
        """A shortest path of road cells (flat ids) from `start` to `goal` under `metric`, both
        ends included: from each cell the first neighbour one step nearer `goal` (bfs4: E, W, S, N;
        bfs8: E, NE, N, NW, W, SW, S, SE). [start] when `goal` cannot be reached. What the game
        script's `pathfinding.find_path` gives a monster (its tie order is the engine's, not public)."""
        field = self.distance_field(goal, metric)
        index = self.index
        steps = (self.orthogonal_neighbours() if metric == "bfs4" else self.moves8())
        path = [start]
        d = field.get(index[start])
        if d == UNREACHABLE:
            return path
        cur = start
        while d > 0:
            for n in steps[cur]:
                n = n[0] if metric == "bfs4" else n
                if field.get(index[n]) == d - 1:
                    cur = n
                    break
            path.append(cur)
            d -= 1
        return path

    def fill_distances(self, metric: str = "bfs4") -> None:
        """Complete every distance row now (about 1 ms per road cell)."""
        for c in self.road_cells:
            self.distance_row(c, metric)

    def cached_rows(self, metric: str = "bfs4") -> int:
        """Distance fields of this map the row cache holds now."""
        return self._rows.count(self._token, metric)

    def _adjacency(self, metric: str) -> list:
        """[compact index] -> tuple of the compact indices one step away under `metric`."""
        adj = self._neighbours.get("adj-" + metric)
        if adj is None:
            if metric == "bfs4":
                flat = [tuple(n for n, _ in self.orthogonal_neighbours()[c]) for c in self.road_cells]
            elif metric == "bfs8":
                flat = [self.moves8()[c] for c in self.road_cells]
            else:
                raise ValueError(f"metric {metric!r} has no table: allowed {' | '.join(TABLE_METRICS)}")
            index = self.index
            adj = self._neighbours["adj-" + metric] = [tuple(index[n] for n in entry) for entry in flat]
        return adj

    def view_window(self, x: int, z: int) -> list:
        """map_info around (x, z): 21 new rows (z - 10 .. z + 10) of 21 ints (x - 10 .. x + 10),
        1 = road, 0 = obstacle or off the map. Built each call from a uint8 copy of the grid: as
        fast as copying a cached window, which cost 4.9 KB per cell kept."""
        return self._padded[z:z + 2 * VIEW_RADIUS + 1, x:x + 2 * VIEW_RADIUS + 1].tolist()


class DistanceField:
    """Breadth-first distances from one source, grown only as far as queries need: a monster
    near the hero costs a few hundred cells, not the whole map. `dist[i]` (compact index) is
    exact wherever it is not UNREACHABLE; `get(i)` grows the search until i is reached. The
    search runs level by level (the frontier of the cells at distance `level`)."""

    __slots__ = ("dist", "adj", "frontier", "level", "done", "nbytes")

    def __init__(self, adj: list, source: int, size: int):
        self.adj = adj
        self.dist = array("H", _unreached(size))
        self.nbytes = 2 * size + 150  # the row and the object's own share (the cache's budget)
        self.dist[source] = 0
        self.frontier = [source]
        self.level = 0
        self.done = False

    def get(self, i: int) -> int:
        d = self.dist[i]
        if d != UNREACHABLE or self.done:
            return d
        return self.grow(i)

    def grow(self, target: int = -1) -> int:
        """Expand whole levels until `target` has its distance (or everything reachable has)."""
        dist, adj = self.dist, self.adj
        frontier, d = self.frontier, self.level
        unreached = UNREACHABLE
        while frontier:
            d += 1
            nxt = []
            add = nxt.append
            for u in frontier:
                for v in adj[u]:
                    if dist[v] == unreached:
                        dist[v] = d
                        add(v)
            frontier = nxt
            if target >= 0 and dist[target] != unreached:
                self.frontier, self.level = frontier, d
                return d
        self.frontier, self.level, self.done = None, d, True
        return dist[target] if target >= 0 else UNREACHABLE

    def complete(self) -> None:
        if not self.done:
            self.grow()


@lru_cache(maxsize=8)
def _unreached(size: int) -> array:
    return array("H", [UNREACHABLE]) * size


def _orthogonal_steps(walkable_flat, x: int, z: int):
    """(flat id, axis) of the walkable E, W, S, N neighbours of (x, z)."""
    for dx, dz, axis in ((1, 0, 0), (-1, 0, 0), (0, 1, 1), (0, -1, 1)):
        nx, nz = x + dx, z + dz
        if 0 <= nx < GRID_SIZE and 0 <= nz < GRID_SIZE and walkable_flat[nz * GRID_SIZE + nx]:
            yield nz * GRID_SIZE + nx, axis


def _diagonal_rule_steps(walkable_flat, x: int, z: int):
    """Flat ids of the cells one 8-connected step from (x, z) enters under the diagonal rule."""
    for dx, dz in DIRECTIONS:
        if can_step(walkable_flat, x, z, dx, dz):
            yield (z + dz) * GRID_SIZE + x + dx


def can_step(walkable_flat, x: int, z: int, dx: int, dz: int) -> bool:
    """The diagonal rule of a single-cell step: the target is on the map and walkable, and a
    diagonal step needs at least one of its two orthogonally adjacent cells walkable."""
    nx, nz = x + dx, z + dz
    if not (0 <= nx < GRID_SIZE and 0 <= nz < GRID_SIZE and walkable_flat[nz * GRID_SIZE + nx]):
        return False
    if dx and dz:
        return bool(walkable_flat[z * GRID_SIZE + nx] or walkable_flat[nz * GRID_SIZE + x])
    return True


def components(walkable: np.ndarray) -> int:
    """The number of 4-connected road components."""
    w = np.asarray(walkable, dtype=bool)
    seen = np.zeros_like(w)
    count = 0
    for z0, x0 in zip(*np.nonzero(w)):
        if seen[z0, x0]:
            continue
        count += 1
        seen[z0, x0] = True
        stack = [(z0, x0)]
        while stack:
            z, x = stack.pop()
            for nz, nx in ((z + 1, x), (z - 1, x), (z, x + 1), (z, x - 1)):
                if 0 <= nz < w.shape[0] and 0 <= nx < w.shape[1] and w[nz, nx] and not seen[nz, nx]:
                    seen[nz, nx] = True
                    stack.append((nz, nx))
    return count


def check_connected(walkable: np.ndarray, name: str) -> None:
    """A playable map has road and one connected road network (monsters chase by paths)."""
    if not walkable.any():
        raise GorgeMapError(f"map {name!r}: no road cell (every cell is an obstacle)")
    n = components(walkable)
    if n != 1:
        raise GorgeMapError(f"map {name!r}: the road has {n} separate components; a map must be one connected network")


# ---- files --------------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GorgeMapError(f"map file {str(path)!r}: cannot read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GorgeMapError(f"map file {str(path)!r}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def parse_map_json(data, name: str) -> np.ndarray:
    """The walkable grid [z, x] of an official map json (already parsed)."""
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise GorgeMapError(f"map file {name!r}: expected an object with a 'cells' list")
    for key in ("width", "height"):
        if data.get(key, GRID_SIZE) != GRID_SIZE:
            raise GorgeMapError(f"map file {name!r}: {key} = {data.get(key)!r}, expected {GRID_SIZE}")
    cells = data["cells"]
    if len(cells) != GRID_SIZE * GRID_SIZE:
        raise GorgeMapError(f"map file {name!r}: {len(cells)} cells, expected {GRID_SIZE * GRID_SIZE} (128 x 128)")
    walkable = np.zeros((GRID_SIZE, GRID_SIZE), dtype=bool)
    seen = np.zeros((GRID_SIZE, GRID_SIZE), dtype=bool)
    for i, cell in enumerate(cells):
        try:
            x, z, type_id = cell["x"], cell["z"], cell["type_id"]
        except (TypeError, KeyError):
            raise GorgeMapError(f"map file {name!r}: cells[{i}] = {cell!r} lacks x, z or type_id") from None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (x, z, type_id)):
            raise GorgeMapError(f"map file {name!r}: cells[{i}] = {cell!r}: x, z and type_id must be ints")
        if not (0 <= x < GRID_SIZE and 0 <= z < GRID_SIZE):
            raise GorgeMapError(f"map file {name!r}: cells[{i}] at ({x}, {z}) is outside 0..127")
        if type_id not in (ROAD_TYPE, OBSTACLE_TYPE):
            raise GorgeMapError(f"map file {name!r}: cells[{i}] at ({x}, {z}) has type_id {type_id!r}: allowed "
                                f"{ROAD_TYPE} (road) or {OBSTACLE_TYPE} (obstacle)")
        if seen[z, x]:
            raise GorgeMapError(f"map file {name!r}: cell ({x}, {z}) is listed twice")
        seen[z, x] = True
        walkable[z, x] = type_id == ROAD_TYPE
    return walkable


def parse_grid_text(text: str, name: str) -> np.ndarray:
    """The walkable grid [z, x] of the .txt form: 128 lines of 128 '.' (road) / '#' (obstacle)."""
    rows = text.split()
    if len(rows) != GRID_SIZE:
        raise GorgeMapError(f"map file {name!r}: {len(rows)} lines, expected {GRID_SIZE}")
    for z, row in enumerate(rows):
        if len(row) != GRID_SIZE:
            raise GorgeMapError(f"map file {name!r}: line {z + 1} has {len(row)} characters, expected {GRID_SIZE}")
        bad = set(row) - {".", "#"}
        if bad:
            raise GorgeMapError(f"map file {name!r}: line {z + 1} has {sorted(bad)[0]!r}: allowed '.' (road) and '#' (obstacle)")
    return np.array([[ch == "." for ch in row] for row in rows], dtype=bool)


def load_map_file(path) -> GorgeMap:
    """A GorgeMap from an official `.json` map or a `.txt` grid (by the suffix)."""
    path = Path(path)
    text = _read_text(path)
    if path.suffix == ".txt":
        walkable = parse_grid_text(text, str(path))
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GorgeMapError(f"map file {str(path)!r}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        walkable = parse_map_json(data, str(path))
    return GorgeMap(walkable, path.stem)


@lru_cache(maxsize=32)
def load_map_cached(path: str) -> GorgeMap:
    """One GorgeMap per resolved path in the process, so envs share its distance rows."""
    return load_map_file(path)


def map_json(walkable, name: str) -> dict:
    """The official json object of a grid (cells row by row, type_id 3 road / 1 obstacle)."""
    walkable = np.asarray(walkable, dtype=bool)
    cells = [{"x": x, "z": z, "type_id": ROAD_TYPE if walkable[z, x] else OBSTACLE_TYPE, "height": 0.0}
             for z in range(GRID_SIZE) for x in range(GRID_SIZE)]
    return {"name": name, "width": GRID_SIZE, "height": GRID_SIZE, "cells": cells, "objects": [],
            "metadata": {"version": "1.0", "author": "realm.gorge_chase", "description": name}}


def write_map_json(walkable, path, name: str | None = None) -> Path:
    """Write a grid in the official json format (compact)."""
    path = Path(path)
    path.write_text(json.dumps(map_json(walkable, name or path.stem)), encoding="utf-8")
    return path


def grid_text(walkable) -> str:
    """The .txt form of a grid."""
    return "\n".join("".join("." if v else "#" for v in row) for row in np.asarray(walkable, dtype=bool)) + "\n"


def id_ranges(ids) -> str:
    """Map ids as runs: [1, 2, 3, 7, 21, 22] -> "1-3, 7, 21-22"."""
    runs: list[list[int]] = []
    for i in sorted(set(int(i) for i in ids)):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


class MapFolder:
    """Maps by id from a folder of `gorge_chase_map_<id>.json` (or `map_<id>.txt`) files, loaded
    on first use and shared by the process."""

    def __init__(self, folder):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise GorgeMapError(f"map folder {str(self.folder)!r} does not exist or is not a folder")
        self.name = f"folder:{self.folder}"
        self._loaded: dict[int, GorgeMap] = {}

    def path(self, map_id: int) -> Path:
        for pattern in (MAP_FILE_PATTERN, GRID_FILE_PATTERN):
            candidate = self.folder / pattern.format(id=map_id)
            if candidate.is_file():
                return candidate
        raise GorgeMapError(f"map id {map_id}: neither {MAP_FILE_PATTERN.format(id=map_id)} nor "
                            f"{GRID_FILE_PATTERN.format(id=map_id)} in {str(self.folder)!r}")

    def get(self, map_id: int) -> GorgeMap:
        game_map = self._loaded.get(map_id)
        if game_map is None:  # resolved once per id: a reset does not touch the file system
            game_map = self._loaded[map_id] = load_map_cached(str(self.path(map_id).resolve()))
        return game_map

    def ids(self) -> list[int]:
        """The map ids with a file in the folder."""
        found = set()
        for pattern in (MAP_FILE_PATTERN, GRID_FILE_PATTERN):
            head, tail = pattern.split("{id}")
            for path in self.folder.glob(pattern.replace("{id}", "*")):
                middle = path.name[len(head):len(path.name) - len(tail)]
                if middle.isdigit():
                    found.add(int(middle))
        return sorted(found)

    def allowed_ids(self) -> set[int]:
        """What a usr_conf's map list may name: the official 1..10 and any id with a file."""
        return set(OPEN_MAP_IDS) | set(self.ids())

    def describe(self, map_ids) -> str:
        """The files episodes naming `map_ids` play (ids without a file said so); no ids: every
        map file of the folder."""
        names, missing = [], []
        for map_id in sorted(set(int(i) for i in (map_ids or self.ids()))):
            try:
                names.append(self.path(map_id).name)
            except GorgeMapError:
                missing.append(map_id)
        shown = ", ".join(names) if len(names) <= 10 else f"{', '.join(names[:3])}, ..., {names[-1]} ({len(names)} files)"
        text = f"the files in {self.folder}: {shown or 'no map file'}"
        return text + (f"; no file for id {id_ranges(missing)}" if missing else "")


class SingleMap:
    """Every id is the one given map (an env on a map of its own)."""

    def __init__(self, game_map: GorgeMap):
        self.map = game_map
        self.name = f"map:{game_map.name}"

    def allowed_ids(self) -> range:
        return GENERATED_IDS

    def describe(self, map_ids) -> str:
        return f"the one map {self.map.name!r} for every id"

    def get(self, map_id: int) -> GorgeMap:
        return self.map
