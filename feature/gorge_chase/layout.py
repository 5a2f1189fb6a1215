"""gorge_chase's model input, declared once (feature.tables' way): `MAP_LAYOUT` is one 21×21
channel per entry centred on the hero, the view itself (roads, monsters and their path
distances, chests, buffs, visits) and coarse crops of the episode's memory (63×63 cells in 3×3
blocks: the map explored so far, what is still unseen, chests known, visits); `STATE_LAYOUT`
names the blocks of the flat state vector. A `fill` receives the episode's GorgeMemory
(feature.gorge_chase.memory) after the step; adding a feature is one entry here.
"""
from __future__ import annotations

import math

import numpy as np

from feature.gorge_chase.constants import (BUFF_DURATION, DIRECTIONS, DISTANCE_BUCKETS, FAR, FLASH_RANGE, GRID_SIZE,
                                           MAX_CHESTS, MAX_MONSTERS, NUM_ACTIONS, NUM_MOVES, RELATIVE_DIRECTIONS,
                                           SPAWN_NORM, SPEEDUP_NORM, STEP_NORM, VIEW_RADIUS, VIEW_SIZE)
from feature.gorge_chase.lookahead import guarded
from feature.gorge_chase.memory import UNREACHED, GorgeMemory
from feature.gorge_chase.paths import UNKNOWN_STEPS
from feature.tables import MapChannel, StateBlock, state_slices


def _one_hot(value: int, size: int) -> list[float]:
    out = [0.0] * size
    out[min(max(int(value), 0), size - 1)] = 1.0
    return out


def _closeness(distance: int) -> float:
    """1 next to a monster, 0 at FAR path cells or beyond."""
    return max(0.0, 1.0 - distance / FAR)


#: _monster_closeness per path distance 0..UNREACHED, computed as it would be cell by cell
CLOSENESS = np.clip(1.0 - np.arange(UNREACHED + 1, dtype=np.float32) / FAR, 0.0, 1.0)


def _monster_closeness(m: GorgeMemory) -> np.ndarray:
    """1 - path cells from the nearest monster in view / FAR, at least 0."""
    return CLOSENESS[m.monster_field]


def _monster(m: GorgeMemory, i: int) -> list[float]:
    """present, in view, (dx, dz) / 10 in view, its path distance closeness, speed, distance
    bucket (6), direction (9), steps since last seen / 100 with that cell's offset / 64."""
    s = m.monsters[i]
    if not s.present:
        return [0.0] * (6 + DISTANCE_BUCKETS + RELATIVE_DIRECTIONS + 3)
    dx = (s.x - m.hero[0]) / VIEW_RADIUS if s.in_view else 0.0
    dz = (s.z - m.hero[1]) / VIEW_RADIUS if s.in_view else 0.0
    near = _closeness(m.hero_distance(s.x, s.z)) if s.in_view else 0.0
    since = min((m.step_no - s.last_step) / 100.0, 1.0) if s.last_step >= 0 else 1.0
    ldx = (s.last_x - m.hero[0]) / 64.0 if s.last_step >= 0 else 0.0
    ldz = (s.last_z - m.hero[1]) / 64.0 if s.last_step >= 0 else 0.0
    return [1.0, float(s.in_view), dx, dz, near, s.speed / 2.0, *_one_hot(s.bucket, DISTANCE_BUCKETS),
            *_one_hot(s.direction, RELATIVE_DIRECTIONS), since, ldx, ldz]


def _timers(m: GorgeMemory) -> list[float]:
    """second monster to come, steps to it; speed-up to come, steps to it; the step."""
    info = m.env_info
    interval, speedup = int(info.get("monster_interval", 0)), int(info.get("monster_speed_boost_step", 0))
    coming = interval > m.step_no
    faster = speedup > m.step_no
    max_step = max(int(info.get("max_step", STEP_NORM)), 1)
    return [float(coming), (interval - m.step_no) / SPAWN_NORM if coming else 0.0,
            float(faster), (speedup - m.step_no) / SPEEDUP_NORM if faster else 0.0,
            m.step_no / max_step, (max_step - m.step_no) / STEP_NORM]


