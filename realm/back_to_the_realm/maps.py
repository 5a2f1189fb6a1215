"""One `Map` type for the official map files and generated maps.

Everything the simulator asks per step (cell of a point, BFS distance to a special position,
the padded grid that 51×51 windows are sliced from) is computed once per map here, so a step
does lookups and slices only.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from realm.back_to_the_realm.constants import CELL_WIDTH, GRID_SIZE, NUM_POSITIONS, ORIGIN_X, ORIGIN_Z, VIEW_RADIUS

UNREACHABLE = -1


class MapError(ValueError):
    """A map file or generated map that breaks the SPEC's format."""


def cell_of(x: float, z: float) -> tuple[int, int]:
    """World point -> (xc, zc) cell indices (may fall outside 0..127 off the map)."""
    return int((x - ORIGIN_X) // CELL_WIDTH), int((z - ORIGIN_Z) // CELL_WIDTH)


def cell_center(xc: int, zc: int) -> tuple[float, float]:
    """Cell -> world point at its centre."""
    return float(xc * CELL_WIDTH + ORIGIN_X + CELL_WIDTH // 2), float(zc * CELL_WIDTH + ORIGIN_Z + CELL_WIDTH // 2)


def frontier_distances(passable: np.ndarray, x: int, z: int, next_ring) -> np.ndarray:
    """Fewest moves from (x, z) to every cell; UNREACHABLE where no path exists. Indexed [z, x]
    like the grid. A numpy frontier over flat indices of the grid padded by one blocked ring (so
    neighbours never wrap): `next_ring(frontier, free, stride)` gives the cells one of the game's
    moves reaches from the frontier (`free`: the padded grid's passable cells, flat); the visited
    ones are dropped here. Each ring costs a few numpy calls on a few dozen cells."""
    h, w = passable.shape
    stride = w + 2
    free = np.zeros((h + 2, stride), dtype=bool)
    free[1:-1, 1:-1] = passable
    free = free.ravel()
    unvisited = free.copy()
    dist = np.full(free.size, UNREACHABLE, dtype=np.int32)
    if 0 <= x < w and 0 <= z < h and passable[z, x]:
        start = (z + 1) * stride + x + 1
        unvisited[start] = False
        dist[start] = 0
        frontier, d = np.array([start]), 0
        while frontier.size:
            ring = next_ring(frontier, free, stride)
            ring = np.unique(ring[unvisited[ring]])
            d += 1
            unvisited[ring] = False
            dist[ring] = d
            frontier = ring
    return dist.reshape(h + 2, stride)[1:-1, 1:-1].copy()


def orthogonal_ring(frontier: np.ndarray, free: np.ndarray, stride: int) -> np.ndarray:
    """The four orthogonal neighbours of each frontier cell."""
    return (frontier[:, None] + np.array([1, -1, stride, -stride])).ravel()


def bfs_distances(passable: np.ndarray, xc: int, zc: int) -> np.ndarray:
    """4-connected BFS path lengths in cells from (xc, zc); UNREACHABLE where no path exists.
    Indexed [zc][xc] like the grid; about 2 ms per field on a 128×128 map."""
    return frontier_distances(passable, xc, zc, orthogonal_ring)


class Map:
    """A 128×128 occupancy grid with its 16 special positions.

    `passable[zc, xc]` is True for walkable cells; `positions[i]` is the world (x, z) of
    special position i (0 = buff, 1..15 start/end/chest slots).
    """

    def __init__(self, passable: np.ndarray, positions: np.ndarray, name: str):
        passable = np.asarray(passable, dtype=bool)
        positions = np.asarray(positions, dtype=np.float64)
        if passable.shape != (GRID_SIZE, GRID_SIZE):
            raise MapError(f"map {name!r}: grid must be {GRID_SIZE}x{GRID_SIZE}, got {passable.shape}")
        if positions.shape != (NUM_POSITIONS, 2):
            raise MapError(f"map {name!r}: need {NUM_POSITIONS} special positions (x, z), got {positions.shape}")
        self.name = name
        self.passable = passable
        self.passable.setflags(write=False)
        self.positions = positions
        self.positions.setflags(write=False)
        self.position_cells = np.array([cell_of(x, z) for x, z in positions], dtype=np.int64)  # (xc, zc)
        for i, (xc, zc) in enumerate(self.position_cells):
            if not (0 <= xc < GRID_SIZE and 0 <= zc < GRID_SIZE) or not passable[zc, xc]:
                raise MapError(f"map {name!r}: special position {i} at cell ({xc}, {zc}) is not on a passable cell")
        # Per-map precomputation: BFS fields to every special position, padded grid for windows.
        self.distance_fields = np.stack([bfs_distances(passable, int(xc), int(zc)) for xc, zc in self.position_cells])
        self.distance_fields.setflags(write=False)
        pad = VIEW_RADIUS
        self.padded_obstacle = np.zeros((GRID_SIZE + 2 * pad, GRID_SIZE + 2 * pad), dtype=np.int32)
        self.padded_obstacle[pad:-pad, pad:-pad] = passable
        self.padded_obstacle.setflags(write=False)

    @property
    def num_passable(self) -> int:
        return int(self.passable.sum())

    def is_passable_cell(self, xc: int, zc: int) -> bool:
        return 0 <= xc < GRID_SIZE and 0 <= zc < GRID_SIZE and bool(self.passable[zc, xc])

    def is_passable_point(self, x: float, z: float) -> bool:
        return self.is_passable_cell(*cell_of(x, z))

    def distance_between(self, a: int, b: int) -> int:
        """BFS path length in cells between special positions a and b (UNREACHABLE if none)."""
        xc, zc = self.position_cells[b]
        return int(self.distance_fields[a][zc, xc])

    def __repr__(self) -> str:
        return f"Map({self.name!r}, passable={self.num_passable})"


def _read_json(path: Path, what: str):
    if not path.is_file():
        raise MapError(f"{what} file not found: {path}")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise MapError(f"{what} file {path} is not valid JSON: {e}") from e


def load_official_map(map_file: str | Path, positions_file: str | Path, map_key: str | None = None) -> Map:
    """Load an official map json (`CellWidth`, `Width`, `Height`, `Flags`) and its position pool.

    `map_key` picks the entry of position_pool.json (default: the map file's stem, e.g. "map_1").
    """
    map_file, positions_file = Path(map_file), Path(positions_file)
    raw = _read_json(map_file, "map")
    for key in ("CellWidth", "Width", "Height", "Flags"):
        if key not in raw:
            raise MapError(f"map file {map_file}: missing key {key!r} (need CellWidth, Width, Height, Flags)")
    if raw["CellWidth"] != CELL_WIDTH or raw["Width"] != GRID_SIZE or raw["Height"] != GRID_SIZE:
        raise MapError(
            f"map file {map_file}: CellWidth/Width/Height must be {CELL_WIDTH}/{GRID_SIZE}/{GRID_SIZE}, "
            f"got {raw['CellWidth']}/{raw['Width']}/{raw['Height']}"
        )
    flags = np.asarray(raw["Flags"])
    if flags.size != GRID_SIZE * GRID_SIZE:
        raise MapError(f"map file {map_file}: Flags must hold {GRID_SIZE * GRID_SIZE} values, got {flags.size}")
    passable = flags.reshape(GRID_SIZE, GRID_SIZE) == 1  # Flags[zc*128 + xc]
    pool = _read_json(positions_file, "positions")
    key = map_key or map_file.stem
    if key not in pool:
        raise MapError(f"positions file {positions_file}: no entry {key!r}; available: {sorted(pool)}")
    entry = pool[key]
    try:
        positions = np.array([entry[str(i)] for i in range(NUM_POSITIONS)], dtype=np.float64)
    except KeyError as e:
        raise MapError(f"positions file {positions_file}: entry {key!r} lacks position id {e.args[0]} (need 0..15)") from e
    return Map(passable, positions, name=f"{map_file.name}")


@lru_cache(maxsize=8)
def load_official_map_cached(map_file: str, positions_file: str, map_key: str | None = None) -> Map:
    """Official maps are immutable: envs in one process share one instance."""
    return load_official_map(map_file, positions_file, map_key)
