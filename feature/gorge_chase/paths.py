"""Two path readings of gorge_chase's known map that a move's features need, each one pass:

- `steps_from_targets`: the hero's 8-connected path length to the nearest target (a live chest)
  from its cell and from each neighbour, over the map as far as it is known (road seen is road,
  a cell never seen counts as road: an optimistic guess that keeps unexplored ground reachable);
- `rooms_beyond`: with the hero's cell taken away, the part of the view's road each neighbour
  (and each flash landing) belongs to (8-connected, a diagonal step needing one of its two
  sides open, as the hero's own moves): how big it is, whether it runs off the view's edge
  (a way on) and whether a monster stands in it. A dead-end pocket is small and closed.
"""
from __future__ import annotations

from collections import deque

import numpy as np

UNKNOWN_STEPS = -1  # no target within reach of the window


def cells_marked(shape: tuple[int, int], cells) -> np.ndarray:
    """A bool array [row, column] of `shape`, True on the (column, row) `cells` inside it: a search's first frontier."""
    marked = np.zeros(shape, dtype=bool)
    for c, r in cells:
        if 0 <= r < shape[0] and 0 <= c < shape[1]:
            marked[r, c] = True
    return marked


def steps_from_targets(walkable: np.ndarray, targets: list[tuple[int, int]], limit: int) -> np.ndarray:
    """3×3 path lengths [dz + 1, dx + 1] from the nearest target to the window's centre and its
    neighbours (`walkable`: an odd square window [row, column] centred on the hero; `targets`:
    (column, row) in it; 8-connected, no corner rule). UNKNOWN_STEPS where none is reached within
    `limit` steps. The frontier stops once the centre's walkable neighbourhood is filled."""
    size = walkable.shape[0]
    centre = size // 2
    out = np.full((3, 3), UNKNOWN_STEPS, dtype=np.int32)
    frontier = cells_marked(walkable.shape, targets)
    if not frontier.any():
        return out
    near = (slice(centre - 1, centre + 2), slice(centre - 1, centre + 2))
    wanted = walkable[near] | frontier[near]
    free = walkable & ~frontier
    for step in range(limit + 1):
        hit = frontier[near]
        if hit.any():
            out[hit & (out < 0)] = step
            if (out[wanted] >= 0).all():
                break
        wide = frontier.copy()  # the 8-neighbourhood as a row pass then a column pass
        wide[:, 1:] |= frontier[:, :-1]
        wide[:, :-1] |= frontier[:, 1:]
        grown = wide.copy()
        grown[1:] |= wide[:-1]
        grown[:-1] |= wide[1:]
        grown &= free
        if not grown.any():
            break
        free &= ~grown
        frontier = grown
    return out


def rooms_beyond(view: np.ndarray, starts: list[tuple[int, int]], monsters: list[tuple[int, int]]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Over the view's road (`view` [row, column], the hero at its centre, taken away), 8-connected,
    the parts holding the cells `starts` ((column, row): the move cells, the flash landings):
    (label per cell, -1 off the road or in no such part; each label's size; its edge and monster
    flags as a (labels, 2) bool array). `monsters`: (column, row) in view."""
    size = view.shape[0]
    centre = size // 2
    label = np.full((size, size), -1, dtype=np.int32)
    road = view.astype(bool).copy()
    road[centre, centre] = False
    sizes, flags = [], []
    grid = road.tolist()
    lab = label.tolist()
    for c0, r0 in starts:
        if not (0 <= r0 < size and 0 <= c0 < size) or not grid[r0][c0] or lab[r0][c0] >= 0:
            continue
        n = len(sizes)
        lab[r0][c0] = n
        queue, count, edge = deque([(r0, c0)]), 0, False
        while queue:
            r, c = queue.popleft()
            count += 1
            if r == 0 or c == 0 or r == size - 1 or c == size - 1:
                edge = True
            here = grid[r]
            for dr in (-1, 0, 1):
                rr = r + dr
                if not 0 <= rr < size:
                    continue
                row, lrow = grid[rr], lab[rr]
                for dc in (-1, 0, 1):
                    cc = c + dc
                    if 0 <= cc < size and row[cc] and lrow[cc] < 0 and (
                            not (dr and dc) or row[c] or here[cc]):  # a diagonal needs a side open
                        lrow[cc] = n
                        queue.append((rr, cc))
        sizes.append(count)
        flags.append([edge, False])
    label = np.asarray(lab, dtype=np.int32)
    for c, r in monsters:
        if 0 <= r < size and 0 <= c < size and label[r, c] >= 0:
            flags[label[r, c]][1] = True
    return label, np.asarray(sizes, dtype=np.int32), np.asarray(flags, dtype=bool).reshape(-1, 2)
