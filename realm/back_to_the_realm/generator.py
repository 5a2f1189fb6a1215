"""Seeded maps of the official map's family (SPEC §9), the project's default map.

The official map is drawn in 2×2-cell blocks, so generation works on a 64×64 block grid:
rooms at well-spaced nodes, joined by a random near-minimal spanning tree of corridors (its
leaves are the dead ends) plus a few loops, then scaled up ×2. Only numpy's PCG64 stream and
integer arithmetic decide the layout, so a seed gives the same bytes on every machine.
"""
from __future__ import annotations

import numpy as np

from realm.back_to_the_realm.constants import GRID_SIZE, NUM_POSITIONS
from realm.back_to_the_realm.maps import Map, bfs_distances, cell_center

BLOCK = 2  # cells per block side, as in the official map
BLOCKS = GRID_SIZE // BLOCK

MIN_PASSABLE = 3500
MAX_PASSABLE = 5000
MIN_POSITION_SPACING = 20  # BFS cells between any two special positions
CENTRE_TOLERANCE = 16  # cells (Chebyshev) from the grid centre allowed for position 0

# Layout, in blocks. Node centres at least NODE_SPACING apart (Euclidean) keep positions at
# least 2 × NODE_SPACING = 20 cells apart along any path.
NODE_SPACING = 10
NODE_LOW, NODE_HIGH = 7, BLOCKS - 8  # node centres stay clear of the border
NODE_COUNT_RANGE = (19, 23)
NODE_DART_TRIES = 800
CENTRE_JITTER = 3
CORRIDOR_WIDTHS = (3, 3, 3, 4, 4, 5)  # blocks: 6..10 cells
ROOM_RADII = (2, 2, 3, 3)  # blocks
ELBOW_SHAPES = 6  # a corridor takes an elbow with probability 2 / ELBOW_SHAPES
LOOP_COUNT_RANGE = (1, 3)
LOOP_CANDIDATES = 8
MAX_ATTEMPTS = 64


def _round_div(a: int, b: int) -> int:
    """a / b rounded half up with integer math (b > 0)."""
    return (2 * a + b) // (2 * b)


def _place_nodes(rng: np.random.Generator) -> list[tuple[int, int]]:
    """Dart throwing: the first node sits near the centre (the buff), the rest spread out."""
    centre = BLOCKS // 2
    jitter = rng.integers(-CENTRE_JITTER, CENTRE_JITTER + 1, size=2)
    nodes = [(centre + int(jitter[0]), centre + int(jitter[1]))]
    target = int(rng.integers(NODE_COUNT_RANGE[0], NODE_COUNT_RANGE[1] + 1))
    darts = rng.integers(NODE_LOW, NODE_HIGH + 1, size=(NODE_DART_TRIES, 2))
    min_sq = NODE_SPACING * NODE_SPACING
    for bx, bz in darts.tolist():
        if all((bx - x) ** 2 + (bz - z) ** 2 >= min_sq for x, z in nodes):
            nodes.append((bx, bz))
            if len(nodes) == target:
                break
    return nodes


def find_root(parent: list[int], i: int) -> int:
    """Union-find's root of i, halving the path on the way."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def plan_edges(rng: np.random.Generator, nodes, loop_count_range: tuple[int, int] = LOOP_COUNT_RANGE,
               loop_candidates: int = LOOP_CANDIDATES) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Kruskal over randomly stretched lengths: a near-minimal tree, then the next-best loops."""
    n = len(nodes)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    stretch = rng.integers(100, 170, size=len(pairs)).tolist()
    weighted = sorted(
        (((nodes[i][0] - nodes[j][0]) ** 2 + (nodes[i][1] - nodes[j][1]) ** 2) * s, i, j)
        for (i, j), s in zip(pairs, stretch)
    )
    parent = list(range(n))
    tree, rest = [], []
    for _, i, j in weighted:
        ri, rj = find_root(parent, i), find_root(parent, j)
        if ri != rj:
            parent[ri] = rj
            tree.append((i, j))
        else:
            rest.append((i, j))
    loop_count = int(rng.integers(loop_count_range[0], loop_count_range[1] + 1))
    shortlist = rest[:loop_candidates]
    picks = rng.permutation(len(shortlist))[:loop_count].tolist()
    loops = [shortlist[k] for k in sorted(picks)]
    return tree, loops


