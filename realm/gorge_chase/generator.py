"""Seeded generated maps in the style of the 10 open maps: one connected network of winding
corridors 4-7 cells wide, with a few wider junction rooms, 4,000-5,000 road cells, and at least
9 obstacle cells between the road and the border.

They are the embedded default (no map file needed) and the held-out maps of evaluation: the 5
hidden maps of the final evaluation are not public, so generalisation is measured on maps the
agent never trained on. `map_stats` measures a grid the way the tests compare generated maps
with the open ones.

How: nodes on a jittered 5x5 lattice; a random spanning tree of lattice edges keeps the network
connected, extra edges add loops until the road target (drawn in 4,100..4,900) is met; each
edge is drawn as a meandering run of axis-aligned segments with a square brush of its own width.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from realm.gorge_chase.constants import GRID_SIZE
from realm.gorge_chase.maps import GENERATED_IDS, GorgeMap, components, id_ranges

MARGIN = 9  # obstacle cells between road and border, at least
WIDTHS = (4, 4, 4, 5, 5, 6)
ROAD_TARGET = (4100, 4900)
ROAD_LIMITS = (4000, 5000)
LATTICE = 5
MAX_TRIES = 50


def _brush(grid: np.ndarray, x0: int, z0: int, x1: int, z1: int, width: int) -> None:
    """Paint the axis-aligned segment (x0, z0)-(x1, z1) with a width x width square brush."""
    lo, hi = MARGIN, GRID_SIZE - MARGIN  # paint only inside the margin
    half = width // 2
    xa, xb = sorted((x0, x1))
    za, zb = sorted((z0, z1))
    xs, xe = max(lo, xa - half), min(hi, xb - half + width)
    zs, ze = max(lo, za - half), min(hi, zb - half + width)
    grid[zs:ze, xs:xe] = True


def _edge(grid: np.ndarray, rng: np.random.Generator, a, b, width: int) -> None:
    """A winding corridor from node a to node b: runs of 6-14 cells along the main axis, each
    followed by a sideways jog of up to 4 cells (staying within 7 cells of the straight line),
    so that corridors bend often as in the open maps instead of running straight."""
    (ax, az), (bx, bz) = a, b
    horizontal = abs(bx - ax) >= abs(bz - az)
    main0, main1 = (ax, bx) if horizontal else (az, bz)
    side0, side1 = (az, bz) if horizontal else (ax, bx)
    sign = 1 if main1 >= main0 else -1
    length = abs(main1 - main0)
    points = [(main0, side0)]
    pos, side = 0, side0
    while pos < length:
        pos = min(length, pos + int(rng.integers(6, 15)))
        line = side0 + (side1 - side0) * pos / max(length, 1)
        points.append((main0 + sign * pos, side))
        if pos < length:
            side = int(np.clip(side + rng.integers(-4, 5), line - 7, line + 7))
            points.append((main0 + sign * pos, side))
    points.append((main1, side1))
    for (m0, s0), (m1, s1) in zip(points, points[1:]):
        if horizontal:
            _brush(grid, m0, s0, m1, s1, width)
        else:
            _brush(grid, s0, m0, s1, m1, width)


def _attempt(rng: np.random.Generator) -> np.ndarray:
    lo, hi = MARGIN + 5, GRID_SIZE - MARGIN - 6
    step = (hi - lo) / (LATTICE - 1)
    nodes = {}
    for i in range(LATTICE):
        for j in range(LATTICE):
            jitter = rng.integers(-4, 5, size=2)
            x = int(np.clip(round(lo + i * step) + jitter[0], lo, hi))
            z = int(np.clip(round(lo + j * step) + jitter[1], lo, hi))
            nodes[(i, j)] = (x, z)
    edges = [((i, j), (i + 1, j)) for i in range(LATTICE - 1) for j in range(LATTICE)]
    edges += [((i, j), (i, j + 1)) for i in range(LATTICE) for j in range(LATTICE - 1)]
    order = rng.permutation(len(edges))
    parent = {n: n for n in nodes}

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    tree, extra = [], []
    for k in order:
        a, b = edges[k]
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
            tree.append(edges[k])
        else:
            extra.append(edges[k])
    grid = np.zeros((GRID_SIZE, GRID_SIZE), dtype=bool)
    target = int(rng.integers(ROAD_TARGET[0], ROAD_TARGET[1] + 1))
    # a few wide junction rooms, as the open maps have
    for n in rng.permutation(len(nodes))[: int(rng.integers(0, 2))]:
        x, z = nodes[list(nodes)[n]]
        size = int(rng.integers(9, 14))
        _brush(grid, x, z, x + size - 7, z, 7)
        _brush(grid, x, z + 3, x + size - 7, z + 3, 7)
    for a, b in tree:
        _edge(grid, rng, nodes[a], nodes[b], int(rng.choice(WIDTHS)))
    for a, b in extra:
        if grid.sum() >= target:
            break
        _edge(grid, rng, nodes[a], nodes[b], int(rng.choice(WIDTHS)))
    return grid


def generate_grid(seed: int) -> np.ndarray:
    """The walkable grid [z, x] of generated map `seed` (deterministic)."""
    rng = np.random.default_rng([0x60E6E, int(seed)])
    for _ in range(MAX_TRIES):
        grid = _attempt(rng)
        n = int(grid.sum())
        if ROAD_LIMITS[0] <= n <= ROAD_LIMITS[1] and components(grid) == 1:
            return grid
    raise RuntimeError(f"generated map {seed}: no valid layout in {MAX_TRIES} tries")  # pragma: no cover


@lru_cache(maxsize=64)
def generated_map(seed: int) -> GorgeMap:
    """The GorgeMap of `seed`, one instance per process (envs share its distance rows)."""
    return GorgeMap(generate_grid(seed), f"generated_{seed}")


def map_stats(walkable) -> dict:
    """road cells, components, border margin, and corridor width (per road cell the shorter of
    its horizontal and vertical road runs: median, 10th and 90th percentile)."""
    w = np.asarray(walkable, dtype=bool)

    def runs(g):
        out = np.zeros(g.shape, dtype=np.int64)
        for z in range(g.shape[0]):
            row = g[z]
            edges = np.flatnonzero(np.diff(np.concatenate(([0], row.astype(np.int8), [0]))))
            for s, e in zip(edges[::2], edges[1::2]):
                out[z, s:e] = e - s
        return out

    width = np.minimum(runs(w), runs(w.T).T)[w]
    zs, xs = np.nonzero(w)
    return {
        "road_cells": int(w.sum()),
        "components": components(w),
        "margin": int(min(zs.min(), xs.min(), GRID_SIZE - 1 - zs.max(), GRID_SIZE - 1 - xs.max())),
        "width_median": float(np.median(width)),
        "width_p10": float(np.percentile(width, 10)),
        "width_p90": float(np.percentile(width, 90)),
    }


class GeneratedMaps:
    """Maps by id from the generator: id i is the generated map of seed `map_seed * 1000 + i`
    (the embedded default, no file needed)."""

    def __init__(self, map_seed: int = 0):
        self.map_seed = int(map_seed)
        self.name = f"generated:{self.map_seed}"

    def allowed_ids(self) -> range:
        return GENERATED_IDS

    def describe(self, map_ids) -> str:
        """The generated maps episodes naming `map_ids` play (not the official maps of those ids)."""
        ids = id_ranges(map_ids) if map_ids else "as the episodes name them"
        return f"generated maps of map_seed {self.map_seed}, ids {ids} (the simulator's own, not the official maps)"

    def get(self, map_id: int) -> GorgeMap:
        return generated_map(self.map_seed * 1000 + int(map_id))
