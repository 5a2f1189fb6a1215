"""Per-map tables that turn the simulator's per-step questions into list lookups.

A step asks: is this cell passable, which special positions could be within pick-up reach of
this cell, and what is the RelativePosition of position i seen from this cell. All three are
answered here once per map (about 30 ms) and shared by every env on that map.

▶ RelativePosition is measured from the centre of the hero's cell (so it can be tabulated);
an object in the hero's own cell reads direction 1 (East), buckets 1, grid_distance 0.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from realm.back_to_the_realm.constants import (
    CELL_WIDTH,
    END_REACH_RADIUS,
    GRID_DISTANCE_SCALE,
    GRID_SIZE,
    L2_BUCKETS,
    NUM_POSITIONS,
    ORIGIN_X,
    ORIGIN_Z,
    PATH_BUCKETS,
    PICKUP_RADIUS,
    VIEW_RADIUS,
)
from realm.back_to_the_realm.maps import Map
from realm.back_to_the_realm.protocol import NULL_RELATIVE_POSITION, RelativePosition

REACH_RADIUS = max(PICKUP_RADIUS, END_REACH_RADIUS)
PADDED_SIZE = GRID_SIZE + 2 * VIEW_RADIUS


def _cell_centres() -> tuple[np.ndarray, np.ndarray]:
    """World x, z of every cell centre, each shaped [zc, xc]."""
    idx = np.arange(GRID_SIZE, dtype=np.float64) * CELL_WIDTH + CELL_WIDTH / 2
    return np.broadcast_to(idx + ORIGIN_X, (GRID_SIZE, GRID_SIZE)), np.broadcast_to((idx + ORIGIN_Z)[:, None], (GRID_SIZE, GRID_SIZE))


def relative_position_table(m: Map, position_id: int) -> list[RelativePosition]:
    """RelativePosition of `position_id` from every cell, flat index zc * 128 + xc.

    Equal values share one frozen instance; unreachable and blocked cells hold the null value.
    """
    hx, hz = _cell_centres()
    ox, oz = m.positions[position_id]
    dx, dz = ox - hx, oz - hz
    sector = np.rint(np.arctan2(dz, dx) / (math.pi / 4)).astype(np.int64) % 8
    direction = sector + 1  # 1 East, 2 NE, 3 North, ... 8 SE
    l2_bucket = np.searchsorted(np.asarray(L2_BUCKETS, dtype=np.float64), np.hypot(dx, dz), side="left") + 1
    path = m.distance_fields[position_id].astype(np.int64)
    path_bucket = np.searchsorted(np.asarray(PATH_BUCKETS), path, side="left") + 1
    key = ((direction * 8 + l2_bucket) * 8 + path_bucket) * 65536 + path
    key[path < 0] = -1
    values, inverse = np.unique(key.ravel(), return_inverse=True)
    instances = np.empty(len(values), dtype=object)
    for k, v in enumerate(values.tolist()):
        if v < 0:
            instances[k] = NULL_RELATIVE_POSITION
            continue
        cells, rest = v % 65536, v // 65536
        instances[k] = RelativePosition(
            direction=rest // 64, l2_distance=(rest // 8) % 8, path_distance=rest % 8, grid_distance=cells / GRID_DISTANCE_SCALE
        )
    return instances[inverse].tolist()


def _reachable_positions(m: Map) -> list[tuple[int, ...]]:
    """Per cell, the position ids whose reach disc touches the cell's square (a superset of what
    a point in the cell can pick up; the exact distance is checked at pick-up time)."""
    near: list[tuple[int, ...]] = [()] * (GRID_SIZE * GRID_SIZE)
    lo_x = np.arange(GRID_SIZE, dtype=np.float64) * CELL_WIDTH + ORIGIN_X
    lo_z = np.arange(GRID_SIZE, dtype=np.float64) * CELL_WIDTH + ORIGIN_Z
    for pid, (ox, oz) in enumerate(m.positions.tolist()):
        gap_x = np.maximum(np.maximum(lo_x - ox, ox - (lo_x + CELL_WIDTH)), 0.0)
        gap_z = np.maximum(np.maximum(lo_z - oz, oz - (lo_z + CELL_WIDTH)), 0.0)
        touching = gap_z[:, None] ** 2 + gap_x[None, :] ** 2 <= REACH_RADIUS**2
        for flat in np.flatnonzero(touching).tolist():
            near[flat] = near[flat] + (pid,)
    return near


class MapLookups:
    """Everything per map that RealmEnv reads per step, as plain Python containers."""

    __slots__ = (
        "passable_flat",
        "reachable",
        "relative",
        "positions",
        "position_cells",
        "passable_centres",
        "passable_cells",
        "_end_windows",
        "__weakref__",
    )

    def __init__(self, m: Map):
        self.passable_flat: bytes = m.passable.astype(np.uint8).tobytes()  # [zc * 128 + xc]
        self.reachable = _reachable_positions(m)
        self.relative = [relative_position_table(m, i) for i in range(NUM_POSITIONS)]
        self.positions = [(float(x), float(z)) for x, z in m.positions.tolist()]
        self.position_cells = [(int(xc), int(zc)) for xc, zc in m.position_cells.tolist()]
        zc, xc = np.nonzero(m.passable)  # row-major: ties in `nearest_passable` go to the lowest (zc, xc)
        self.passable_cells = np.stack([xc, zc], axis=1)
        self.passable_centres = np.stack([xc * CELL_WIDTH + ORIGIN_X + CELL_WIDTH / 2, zc * CELL_WIDTH + ORIGIN_Z + CELL_WIDTH / 2], axis=1)
        self._end_windows: dict[int, np.ndarray] = {}

    def nearest_passable(self, x: float, z: float) -> tuple[float, float, int, int]:
        """Centre (x, z) and cell (xc, zc) of the passable cell whose centre is nearest to (x, z)."""
        gap = self.passable_centres - (x, z)
        k = int(np.argmin(np.einsum("ij,ij->i", gap, gap)))
        cx, cz = self.passable_centres[k].tolist()
        xc, zc = self.passable_cells[k].tolist()
        return cx, cz, xc, zc

    def marked_grid(self, position_ids) -> np.ndarray:
        """Read-only padded grid with 1 on the cells of `position_ids`: the 51×51 windows of
        treasure_map and end_map are slices of it."""
        padded = np.zeros((PADDED_SIZE, PADDED_SIZE), dtype=np.int32)  # int32 on the wire
        for pid in position_ids:
            xc, zc = self.position_cells[pid]
            padded[zc + VIEW_RADIUS, xc + VIEW_RADIUS] = 1
        padded.setflags(write=False)
        return padded

    def end_window_source(self, end_id: int) -> np.ndarray:
        """The end's marked grid, cached per end id (it never changes during an episode)."""
        padded = self._end_windows.get(end_id)
        if padded is None:
            padded = self._end_windows[end_id] = self.marked_grid((end_id,))
        return padded


_CACHE: "weakref.WeakKeyDictionary[Map, MapLookups]" = weakref.WeakKeyDictionary()


def lookups_for(m: Map) -> MapLookups:
    """The map's lookups, built on first use and kept while the map lives."""
    found = _CACHE.get(m)
    if found is None:
        found = MapLookups(m)
        _CACHE[m] = found
    return found