def _bearing(m: GorgeMemory, cell) -> list[float]:
    """known, unit (dx, dz), Chebyshev distance / 128, in view."""
    if cell is None:
        return [0.0, 0.0, 0.0, 1.0, 0.0]
    dx, dz = cell[0] - m.hero[0], cell[1] - m.hero[1]
    d = math.hypot(dx, dz)
    ux, uz = (dx / d, dz / d) if d > 0 else (0.0, 0.0)
    return [1.0, ux, uz, max(abs(dx), abs(dz)) / GRID_SIZE, float(m.in_view(*cell))]


def _items(m: GorgeMemory) -> list[float]:
    info = m.env_info
    total = max(int(info.get("total_treasure", MAX_CHESTS)), 1)
    live = m.live_chests()
    return [m.chest_count / MAX_CHESTS, (total - m.chest_count) / MAX_CHESTS, len(live) / MAX_CHESTS,
            *_bearing(m, m.nearest(live)), *_bearing(m, m.nearest(m.available_buffs()))]


def _moves(m: GorgeMemory) -> list[float]:
    """Per direction: open, the monster path distance gained by the move / 4 (in view; 0 with
    none in view), the closeness of the cell."""
    here = m.monster_distance()
    out = []
    for cell in m.move_cells():
        if cell is None:
            out += [0.0, 0.0, 0.0]
            continue
        there = m.monster_distance(*cell)
        gain = 0.0 if here >= UNREACHED and there >= UNREACHED else (min(there, FAR) - min(here, FAR)) / 4.0
        out += [1.0, gain, _closeness(there)]
    return out


def _flashes(m: GorgeMemory) -> list[float]:
    """Per direction: the flash's reach k / 10, the monster path distance gained at its landing
    / 10, the landing's closeness, a chest on the landing's line."""
    here = min(m.monster_distance(), FAR)
    out = []
    for c, r, k in m.flash_cells():
        there = min(m.monster_distance(c, r), FAR)
        gain = 0.0 if k == 0 else (there - here) / 10.0
        out += [k / FLASH_RANGE, gain, _closeness(there) if k else 0.0]
    return out


ROOM_NORM = 100  # view cells: a part this big counts as open ground


def _chest_paths(m: GorgeMemory) -> list[float]:
    """Known, path steps to the nearest live chest / 64, and per direction the steps a move
    saves (1 closer, 0, -1 farther; 0 when blocked or unknown)."""
    steps = m.chest_steps()
    here = int(steps[1, 1])
    if here == UNKNOWN_STEPS:
        return [0.0, 1.0] + [0.0] * NUM_MOVES
    out = [1.0, here / 64.0]
    rows = steps.tolist()
    for (dx, dz), cell in zip(DIRECTIONS, m.move_cells()):
        there = rows[1 + dz][1 + dx]
        out.append(float(here - there) if cell is not None and there != UNKNOWN_STEPS else 0.0)
    return out


def _rooms(m: GorgeMemory) -> list[float]:
    """Per move, then per flash landing: the part of the view's road it leads into with the
    hero's cell taken away: its size / 100 (capped), runs off the view (a way on), holds a
    monster. A dead-end pocket reads small, closed."""
    cells = m.move_cells() + [(c, r) if k else None for c, r, k in m.flash_cells()]
    rooms = m.rooms_at([cell for cell in cells if cell is not None])[::-1]
    out = []
    for cell in cells:
        room = rooms.pop() if cell is not None else None
        if room is None:
            out += [0.0, 0.0, 0.0]
        else:
            size, edge, monster = room
            out += [min(size / ROOM_NORM, 1.0), float(edge), float(monster)]
    return out


def _hero(m: GorgeMemory) -> list[float]:
    return [m.hero[0] / GRID_SIZE, m.hero[1] / GRID_SIZE, float(m.legal_action[NUM_MOVES]),
            min(m.flash_cooldown / 100.0, 1.0), m.buff_remaining / BUFF_DURATION, _closeness(m.monster_distance()),
            m.revisit]


