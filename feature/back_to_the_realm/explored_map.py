"""Path lengths on the map as an episode has seen it, for a protocol that sends no distances.

The 2024 server sent every object's BFS path length over the whole map; a 2025 server sends
only the 51×51 obstacle window around the hero. `ExploredMap` pastes every window of the
episode into one 128×128 map of passable / blocked / not yet seen cells, and `paths_from`
runs one 4-connected BFS from the hero over it, unseen cells counting as passable. So a path
length is:
- the 2024 value once the ground between hero and object has been seen;
- a lower bound before that (never more than the real length: seen walls are real, unseen
  ground is taken as open), which only grows as walls come into view;
- None when seen walls enclose the hero's region or the object's: unreachable (2024's null).
The BFS is pure Python over a padded bytearray, ~2 ms on an unexplored 128×128 map, so it
runs once per step for every object at once (numpy wavefronts are no faster here).
"""
from __future__ import annotations

import numpy as np

from feature.back_to_the_realm.constants import GRID_SIZE, VIEW_RADIUS, VIEW_SIZE

_WIDTH = GRID_SIZE + 2  # the map with a blocked border, so a neighbour is never out of range


class PathLengths:
    """One BFS's answers: cells to walk from the hero to any cell of the map."""

    def __init__(self, dist: list[int]):
        self._dist = dist

    def cells_to(self, xc: int, zc: int) -> int | None:
        """Cells from the hero to cell (xc, zc); None when the seen walls leave no path (or the
        cell is off the map)."""
        if not (0 <= xc < GRID_SIZE and 0 <= zc < GRID_SIZE):
            return None
        d = self._dist[(zc + 1) * _WIDTH + xc + 1]
        return None if d < 0 else d


class ExploredMap:
    def __init__(self):
        self._free = np.zeros((_WIDTH, _WIDTH), dtype=np.uint8)  # 1: passable or not yet seen
        self._free[1:-1, 1:-1] = 1
        self._cached: tuple[tuple[int, int], PathLengths] | None = None  # the last BFS, while nothing changed

    def add_window(self, obstacle: np.ndarray, xc: int, zc: int) -> None:
        """Paste a (51, 51) obstacle window (1 passable, [row = zc offset][column = xc offset])
        centred on cell (xc, zc); its cells off the map are ignored."""
        top, left = zc - VIEW_RADIUS, xc - VIEW_RADIUS
        z0, z1 = max(top, 0), min(top + VIEW_SIZE, GRID_SIZE)
        x0, x1 = max(left, 0), min(left + VIEW_SIZE, GRID_SIZE)
        seen = (np.asarray(obstacle)[z0 - top:z1 - top, x0 - left:x1 - left] != 0).astype(np.uint8)
        target = self._free[z0 + 1:z1 + 1, x0 + 1:x1 + 1]
        if not np.array_equal(target, seen):
            target[...] = seen
            self._cached = None

    def paths_from(self, xc: int, zc: int) -> PathLengths:
        """BFS from the hero's cell (xc, zc) over the seen map, unseen cells passable."""
        if self._cached is not None and self._cached[0] == (xc, zc):
            return self._cached[1]
        free = bytearray(self._free.tobytes())
        dist = [-1] * (_WIDTH * _WIDTH)
        start = (zc + 1) * _WIDTH + xc + 1
        dist[start], free[start] = 0, 0  # the hero's cell counts as reached
        frontier, d = [start], 0
        while frontier:
            d += 1
            reached = []
            for i in frontier:
                for j in (i - 1, i + 1, i - _WIDTH, i + _WIDTH):
                    if free[j]:
                        free[j] = 0
                        dist[j] = d
                        reached.append(j)
            frontier = reached
        paths = PathLengths(dist)
        self._cached = ((xc, zc), paths)
        return paths
