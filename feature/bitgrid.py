"""A boolean grid as one Python int, for the breadth-first searches of the 2026 engine's games'
features (gorge_chase's view, robot_vacuum's map): one step of a search over the whole grid is a
few big-int shifts and ands (about a microsecond on a 63 × 63 window, a few on a 128 × 128 map)
where numpy spends dozens of calls. Cell (row r, column c) is bit r × stride + c with
stride = width + 1: a zero guard column at the end of every row keeps a shift by one column from
wrapping into the next row once the result is and-ed with a grid.

So the 4 neighbours of the cells `f` are `f << 1 | f >> 1 | f << stride | f >> stride`, and the
8 neighbours (with `f`) are `w | w << stride | w >> stride` for `w = f | f << 1 | f >> 1`, each
and-ed with the grid searched (the searches write them inline: they run per step of every search).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

UNKNOWN_STEPS = -1  # no target within the search's reach
FEW_GRIDS = 24  # first_index: up to this many ints, their running unions; beyond, their index's digits


@lru_cache(maxsize=None)
def bit_grid(height: int, width: int) -> "BitGrid":
    """The layout of a grid of that shape (made once)."""
    return BitGrid(height, width)


class BitGrid:
    """The bit layout of a (height, width) grid and its conversions from and to numpy."""

    def __init__(self, height: int, width: int):
        self.height, self.width = height, width
        self.stride = width + 1
        self.nbytes = (height * self.stride + 7) // 8
        edge = np.zeros((height, width), dtype=bool)
        edge[[0, -1], :] = edge[:, [0, -1]] = True
        self.border = self.of_mask(edge)  # the cells on the grid's edge

    def bit(self, column: int, row: int) -> int:
        return 1 << (row * self.stride + column)

    def of_mask(self, mask: np.ndarray) -> int:
        """The int of a (height, width) bool array [row, column]."""
        return int.from_bytes(self.packed(mask), "little")

    def packed(self, mask: np.ndarray) -> bytes:
        """The int's bytes (little-endian, `nbytes` of them) of a (height, width) bool array."""
        padded = np.zeros((self.height, self.stride), dtype=bool)
        padded[:, :self.width] = mask
        return np.packbits(padded, bitorder="little").tobytes()

    def of_cells(self, cells) -> int:
        """The int with the (column, row) `cells` inside the grid set (the others ignored)."""
        bits = 0
        for c, r in cells:
            if 0 <= r < self.height and 0 <= c < self.width:
                bits |= 1 << (r * self.stride + c)
        return bits

    def masks(self, grids: list[int]) -> np.ndarray:
        """(len(grids), height, width) bool: each int as a grid."""
        raw = np.frombuffer(b"".join([g.to_bytes(self.nbytes, "little") for g in grids]), dtype=np.uint8)
        bits = np.unpackbits(raw.reshape(len(grids), self.nbytes), axis=1, bitorder="little")
        return bits[:, :self.height * self.stride].reshape(len(grids), self.height, self.stride)[:, :, :self.width].view(bool)

    def first_index(self, grids: list[int], missing: int) -> np.ndarray:
        """(height, width) int32: per cell the index of the first int in `grids` holding it,
        `missing` where none does (a search's levels -> its distances; disjoint parts -> labels).
        A few ints: how many of their running unions miss the cell (one unpack of them all).
        Many (a search across a whole map): the index's binary digits, each a grid of the cells
        whose first int's index has that bit set, so about log2(len(grids)) grids are unpacked."""
        if not grids:
            return np.full((self.height, self.width), missing, dtype=np.int32)
        if len(grids) <= FEW_GRIDS:
            unions, union = [], 0
            for g in grids:
                union |= g
                unions.append(union)
            misses = len(grids) - self.masks(unions).sum(axis=0, dtype=np.int32)
            return np.where(misses == len(grids), missing, misses).astype(np.int32)
        digits = [0] * (len(grids) - 1).bit_length()
        reached = 0
        for i, g in enumerate(grids):
            g &= ~reached  # its cells not held by an earlier int
            reached |= g
            b = 0
            while i >> b:
                if i >> b & 1:
                    digits[b] |= g
                b += 1
        planes = self.masks(digits + [reached])
        index = np.zeros((self.height, self.width), dtype=np.int32)
        for b in range(len(digits)):
            index += planes[b].astype(np.int32) << b
        return np.where(planes[-1], index, missing).astype(np.int32)


def path_levels(walkable: int, sources: int, stride: int, limit: int | None = None) -> list[int]:
    """A 4-connected breadth-first search from `sources` over `walkable`: its levels, [the sources,
    the cells one step away, ...], up to `limit` steps (the whole reach by default). A grid's
    `first_index(levels, missing)` turns them into path lengths."""
    levels = [sources]
    unvisited = walkable & ~sources
    frontier = sources
    while limit is None or len(levels) <= limit:
        frontier = (frontier << 1 | frontier >> 1 | frontier << stride | frontier >> stride) & unvisited
        if not frontier:
            break
        unvisited ^= frontier
        levels.append(frontier)
    return levels


def moves_from(cells: int, walkable: int, stride: int) -> int:
    """The walkable cells one hero move from `cells` under the corner rule: the 4 straight
    neighbours, and a diagonal one through a walkable straight neighbour (the guide's rule, the
    simulators' default `diagonal_rule`, symmetric: a search from the targets gives the hero's
    path length to them)."""
    across = (cells << 1 | cells >> 1) & walkable
    along = (cells << stride | cells >> stride) & walkable
    return (across | along | across << stride | across >> stride | along << 1 | along >> 1) & walkable


def steps_near(grid: BitGrid, walkable: int, targets: int, centre: tuple[int, int], limit: int,
               corner_rule: bool = True) -> np.ndarray:
    """3 × 3 path lengths [dz + 1, dx + 1] from the nearest target to `centre` (column, row) and
    its 8 neighbours, over `walkable` (the targets count as walkable), 8-connected: with
    `corner_rule` a diagonal step needs one of its two straight neighbours walkable (moves_from),
    without it any diagonal step is open. UNKNOWN_STEPS where none is reached within `limit`
    steps. The search stops once the centre's walkable neighbourhood is reached, so its cost
    grows with the distance, not with the grid."""
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
        if corner_rule:
            frontier = moves_from(frontier, walkable, stride) & unvisited
        else:
            wide = frontier | frontier << 1 | frontier >> 1  # the 8 neighbours
            frontier = (wide | wide << stride | wide >> stride) & unvisited
        if not frontier:
            break
        unvisited ^= frontier
    return out
