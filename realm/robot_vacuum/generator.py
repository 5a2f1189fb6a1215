"""Seeded generated indoor maps in the style of the official illustration (a floor plan: rooms
behind walls with doors, corridors, furniture blocks, outdoor space around the building, 4
chargers, 4 official robots), sized like the open maps: 5,700-7,900 dirt cells with all 4
chargers (the measured per-map total_dirt of maps 1-10 is 5,690..7,873).

They are the embedded default (no map file needed: the official maps are not public) and the
held-out maps of evaluation (the 5 hidden maps of the final evaluation are not public either).

How: a building rectangle (sometimes L-shaped: a corner cut off as outdoor space) inside an
outdoor margin; its inside split recursively (BSP) into rooms by 1-cell walls or by corridors 3-5
cells wide between two walls, each split opened by a door 2-4 cells wide (sometimes a second
one, for loops); furniture blocks (2-4 by 3-8 cells, mostly against a wall, never in front of a
door) placed while the road around each block stays locally connected, until the road target is
met (8-18% of the floor at least); the largest road component kept (one connected network); 4
charger sites, 3x3 on road and against a wall, one per quarter of the building; 4 official robot
spawn points, one per quarter, whose 21x21 squares do not overlap.
"""
from __future__ import annotations

from collections import deque
from functools import lru_cache

import numpy as np

from realm.gorge_chase.maps import id_ranges
from realm.robot_vacuum.constants import CHARGER_SIZE, GRID_SIZE, MAX_CHARGERS, MAX_ROBOTS, NPC_RADIUS
from realm.robot_vacuum.maps import GENERATED_IDS, VacuumMap, footprint, road_components

DIRT_TARGET = (5800, 7800)  # drawn per map: furniture is added until the dirt count is at most this
DIRT_LIMITS = (5700, 7900)  # a layout outside is drawn again
MIN_ROOM = 9  # a room's side at least
MAX_ROOM = 30  # a region wider or taller than this is split
MAX_TRIES = 40


def _split(grid: np.ndarray, rng: np.random.Generator, xa: int, za: int, xb: int, zb: int, doors: list) -> None:
    """Split the region [xa, xb) x [za, zb) of road cells into rooms (recursively), then open each
    split with a door: `doors` collects the door cells (x, z)."""
    w, h = xb - xa, zb - za
    if w <= MAX_ROOM and h <= MAX_ROOM and (max(w, h) < 2 * MIN_ROOM + 1 or rng.random() < 0.35):
        return
    vertical = w > h if abs(w - h) > 4 else bool(rng.random() < 0.5)
    span = w if vertical else h
    corridor = int(rng.integers(3, 6)) if span >= 2 * MIN_ROOM + 8 and rng.random() < 0.3 else 0
    extra = corridor + 1 if corridor else 0  # cells the split takes beyond one wall
    lo, hi = MIN_ROOM, span - MIN_ROOM - 1 - extra
    if hi < lo:
        return
    s = int(rng.integers(lo, hi + 1))
    walls = [s, s + corridor + 1] if corridor else [s]
    for k in walls:
        if vertical:
            grid[za:zb, xa + k] = False
        else:
            grid[za + k, xa:xb] = False
    if vertical:
        _split(grid, rng, xa, za, xa + walls[0], zb, doors)
        _split(grid, rng, xa + walls[-1] + 1, za, xb, zb, doors)
    else:
        _split(grid, rng, xa, za, xb, za + walls[0], doors)
        _split(grid, rng, xa, za + walls[-1] + 1, xb, zb, doors)
    for k in walls:
        for _ in range(1 + int(rng.random() < 0.35)):
            _door(grid, rng, vertical, k + (xa if vertical else za), (za, zb) if vertical else (xa, xb), doors)


def _door(grid, rng, vertical: bool, line: int, extent: tuple[int, int], doors: list) -> None:
    """Open 2-4 cells of the wall at `line` (a column when vertical, else a row) within `extent`,
    where both sides are road."""
    width = int(rng.integers(2, 5))
    starts = list(range(extent[0], extent[1] - width + 1))
    rng.shuffle(starts)
    for start in starts:
        cells = [(line, t) if vertical else (t, line) for t in range(start, start + width)]
        sides = [((x - 1, z), (x + 1, z)) if vertical else ((x, z - 1), (x, z + 1)) for x, z in cells]
        if all(grid[a[1], a[0]] and grid[b[1], b[0]] for a, b in sides):
            for x, z in cells:
                grid[z, x] = True
                doors.append((x, z))
            return


