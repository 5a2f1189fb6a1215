"""The path readings of gorge_chase's known map that the features need, each one pass:

- `path_field`: the 4-connected path length from the nearest source (the monsters in view, or
  the hero) to every view cell, as the monsters chase;
- `steps_from_targets`: the hero's 8-connected path length to the nearest target (a live chest)
  from its cell and from each neighbour, over the map as far as it is known (road seen is road,
  a cell never seen counts as road: an optimistic guess that keeps unexplored ground reachable);
- `rooms_beyond`: with the hero's cell taken away, the part of the view's road each neighbour
  (and each flash landing) belongs to (8-connected, a diagonal step needing one of its two
  sides open, as the hero's own moves): how big it is, whether it runs off the view's edge
  (a way on) and whether a monster stands in it. A dead-end pocket is small and closed.

Each search runs on grids held as Python ints (feature.bitgrid): a step over the whole window
is a few big-int operations. The `*_bits` forms take those ints, so a step's features convert
the view once.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from feature.bitgrid import UNKNOWN_STEPS, BitGrid, bit_grid, path_levels, steps_near  # noqa: F401 (UNKNOWN_STEPS)
from feature.gorge_chase.constants import FAR

UNREACHED = FAR + 1  # a cell no monster in view reaches within FAR steps


def path_field(walkable: np.ndarray, sources: list[tuple[int, int]], limit: int = FAR) -> np.ndarray:
    """4-connected path length from the nearest source over `walkable` (view coordinates
    [row z, column x]; sources as (column, row)), UNREACHED beyond `limit` or where nothing reaches."""
    grid = bit_grid(*walkable.shape)
    return path_field_bits(grid, grid.of_mask(walkable), grid.of_cells(sources), limit)


def path_field_bits(grid: BitGrid, walkable: int, sources: int, limit: int = FAR) -> np.ndarray:
    """`path_field` on a BitGrid's ints (the sources' cells count at 0 whether walkable or not)."""
    if not sources:
        return np.full((grid.height, grid.width), UNREACHED, dtype=np.int32)
    return grid.first_index(path_levels(walkable, sources, grid.stride, limit), UNREACHED)


def path_length_bits(grid: BitGrid, walkable: int, source: int, target: int, limit: int = FAR) -> int:
    """`path_field_bits`'s value at the one cell `target` from the cell `source`, searching no
    further than it needs."""
    if source & target:
        return 0
    unvisited = walkable & ~source
    frontier, s = source, grid.stride
    for step in range(1, limit + 1):
        frontier = (frontier << 1 | frontier >> 1 | frontier << s | frontier >> s) & unvisited  # the 4 neighbours
        if frontier & target:
            return step
        if not frontier:
            break
        unvisited ^= frontier
    return UNREACHED


def steps_from_targets(walkable: np.ndarray, targets: list[tuple[int, int]], limit: int) -> np.ndarray:
    """3×3 path lengths [dz + 1, dx + 1] from the nearest target to the window's centre and its
    neighbours (`walkable`: an odd square window [row, column] centred on the hero; `targets`:
    (column, row) in it; 8-connected, no corner rule). UNKNOWN_STEPS where none is reached within
    `limit` steps. The frontier stops once the centre's walkable neighbourhood is filled."""
    grid = bit_grid(*walkable.shape)
    return steps_from_target_bits(grid, grid.of_mask(walkable), grid.of_cells(targets), limit)


def steps_from_target_bits(grid: BitGrid, walkable: int, targets: int, limit: int) -> np.ndarray:
    """`steps_from_targets` on a BitGrid's ints (feature.bitgrid.steps_near from the window's centre)."""
    centre = grid.height // 2
    return steps_near(grid, walkable, targets, (centre, centre), limit, corner_rule=False)


def rooms_beyond(view: np.ndarray, starts: list[tuple[int, int]], monsters: list[tuple[int, int]]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Over the view's road (`view` [row, column], the hero at its centre, taken away), 8-connected,
    the parts holding the cells `starts` ((column, row): the move cells, the flash landings):
    (label per cell, -1 off the road or in no such part; each label's size; its edge and monster
    flags as a (labels, 2) bool array). `monsters`: (column, row) in view."""
    grid = bit_grid(*view.shape)
    return rooms_beyond_bits(grid, grid.of_mask(view), starts, monsters)


def rooms_beyond_bits(grid: BitGrid, road: int, starts: list[tuple[int, int]], monsters: list[tuple[int, int]]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`rooms_beyond` on a BitGrid's int of the view's road."""
    parts = room_parts(grid, road, starts, monsters)
    return (grid.first_index(parts.bits, -1), np.asarray(parts.sizes, dtype=np.int32),
            np.asarray(parts.flags, dtype=bool).reshape(-1, 2))


@dataclass
class RoomParts:
    """`rooms_beyond`'s parts as plain Python: each part's cells (an int), size, [edge, monster]
    flags, and the part index of each start cell that lies in one."""

    bits: list[int]
    sizes: list[int]
    flags: list[list[bool]]
    of_start: dict[tuple[int, int], int]


def room_parts(grid: BitGrid, road: int, starts: list[tuple[int, int]], monsters: list[tuple[int, int]]) -> RoomParts:
    """The parts behind `rooms_beyond`. A diagonal step needs one of its two sides open, and that
    side joins both cells already: the parts are the 4-connected ones."""
    height, width, s = grid.height, grid.width, grid.stride
    rest = road & ~grid.bit(height // 2, height // 2)  # the hero: the centre of the (square) view
    taken = 0  # the cells of the parts found so far
    parts: list[int] = []
    of_start: dict[tuple[int, int], int] = {}
    for c0, r0 in starts:
        if not (0 <= r0 < height and 0 <= c0 < width):
            continue
        part = 1 << (r0 * s + c0)
        if not rest & part:  # off the road, or in a part already labelled
            if taken & part:
                for n, bits in enumerate(parts):
                    if bits & part:
                        of_start[(c0, r0)] = n
                        break
            continue
        of_start[(c0, r0)] = len(parts)
        rest ^= part
        frontier = part
        while frontier:
            frontier = (frontier << 1 | frontier >> 1 | frontier << s | frontier >> s) & rest  # the 4 neighbours
            rest ^= frontier
            part |= frontier
        parts.append(part)
        taken |= part
    flags = [[bool(part & grid.border), False] for part in parts]
    for c, r in monsters:
        if 0 <= r < height and 0 <= c < width:
            cell = 1 << (r * s + c)
            for n, part in enumerate(parts):
                if part & cell:
                    flags[n][1] = True
    return RoomParts(parts, [part.bit_count() for part in parts], flags, of_start)
