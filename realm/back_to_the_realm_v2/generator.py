"""Seeded v2 maps in map_cherry's family, the default maps of the v2 simulator.

map_cherry (the one v2 map whose layout is public, as an image) has about 3,400 passable cells:
corridors 5–10 cells wide between rooms, a few loops, many dead ends, and six dynamic obstacles,
each a 2-cell-thick bar across a corridor on a loop (closing one keeps the map connected but forces
a long detour). A generated map: rooms at the map's official default points (start, end, buff,
and map_cherry's 28.1.1 chests) plus well-spaced extra rooms, joined by a random near-minimal
spanning tree of corridors plus a few loops, then six bars across loop corridors. Only numpy's
PCG64 stream and integer arithmetic decide the layout, so a seed gives the same map everywhere.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from realm.back_to_the_realm.generator import find_root, plan_edges
from realm.back_to_the_realm_v2.constants import CHERRY_TREASURES_28, DEFAULT_POINTS, GRID_SIZE, MAP_NAMES, NUM_OBSTACLES
from realm.back_to_the_realm_v2.maps import MIN_OBSTACLE_DETOUR, V2Map, bar_detour, component_sizes, validate_obstacles

MIN_PASSABLE = 3000
MAX_PASSABLE = 3900
NODE_SPACING = 20  # cells between extra rooms and any other room
NODE_LOW, NODE_HIGH = 12, GRID_SIZE - 13
NODE_COUNT_RANGE = (15, 18)
NODE_DART_TRIES = 600
CORRIDOR_WIDTHS = (4, 5, 5, 6, 6, 7)
ROOM_RADII = (3, 4, 4, 5)
ELBOW_SHAPES = 5  # a corridor takes an elbow with probability 2 / ELBOW_SHAPES
LOOP_COUNT_RANGE = (4, 6)
LOOP_CANDIDATES = 10
MAX_BAR_LENGTH = 16
BAR_CLEARANCE = 4  # Chebyshev cells between a bar and a default point or another bar
MAX_ATTEMPTS = 64


def default_points(map_name: str) -> list[tuple[int, int]]:
    """The official points a generated map of `map_name` is built through."""
    points = [DEFAULT_POINTS[map_name][k] for k in ("start", "end", "buff")]
    if map_name == "map_cherry":
        points += list(CHERRY_TREASURES_28)
    return points


def _place_nodes(rng, anchors):
    nodes = [tuple(p) for p in anchors]
    target = int(rng.integers(NODE_COUNT_RANGE[0], NODE_COUNT_RANGE[1] + 1))
    darts = rng.integers(NODE_LOW, NODE_HIGH + 1, size=(NODE_DART_TRIES, 2))
    min_sq = NODE_SPACING * NODE_SPACING
    for x, z in darts.tolist():
        if len(nodes) >= target:
            break
        if all((x - a) ** 2 + (z - b) ** 2 >= min_sq for a, b in nodes):
            nodes.append((x, z))
    return nodes


def _round_div(a: int, b: int) -> int:
    return (2 * a + b) // (2 * b)


def _segment_cells(a, b):
    (x0, z0), (x1, z1) = a, b
    dx, dz = x1 - x0, z1 - z0
    n = max(abs(dx), abs(dz), 1)
    return [(x0 + _round_div(dx * i, n), z0 + _round_div(dz * i, n)) for i in range(n + 1)]


def _stamp_square(grid, x, z, width):
    lo = -(width // 2)
    grid[max(z + lo, 0): z + lo + width, max(x + lo, 0): x + lo + width] = True


def _stamp_disc(grid, x, z, radius):
    offsets = np.arange(-radius, radius + 1)
    disc = offsets[:, None] ** 2 + offsets[None, :] ** 2 <= radius * radius + radius
    grid[z - radius: z + radius + 1, x - radius: x + radius + 1] |= disc


def _carve(rng, nodes, edges):
    """The grid [z, x] and, per edge, its segments ((a, b) cell pairs along the centreline)."""
    grid = np.zeros((GRID_SIZE, GRID_SIZE), dtype=bool)
    segments = {}
    for i, j in edges:
        a, b = nodes[i], nodes[j]
        width = CORRIDOR_WIDTHS[int(rng.integers(len(CORRIDOR_WIDTHS)))]
        shape = int(rng.integers(ELBOW_SHAPES))
        if shape >= 2:
            parts = [(a, b)]
        else:
            elbow = (b[0], a[1]) if shape == 0 else (a[0], b[1])
            parts = [(a, elbow), (elbow, b)]
        for p, q in parts:
            for x, z in _segment_cells(p, q):
                _stamp_square(grid, x, z, width)
        segments[(i, j)] = parts
    for x, z in nodes:
        _stamp_disc(grid, x, z, ROOM_RADII[int(rng.integers(len(ROOM_RADII)))])
    return grid, segments


def _cycle_edges(n, edges):
    """Edges on a cycle of the node graph (removing one keeps it connected)."""
    on_cycle = []
    for k, (i, j) in enumerate(edges):
        parent = list(range(n))
        for m, (a, b) in enumerate(edges):
            if m != k:
                parent[find_root(parent, a)] = find_root(parent, b)
        if find_root(parent, i) == find_root(parent, j):
            on_cycle.append((i, j))
    return on_cycle


def _bar_at(grid, x, z, horizontal_corridor: bool):
    """A 2-cell-thick bar across the corridor at (x, z): two columns (a corridor running along x)
    or two rows, each over the passable run through the bar's line; None when too long."""
    cells = []
    for k in (0, 1):
        if horizontal_corridor:
            cx = x + k
            if not grid[z, cx]:
                return None
            lo = hi = z
            while lo - 1 >= 0 and grid[lo - 1, cx]:
                lo -= 1
            while hi + 1 < GRID_SIZE and grid[hi + 1, cx]:
                hi += 1
            cells += [(cx, zz) for zz in range(lo, hi + 1)]
        else:
            cz = z + k
            if not grid[cz, x]:
                return None
            lo = hi = x
            while lo - 1 >= 0 and grid[cz, lo - 1]:
                lo -= 1
            while hi + 1 < GRID_SIZE and grid[cz, hi + 1]:
                hi += 1
            cells += [(xx, cz) for xx in range(lo, hi + 1)]
        if len(cells) > 2 * MAX_BAR_LENGTH:
            return None
    return cells