def _locally_connected(grid: np.ndarray, x0: int, z0: int, x1: int, z1: int) -> bool:
    """Whether the road cells around the block [x0, x1) x [z0, z1) (now obstacle) stay connected to
    each other within the block's box grown by 3 cells: then the block cut no path anywhere."""
    bx0, bz0 = max(0, x0 - 3), max(0, z0 - 3)
    bx1, bz1 = min(GRID_SIZE, x1 + 3), min(GRID_SIZE, z1 + 3)
    ring = [(x, z) for z in range(max(0, z0 - 1), min(GRID_SIZE, z1 + 1))
            for x in range(max(0, x0 - 1), min(GRID_SIZE, x1 + 1))
            if not (x0 <= x < x1 and z0 <= z < z1) and grid[z, x]]
    if len(ring) <= 1:
        return True
    seen = {ring[0]}
    todo = deque([ring[0]])
    while todo:
        x, z = todo.popleft()
        for nx, nz in ((x + 1, z), (x - 1, z), (x, z + 1), (x, z - 1)):
            if bx0 <= nx < bx1 and bz0 <= nz < bz1 and (nx, nz) not in seen and grid[nz, nx]:
                seen.add((nx, nz))
                todo.append((nx, nz))
    return all(cell in seen for cell in ring)


def _furnish(grid: np.ndarray, rng: np.random.Generator, box: tuple[int, int, int, int], doors: list,
             target: int) -> None:
    """Furniture blocks until the road count is at most `target` (or the tries run out): mostly
    against a wall, never within 1 cell of a door."""
    bx0, bz0, bx1, bz1 = box
    near_door = np.zeros_like(grid)
    for x, z in doors:
        near_door[max(0, z - 2):z + 3, max(0, x - 2):x + 3] = True
    road = int(grid.sum())
    for _ in range(4000):
        if road <= target:
            return
        a, b = int(rng.integers(2, 5)), int(rng.integers(3, 9))
        w, h = (a, b) if rng.random() < 0.5 else (b, a)
        x0 = int(rng.integers(bx0, bx1 - w))
        z0 = int(rng.integers(bz0, bz1 - h))
        if rng.random() < 0.75:  # slide it against the nearest wall in a random direction
            dx, dz = ((1, 0), (-1, 0), (0, 1), (0, -1))[int(rng.integers(4))]
            while grid[z0:z0 + h, x0:x0 + w].all():
                nx0, nz0 = x0 + dx, z0 + dz
                if not (bx0 <= nx0 and nx0 + w <= bx1 and bz0 <= nz0 and nz0 + h <= bz1):
                    break
                if not grid[nz0:nz0 + h, nx0:nx0 + w].all():
                    break
                x0, z0 = nx0, nz0
        block = grid[z0:z0 + h, x0:x0 + w]
        if not block.all() or near_door[z0:z0 + h, x0:x0 + w].any():
            continue
        block[:] = False
        if _locally_connected(grid, x0, z0, x0 + w, z0 + h):
            road -= w * h
        else:
            block[:] = True


def _largest_component(grid: np.ndarray) -> np.ndarray:
    """The grid with every road cell outside its largest 4-connected component made obstacle."""
    labels, sizes = road_components(grid)
    if not sizes:
        return grid
    return labels == 1 + int(np.argmax(sizes))


def _quarters(box) -> list[tuple[int, int, int, int]]:
    x0, z0, x1, z1 = box
    mx, mz = (x0 + x1) // 2, (z0 + z1) // 2
    return [(x0, z0, mx, mz), (mx, z0, x1, mz), (x0, mz, mx, z1), (mx, mz, x1, z1)]


def _charger_sites(grid: np.ndarray, rng: np.random.Generator, box) -> list[tuple[int, int]] | None:
    """One 3x3 all-road site per quarter of the building, against a wall where one is (the top-left
    cells); None when a quarter has no room for one."""
    g = grid.astype(np.int32)
    s = np.zeros((GRID_SIZE + 1, GRID_SIZE + 1), dtype=np.int32)
    s[1:, 1:] = g.cumsum(0).cumsum(1)

    def window(k):  # road count of the k x k window whose top-left cell is (x, z), for x, z in 0..128-k
        return s[k:, k:] - s[:-k, k:] - s[k:, :-k] + s[:-k, :-k]

    full = window(CHARGER_SIZE) == CHARGER_SIZE * CHARGER_SIZE
    ring = window(CHARGER_SIZE + 2)  # the 5x5 around, top-left one up-left
    against = np.zeros_like(full)
    against[1:1 + ring.shape[0], 1:1 + ring.shape[1]] = ring < (CHARGER_SIZE + 2) ** 2
    sites: list[tuple[int, int]] = []
    for qx0, qz0, qx1, qz1 in _quarters(box):
        ok = np.zeros_like(full)
        ok[qz0:qz1 - 2, qx0:qx1 - 2] = full[qz0:qz1 - 2, qx0:qx1 - 2]
        for x, z in sites:
            ok[max(0, z - 2 - 4):z + 3 + 4, max(0, x - 2 - 4):x + 3 + 4] = False
        pool = np.argwhere(ok & against)
        if len(pool) == 0:
            pool = np.argwhere(ok)
        if len(pool) == 0:
            return None
        z, x = (int(v) for v in pool[int(rng.integers(len(pool)))])
        sites.append((x, z))
    return sites


