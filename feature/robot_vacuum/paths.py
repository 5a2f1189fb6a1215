"""The path searches of robot_vacuum's features, on grids held as one Python int each: a step of
a breadth-first search over the whole 128 × 128 map is a dozen big-int shifts and ands (a few
microseconds) where numpy spends dozens of calls.

Cell (column c, row r) is bit r × stride + c with stride = width + 1: a zero guard column at the
end of every row keeps a shift by one column from wrapping into the next row once the result is
and-ed with a grid. The hero's moves are 8-connected and a diagonal needs one of its two
orthogonal cells walkable (the guide's rule, the simulator's default `diagonal_rule`), which is
symmetric, so a search from the targets gives the hero's path length to them.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

UNKNOWN_STEPS = -1  # no target within the search's reach


@lru_cache(maxsize=None)
def bit_grid(height: int, width: int) -> "BitGrid":
    """The layout of a grid of that shape (made once)."""
    return BitGrid(height, width)


class BitGrid:
    """The bit layout of a (height, width) grid and its conversions from numpy."""

    def __init__(self, height: int, width: int):
        self.height, self.width = height, width
        self.stride = width + 1

    def bit(self, column: int, row: int) -> int:
        return 1 << (row * self.stride + column)

    def of_mask(self, mask: np.ndarray) -> int:
        """The int of a (height, width) bool array [row, column]."""
        padded = np.zeros((self.height, self.stride), dtype=bool)
        padded[:, :self.width] = mask
        return int.from_bytes(np.packbits(padded, bitorder="little").tobytes(), "little")

    def of_cells(self, cells) -> int:
        """The int with the (column, row) `cells` inside the grid set (the others ignored)."""
        bits = 0
        for c, r in cells:
            if 0 <= r < self.height and 0 <= c < self.width:
                bits |= 1 << (r * self.stride + c)
        return bits


def moves_from(cells: int, walkable: int, stride: int) -> int:
    """The walkable cells one hero move from `cells`: the 4 straight neighbours, and a diagonal
    one through a walkable straight neighbour (its corner rule)."""
    across = (cells << 1 | cells >> 1) & walkable
    along = (cells << stride | cells >> stride) & walkable
    return (across | along | across << stride | across >> stride | along << 1 | along >> 1) & walkable


def steps_near(grid: BitGrid, walkable: int, targets: int, centre: tuple[int, int], limit: int) -> np.ndarray:
    """3 × 3 path lengths [dz + 1, dx + 1] from the nearest target to `centre` (column, row) and
    its 8 neighbours, over `walkable` (the targets count as walkable); UNKNOWN_STEPS where none is
    reached within `limit` steps. The search stops once the centre's walkable neighbourhood is
    reached, so its cost grows with the distance, not with the grid."""
    out = np.full((3, 3), UNKNOWN_STEPS, dtype=np.int32)
    if not targets:
        return out
    cx, cz = centre
    near = [(dz + 1, dx + 1, grid.bit(cx + dx, cz + dz)) for dz in (-1, 0, 1) for dx in (-1, 0, 1)
            if 0 <= cx + dx < grid.width and 0 <= cz + dz < grid.height]
    near_bits = sum(bit for _, _, bit in near)
    walkable |= targets
    wanted = near_bits & walkable
    unvisited = walkable & ~targets
    frontier, stride = targets, grid.stride
    for step in range(limit + 1):
        hit = frontier & wanted
        if hit:
            for r, c, bit in near:
                if hit & bit:
                    out[r, c] = step  # each cell joins one frontier only
            wanted &= ~hit
            if not wanted:
                break
        frontier = moves_from(frontier, walkable, stride) & unvisited
        if not frontier:
            break
        unvisited ^= frontier
    return out