MAP_LAYOUT: tuple[MapChannel, ...] = (
    MapChannel("road", lambda m: m.view.astype(np.float32)),  # the view: 1 road, 0 obstacle or off the map
    MapChannel("monsters", lambda m: m.view_points([(s.x, s.z) for s in m.monsters if s.in_view])),
    MapChannel("monster_near", _monster_closeness),  # 1 - path cells from the nearest monster in view / 20
    MapChannel("chests", lambda m: m.view_points(m.live_chests())),
    MapChannel("buffs", lambda m: m.view_points(m.available_buffs())),
    MapChannel("visits", lambda m: m.crop(m.visits)),  # 0.2 per step ended on the cell, capped at 1
    MapChannel("explored", lambda m: m.coarse(m.passable)),  # coarse: share of road seen per 3x3 block
    MapChannel("unseen", lambda m: 1.0 - m.coarse(m.seen)),  # coarse: share never in view
    MapChannel("chests_known", lambda m: m.coarse_points(m.live_chests())),  # coarse: live chests seen
    MapChannel("coarse_visits", lambda m: m.coarse(m.visits)),
)

STATE_LAYOUT: tuple[StateBlock, ...] = (
    StateBlock("hero", 7, _hero),  # position, flash ready and cooldown, buff, closeness, revisit
    StateBlock("timers", 6, _timers),  # the second monster, the speed-up, the step
    StateBlock("monster_1", 6 + DISTANCE_BUCKETS + RELATIVE_DIRECTIONS + 3, lambda m: _monster(m, 0)),
    StateBlock("monster_2", 6 + DISTANCE_BUCKETS + RELATIVE_DIRECTIONS + 3, lambda m: _monster(m, 1)),
    StateBlock("items", 3 + 5 + 5, _items),  # chest counts, the nearest live chest and buff known
    StateBlock("moves", 3 * NUM_MOVES, _moves),
    StateBlock("flashes", 3 * NUM_MOVES, _flashes),
    StateBlock("chest_paths", 2 + NUM_MOVES, _chest_paths),  # the nearest chest by path, a move's saving
    StateBlock("rooms", 6 * NUM_MOVES, _rooms),  # what lies beyond each move and flash: dead ends
)

# --- derived: never edit below, edit the tables above -------------------------------------------

MAP_CHANNELS: int = len(MAP_LAYOUT)
MAP_SHAPE: tuple[int, int, int] = (MAP_CHANNELS, VIEW_SIZE, VIEW_SIZE)
STATE_SLICES: dict[str, slice] = state_slices(STATE_LAYOUT)
STATE_DIM: int = sum(b.size for b in STATE_LAYOUT)
REVISIT_INDEX: int = STATE_SLICES["hero"].start + 6
assert MAX_MONSTERS == 2  # one state block per monster above


def earlier_visits(state: np.ndarray) -> int:
    """How often the hero ended a step on its current cell before this one (from the state vector)."""
    return int(round(float(state[REVISIT_INDEX]) / 0.2))


def legal_mask(m: GorgeMemory) -> np.ndarray:
    """(NUM_ACTIONS,) float32, 1 = allowed: legal_action's 16, a move also needing its first
    cell open in the view (a hero boxed in keeps its moves), a flash also needing a landing; with
    the memory's `lookahead_guard` (`[features_gorge] lookahead_guard_training`), narrowed to what
    the look-ahead finds best (feature.gorge_chase.lookahead), so training's samples hold the mask
    the policy acted within."""
    legal = m.legal_action
    moves = [float(bool(legal[d]) and cell is not None) for d, cell in enumerate(m.move_cells())]
    if not any(moves):
        moves = [1.0] * NUM_MOVES
    elif m.danger_guard:
        moves = guarded_moves(m, moves)
    flashes = [float(bool(legal[NUM_MOVES + d]) and k != 0) for d, (_, _, k) in enumerate(m.flash_cells())]
    if m.lookahead_guard:
        moves, flashes = guarded(m, moves, flashes)
    return np.array(moves + flashes + [float(bool(v)) for v in legal[2 * NUM_MOVES:]], dtype=np.float32)


def guarded_moves(m: GorgeMemory, moves: list[float]) -> list[float]:
    """The open `moves` whose cell no monster in view reaches this step (its path cells to the cell
    more than its speed + 1: a capture is a monster within one cell after it moves), while one
    such move exists; all of them otherwise (a flash may still save the hero)."""
    reach = max((slot.speed for slot in m.monsters if slot.in_view), default=0) + 1
    if reach == 1:
        return moves
    safe = [float(ok and cell is not None and m.monster_distance(*cell) > reach)
            for ok, cell in zip(moves, m.move_cells())]
    return safe if any(safe) else moves