def _npc_spawns(grid: np.ndarray, rng: np.random.Generator, box, chargers) -> list[tuple[int, int]] | None:
    """One spawn point per quarter, on road off the chargers, the 21x21 squares apart."""
    on_charger = {cell for x, z in chargers for cell in footprint(x, z)}
    spawns: list[tuple[int, int]] = []
    for qx0, qz0, qx1, qz1 in _quarters(box):
        zs, xs = np.nonzero(grid[qz0:qz1, qx0:qx1])
        order = rng.permutation(len(xs))
        for i in order[:400]:
            x, z = int(xs[i]) + qx0, int(zs[i]) + qz0
            if (x, z) in on_charger:
                continue
            if all(max(abs(x - sx), abs(z - sz)) > 2 * NPC_RADIUS for sx, sz in spawns):
                spawns.append((x, z))
                break
        else:
            return None
    return spawns[:MAX_ROBOTS]


def _attempt(rng: np.random.Generator):
    dirt_target = int(rng.integers(DIRT_TARGET[0], DIRT_TARGET[1] + 1))
    cut = (float(rng.uniform(0.25, 0.45)), float(rng.uniform(0.25, 0.45))) if rng.random() < 0.6 else (0.0, 0.0)
    # the building's size from the target: walls and furniture take about a quarter of the inside
    area = dirt_target / rng.uniform(0.72, 0.82) / (1.0 - cut[0] * cut[1])
    aspect = float(rng.uniform(0.75, 1.33))
    bw = int(np.clip(round((area * aspect) ** 0.5), 60, GRID_SIZE - 6))
    bh = int(np.clip(round(area / bw), 60, GRID_SIZE - 6))
    grid = np.zeros((GRID_SIZE, GRID_SIZE), dtype=bool)
    x0 = int(rng.integers(2, GRID_SIZE - bw - 1))
    z0 = int(rng.integers(2, GRID_SIZE - bh - 1))
    box = (x0 + 1, z0 + 1, x0 + bw - 1, z0 + bh - 1)  # inside the outer wall
    grid[box[1]:box[3], box[0]:box[2]] = True
    doors: list = []
    _split(grid, rng, *box, doors)
    if cut[0]:  # an L-shaped building: a corner is outdoor space
        cw, ch = int(bw * cut[0]), int(bh * cut[1])
        cx = x0 if rng.random() < 0.5 else x0 + bw - cw
        cz = z0 if rng.random() < 0.5 else z0 + bh - ch
        grid[cz:cz + ch, cx:cx + cw] = False
    grid = _largest_component(grid)
    # furniture covers 8-18% of the floor, and more where the building came out larger than the target
    target = min(dirt_target + MAX_CHARGERS * CHARGER_SIZE ** 2, int(grid.sum() * rng.uniform(0.82, 0.92)))
    _furnish(grid, rng, box, doors, target)
    grid = _largest_component(grid)
    chargers = _charger_sites(grid, rng, box)
    if chargers is None:
        return None
    spawns = _npc_spawns(grid, rng, box, chargers)
    if spawns is None:
        return None
    dirt = int(grid.sum()) - MAX_CHARGERS * CHARGER_SIZE ** 2
    if not DIRT_LIMITS[0] <= dirt <= DIRT_LIMITS[1]:
        return None
    return grid, chargers, spawns


@lru_cache(maxsize=64)
def generated_map(seed: int) -> VacuumMap:
    """The VacuumMap of `seed` (deterministic), one instance per process."""
    rng = np.random.default_rng([0x5AC, int(seed)])
    for _ in range(MAX_TRIES):
        made = _attempt(rng)
        if made is not None:
            grid, chargers, spawns = made
            return VacuumMap(grid, chargers, spawns, f"generated_{seed}")
    raise RuntimeError(f"generated map {seed}: no valid layout in {MAX_TRIES} tries")  # pragma: no cover


def map_stats(game_map: VacuumMap) -> dict:
    """What the tests compare with the open maps: road cells, total_dirt with all 4 chargers,
    components, the outdoor margin, obstacle cells inside the building's bounding box."""
    w = game_map.walkable
    zs, xs = np.nonzero(w)
    inside = w[zs.min():zs.max() + 1, xs.min():xs.max() + 1]
    return {
        "road_cells": int(w.sum()),
        "total_dirt": game_map.layout(tuple(range(len(game_map.chargers))))[2],
        "components": len(road_components(w)[1]),
        "margin": int(min(zs.min(), xs.min(), GRID_SIZE - 1 - zs.max(), GRID_SIZE - 1 - xs.max())),
        "blocked_inside": float(1.0 - inside.mean()),
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
        ids = id_ranges(map_ids) if map_ids else "as the episodes name them"
        return f"generated maps of map_seed {self.map_seed}, ids {ids} (the simulator's own, not the official maps)"

    def get(self, map_id: int) -> VacuumMap:
        return generated_map(self.map_seed * 1000 + int(map_id))