def _near(cells, points, gap):
    arr = np.asarray(cells)
    return any((np.maximum(abs(arr[:, 0] - px), abs(arr[:, 1] - pz)) < gap).any() for px, pz in points)


def _place_obstacles(rng, grid, nodes, edges, segments, anchors):
    obstacles = {}
    candidates = _cycle_edges(len(nodes), edges)
    order = rng.permutation(len(candidates)).tolist()
    keep_clear = list(anchors)
    for k in order:
        if len(obstacles) == NUM_OBSTACLES:
            break
        parts = segments[candidates[k]]
        (ax, az), (bx, bz) = max(parts, key=lambda s: max(abs(s[1][0] - s[0][0]), abs(s[1][1] - s[0][1])))
        horizontal = abs(bx - ax) >= abs(bz - az)
        for t in (50, 40, 60, 30, 70):
            x, z = ax + _round_div((bx - ax) * t, 100), az + _round_div((bz - az) * t, 100)
            cells = _bar_at(grid, x, z, horizontal)
            if cells is None or _near(cells, keep_clear, BAR_CLEARANCE) or any(_near(cells, o, BAR_CLEARANCE) for o in obstacles.values()):
                continue
            closed = grid.copy()
            for cx, cz in cells:
                closed[cz, cx] = False
            if len(component_sizes(closed)) != 1 or bar_detour(grid, cells) < MIN_OBSTACLE_DETOUR:
                continue
            obstacles[len(obstacles) + 1] = cells
            break
    return obstacles if len(obstacles) == NUM_OBSTACLES else None


def _attempt(seed: int, attempt: int, map_name: str) -> V2Map | None:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, attempt, MAP_NAMES.index(map_name)])))
    anchors = default_points(map_name)
    nodes = _place_nodes(rng, anchors)
    tree, loops = plan_edges(rng, nodes, LOOP_COUNT_RANGE, LOOP_CANDIDATES)
    edges = tree + loops
    grid, segments = _carve(rng, nodes, edges)
    grid[:2, :] = grid[-2:, :] = False
    grid[:, :2] = grid[:, -2:] = False
    if not MIN_PASSABLE <= int(grid.sum()) <= MAX_PASSABLE or len(component_sizes(grid)) != 1:
        return None
    obstacles = _place_obstacles(rng, grid, nodes, edges, segments, anchors)
    if obstacles is None:
        return None
    return V2Map(grid, obstacles, name=f"generated-v2-{map_name}-{seed}", map_name=map_name)


def generate_v2_map(seed: int = 0, map_name: str = "map_cherry") -> V2Map:
    """The generated map of `seed` through the default points of `map_name`; attempts derive their
    streams from (seed, attempt, map) until one is valid (`validate_v2_map` holds for it)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"map seed must be a non-negative int, got {seed!r}")
    if map_name not in MAP_NAMES:
        raise ValueError(f"map_name = {map_name!r} is invalid: allowed {' | '.join(MAP_NAMES)}")
    for attempt in range(MAX_ATTEMPTS):
        generated = _attempt(int(seed), attempt, map_name)
        if generated is not None:
            return generated
    raise RuntimeError(f"no valid v2 map for seed {seed} ({map_name}) in {MAX_ATTEMPTS} attempts")


@lru_cache(maxsize=16)
def generated_v2_map(seed: int = 0, map_name: str = "map_cherry") -> V2Map:
    """Generated maps are immutable: envs in one process share one instance per (seed, map_name)."""
    return generate_v2_map(seed, map_name)


def validate_v2_map(m: V2Map, points=None) -> list[str]:
    """What keeps `m` out of the v2 family; [] when it belongs: MIN_PASSABLE..MAX_PASSABLE
    passable cells in one connected part, six obstacles that each close a corridor and keep the
    map connected, and `points` (default: its map_name's default points) passable and clear of
    the obstacles."""
    problems = []
    count = m.num_passable
    if not MIN_PASSABLE <= count <= MAX_PASSABLE:
        problems.append(f"{count} passable cells, want {MIN_PASSABLE}..{MAX_PASSABLE}")
    if sorted(m.obstacles) != list(range(1, NUM_OBSTACLES + 1)):
        problems.append(f"obstacles {sorted(m.obstacles)}, want 1..{NUM_OBSTACLES}")
    problems += validate_obstacles(m)
    for x, z in (default_points(m.map_name) if points is None else points):
        if not m.is_passable(x, z):
            problems.append(f"point [{x}, {z}] is not passable")
        elif m.obstacle_at(x, z):
            problems.append(f"point [{x}, {z}] lies under obstacle {m.obstacle_at(x, z)}")
    return problems