def _stamp_square(grid: np.ndarray, bx: int, bz: int, width: int) -> None:
    lo = -(width // 2)
    z0, x0 = max(bz + lo, 0), max(bx + lo, 0)
    grid[z0 : bz + lo + width, x0 : bx + lo + width] = True


def _stamp_disc(grid: np.ndarray, bx: int, bz: int, radius: int) -> None:
    offsets = np.arange(-radius, radius + 1)
    disc = offsets[:, None] ** 2 + offsets[None, :] ** 2 <= radius * radius + radius
    view = grid[bz - radius : bz + radius + 1, bx - radius : bx + radius + 1]
    view |= disc


def _carve_segment(grid: np.ndarray, a: tuple[int, int], b: tuple[int, int], width: int) -> None:
    (x0, z0), (x1, z1) = a, b
    dx, dz = x1 - x0, z1 - z0
    n = max(abs(dx), abs(dz), 1)
    for i in range(n + 1):
        _stamp_square(grid, x0 + _round_div(dx * i, n), z0 + _round_div(dz * i, n), width)


def _carve_corridor(grid: np.ndarray, rng: np.random.Generator, a, b) -> None:
    """Straight, or with one elbow (the official map mixes diagonal and axis-aligned runs)."""
    width = CORRIDOR_WIDTHS[int(rng.integers(len(CORRIDOR_WIDTHS)))]
    shape = int(rng.integers(ELBOW_SHAPES))
    if shape >= 2:
        _carve_segment(grid, a, b, width)
    else:
        elbow = (b[0], a[1]) if shape == 0 else (a[0], b[1])
        _carve_segment(grid, a, elbow, width)
        _carve_segment(grid, elbow, b, width)


def _carve(rng: np.random.Generator, nodes, edges) -> np.ndarray:
    blocks = np.zeros((BLOCKS, BLOCKS), dtype=bool)  # [bz, bx]
    for i, j in edges:
        _carve_corridor(blocks, rng, nodes[i], nodes[j])
    for bx, bz in nodes:
        _stamp_disc(blocks, bx, bz, ROOM_RADII[int(rng.integers(len(ROOM_RADII)))])
    return blocks.repeat(BLOCK, axis=0).repeat(BLOCK, axis=1)


def _node_cell(node: tuple[int, int]) -> tuple[int, int]:
    """Block -> the cell at its upper-right quarter (odd cells, like the official positions)."""
    return node[0] * BLOCK + 1, node[1] * BLOCK + 1


def _assign_positions(passable: np.ndarray, nodes, tree) -> list[int]:
    """Node index for each position id: 0 the central node, 2 (start) far from it, 1 (end)
    far from the start, 3..15 spread out by farthest-point order, dead ends first."""
    n = len(nodes)
    cells = [_node_cell(node) for node in nodes]
    fields = [bfs_distances(passable, xc, zc) for xc, zc in cells]
    dist = np.array([[fields[i][zc, xc] for xc, zc in cells] for i in range(n)])
    degree = [0] * n
    for i, j in tree:
        degree[i] += 1
        degree[j] += 1

    def farthest(candidates, chosen):
        return max(candidates, key=lambda c: (min(int(dist[c, k]) for k in chosen), -c))

    chosen = [0]
    leaves = [i for i in range(1, n) if degree[i] == 1]
    others = [i for i in range(1, n) if degree[i] != 1]
    start = farthest(leaves or others, [0])
    end = farthest([c for c in leaves + others if c != start], [start])
    chosen += [end, start]
    for group in (leaves, others):
        pool = [c for c in group if c not in chosen]
        while pool and len(chosen) < NUM_POSITIONS:
            pick = farthest(pool, chosen)
            chosen.append(pick)
            pool.remove(pick)
    return chosen


def _attempt(seed: int, attempt: int) -> Map | None:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, attempt])))
    nodes = _place_nodes(rng)
    if len(nodes) < NUM_POSITIONS:
        return None
    tree, loops = plan_edges(rng, nodes)
    passable = _carve(rng, nodes, tree + loops)
    count = int(passable.sum())
    if not MIN_PASSABLE <= count <= MAX_PASSABLE:
        return None
    order = _assign_positions(passable, nodes, tree)
    positions = np.array([cell_center(*_node_cell(nodes[k])) for k in order])
    candidate = Map(passable, positions, name=f"generated-{seed}")
    return None if validate_map(candidate) else candidate


def generate_map(seed: int) -> Map:
    """The map of `seed`; attempts derive their streams from (seed, attempt) until one is valid."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"map seed must be a non-negative int, got {seed!r}")
    for attempt in range(MAX_ATTEMPTS):
        generated = _attempt(int(seed), attempt)
        if generated is not None:
            return generated
    raise RuntimeError(f"no valid map for seed {seed} in {MAX_ATTEMPTS} attempts")


def validate_map(m: Map) -> list[str]:
    """What keeps `m` out of the SPEC's map family; [] when it belongs (the official map does)."""
    problems = []
    passable = m.num_passable
    if not MIN_PASSABLE <= passable <= MAX_PASSABLE:
        problems.append(f"{passable} passable cells, want {MIN_PASSABLE}..{MAX_PASSABLE}")
    # Positions on passable cells are already guaranteed: Map() refuses anything else.
    reached = int((m.distance_fields[0] >= 0).sum())
    if reached != passable:
        problems.append(f"{passable - reached} passable cells are not connected to position 0")
    for a in range(NUM_POSITIONS):
        for b in range(a + 1, NUM_POSITIONS):
            d = m.distance_between(a, b)
            if d < MIN_POSITION_SPACING:
                shown = "unreachable" if d < 0 else f"{d} cells apart"
                problems.append(f"positions {a} and {b} are {shown}, want >= {MIN_POSITION_SPACING}")
    xc, zc = m.position_cells[0].tolist()
    centre = GRID_SIZE // 2
    off = max(abs(xc - centre), abs(zc - centre))
    if off > CENTRE_TOLERANCE:
        problems.append(f"position 0 (buff) at cell ({xc}, {zc}) is {off} cells from the centre, want <= {CENTRE_TOLERANCE}")
    return problems
