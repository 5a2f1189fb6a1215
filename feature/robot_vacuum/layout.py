"""robot_vacuum's model input, declared once (feature.tables' way): `MAP_LAYOUT` is one 21×21
channel per entry: the view centred on the hero (floor, dirt, the official robots and the cells
they can reach next, chargers), near crops of the episode's memory (63×63 cells in 3×3 blocks:
road seen, dirt known, never seen) and the whole map in 21×21 blocks (dirt known, never seen,
where robots were seen, the hero's block, the chargers' blocks); `STATE_LAYOUT` names the blocks
of the flat state vector: the battery against the path to the nearest charger, the progress, the
chargers and robots, and per move what it enters and how much nearer it brings dirt and a
charger. A `fill` receives the episode's VacuumMemory (feature.robot_vacuum.memory) after the
step; adding a feature is one entry here.
"""
from __future__ import annotations

import numpy as np

from feature.bitgrid import UNKNOWN_STEPS
from feature.robot_vacuum.constants import (BATTERY_NORM, CELL_BLOCKED, CELL_DIRT, CHARGE_NORM, DIRECTIONS,
                                            GRID_SIZE, MAX_CHARGERS, MAX_ROBOTS, NUM_MOVES, STEP_NORM, VIEW_RADIUS,
                                            VIEW_SIZE)
from feature.robot_vacuum.memory import CHARGER_LIMIT, DIRT_LIMIT, VISIT, VacuumMemory
from feature.segments import NUM_ACTIONS
from feature.tables import MapChannel, StateBlock, state_slices

ROBOT_FAR = 10  # Chebyshev cells beyond which an official robot counts as far
RESERVE_LOW = 0.1  # the battery left over the path to a charger, as a share of battery_max, that reads as low
SINCE_NORM = 100  # steps since a robot was last known


def danger(gap: int) -> float:
    """How near an official robot's cell is, in contact terms: 1 at Chebyshev 1 or less (contact
    unless it moves away), 2/3 at 2 (it can step into contact), 1/3 at 3, 0 beyond."""
    return min(1.0, max(0.0, (4 - gap) / 3.0))


def _robot_reach(m: VacuumMemory) -> np.ndarray:
    """Per view cell, `danger` of its Chebyshev gap to the nearest robot known this step."""
    out = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.float32)
    for x, z in m.known_robots():
        c, r = m.to_view(x, z)
        for gap, value in ((3, danger(3)), (2, danger(2)), (1, danger(1))):  # inner squares overwrite
            r0, r1, c0, c1 = max(r - gap, 0), min(r + gap + 1, VIEW_SIZE), max(c - gap, 0), min(c + gap + 1, VIEW_SIZE)
            if r0 < r1 and c0 < c1:
                np.maximum(out[r0:r1, c0:c1], value, out=out[r0:r1, c0:c1])
    return out


def reserve_of(battery: int, battery_max: int, charger_steps: int, steps_left: int) -> int:
    """The battery left on arriving at the nearest charger (a step onto a charger refills before
    the battery check, so a reserve of 0 still arrives); battery_max when the battery lasts the
    episode (the step limit wins over an empty battery): then no charger is needed."""
    return battery_max if battery >= steps_left else battery - charger_steps


def charger_reserve(m: VacuumMemory) -> tuple[int, bool, int]:
    """(path steps to the nearest charger (CHARGER_LIMIT when none within it), whether the route
    runs over road seen, the reserve: `reserve_of` this step)."""
    steps, known = m.charger_steps()
    here = int(steps[1, 1])
    here = CHARGER_LIMIT if here == UNKNOWN_STEPS else here
    return here, known, reserve_of(m.battery, m.battery_max, here, max(m.max_step - m.step_no, 0))


def _savings(steps: np.ndarray, m: VacuumMemory) -> list[float]:
    """Per direction, the path steps a move saves toward the search's targets (1 nearer, 0, -1
    farther; 0 when the move is blocked or either end is out of reach)."""
    here = int(steps[1, 1])
    rows = steps.tolist()
    out = []
    for (dx, dz), cell in zip(DIRECTIONS, m.move_cells()):
        there = rows[1 + dz][1 + dx]
        ok = cell is not None and here != UNKNOWN_STEPS and there != UNKNOWN_STEPS
        out.append(float(min(max(here - there, -1), 1)) if ok else 0.0)
    return out


def _hero(m: VacuumMemory) -> list[float]:
    """position, visits on its cell before this step, a move that left it in place, on a charger."""
    stuck = m.previous_hero is not None and m.previous_hero == m.hero and not m.on_charger
    return [m.hero[0] / GRID_SIZE, m.hero[1] / GRID_SIZE, m.revisit, float(stuck), float(m.on_charger)]


def _battery(m: VacuumMemory) -> list[float]:
    """battery as a share and in the official battery's units, battery_max, the path to the nearest
    charger, whether that route is over road seen, the reserve (share of battery_max, low), charges."""
    steps, known, reserve = charger_reserve(m)
    return [m.battery / m.battery_max, min(m.battery / BATTERY_NORM, 5.0), m.battery_max / STEP_NORM,
            min(steps / BATTERY_NORM, 2.0), float(known), max(-1.0, min(reserve / m.battery_max, 1.0)),
            float(reserve < RESERVE_LOW * m.battery_max), min(m.charge_count / CHARGE_NORM, 1.0)]


def _progress(m: VacuumMemory) -> list[float]:
    """the step, the steps left, cells cleaned and dirt known as shares of total_dirt, the map seen."""
    return [m.step_no / m.max_step, (m.max_step - m.step_no) / STEP_NORM, m.score / m.total_dirt,
            min(m.known_dirt / m.total_dirt, 1.0), m.seen_cells / (GRID_SIZE * GRID_SIZE)]


def _chargers(m: VacuumMemory) -> list[float]:
    """Per charger, nearest first (Chebyshev): present, (dx, dz) / 64 capped at 1, distance / 128."""
    hx, hz = m.hero
    found = sorted(m.chargers.values(), key=lambda p: max(abs(p[0] - hx), abs(p[1] - hz)))[:MAX_CHARGERS]
    out = []
    for x, z in found:
        out += [1.0, max(-1.0, min((x - hx) / 64.0, 1.0)), max(-1.0, min((z - hz) / 64.0, 1.0)),
                max(abs(x - hx), abs(z - hz)) / GRID_SIZE]
    return out + [0.0] * (4 * (MAX_CHARGERS - len(found)))


def _robots(m: VacuumMemory) -> list[float]:
    """Per official robot, known ones nearest first, then by when last known: listed, known this
    step, (dx, dz) / 10 capped at 2 (last known cell), closeness within 10 cells, steps since known / 100."""
    hx, hz = m.hero

    def order(r):
        return (not r.known, max(abs(r.last_x - hx), abs(r.last_z - hz)) if r.last_step >= 0 else GRID_SIZE,
                -r.last_step)
    out = []
    for r in sorted(m.robots, key=order)[:MAX_ROBOTS]:
        if r.last_step < 0:
            out += [1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
            continue
        gap = max(abs(r.last_x - hx), abs(r.last_z - hz))
        out += [1.0, float(r.known), max(-2.0, min((r.last_x - hx) / VIEW_RADIUS, 2.0)),
                max(-2.0, min((r.last_z - hz) / VIEW_RADIUS, 2.0)), max(0.0, 1.0 - gap / ROBOT_FAR) if r.known else 0.0,
                min((m.step_no - r.last_step) / SINCE_NORM, 1.0)]
    return out + [0.0] * (6 * (MAX_ROBOTS - len(m.robots[:MAX_ROBOTS])))


def _moves(m: VacuumMemory) -> list[float]:
    """Per direction: open, dirt on the cell entered, `danger` there, visits there."""
    out = []
    for cell in m.move_cells():
        if cell is None:
            out += [0.0, 0.0, 0.0, 0.0]
            continue
        c, r = m.to_view(*cell)
        out += [1.0, float(m.view[r, c] == CELL_DIRT), danger(m.robot_gap(*cell)), float(m.crop(m.visits)[r, c])]
    return out


def _dirt_path(m: VacuumMemory) -> list[float]:
    """Known dirt within reach, path steps to the nearest / 64, and each move's saving toward it."""
    steps = m.dirt_steps()
    if int(steps[1, 1]) == UNKNOWN_STEPS:
        return [0.0, 1.0] + [0.0] * NUM_MOVES
    return [1.0, int(steps[1, 1]) / DIRT_LIMIT] + _savings(steps, m)


def _charger_path(m: VacuumMemory) -> list[float]:
    """Each move's saving on the path to the nearest charger."""
    return _savings(m.charger_steps()[0], m)


MAP_LAYOUT: tuple[MapChannel, ...] = (
    MapChannel("floor", lambda m: (m.view != CELL_BLOCKED).astype(np.float32)),  # the view: 1 walkable
    MapChannel("dirt", lambda m: (m.view == CELL_DIRT).astype(np.float32)),  # the view: 1 dirt
    MapChannel("robots", lambda m: m.view_points(m.known_robots())),  # official robots in view
    MapChannel("robot_reach", _robot_reach),  # danger of each view cell: 1 in contact range, 2/3, 1/3 farther
    MapChannel("chargers", lambda m: m.view_points(m.charger_cells)),  # charger cells (memory's reading)
    MapChannel("road_near", lambda m: m.near_crops()[0]),  # 63x63 in 3x3 blocks: share of road seen
    MapChannel("dirt_near", lambda m: m.near_crops()[1]),  # ...: share of dirt known
    MapChannel("unseen_near", lambda m: 1.0 - m.near_crops()[2]),  # ...: share never in view
    MapChannel("dirt_map", lambda m: m.global_maps()[0]),  # the whole map in 21x21 blocks: share of dirt known
    MapChannel("unseen_map", lambda m: 1.0 - m.global_maps()[1]),  # ...: share never in view
    MapChannel("robot_trail", lambda m: m.global_maps()[2]),  # ...: share of cells a robot was seen on
    MapChannel("hero_block", lambda m: m.global_points([m.hero])),  # ...: the hero's block
    MapChannel("charger_blocks", lambda m: m.global_points(m.chargers.values())),  # ...: the chargers' blocks
)

STATE_LAYOUT: tuple[StateBlock, ...] = (
    StateBlock("hero", 5, _hero),  # position, revisit, stuck, on a charger
    StateBlock("battery", 8, _battery),  # battery, the path to a charger, the reserve after it, charges
    StateBlock("progress", 5, _progress),  # step, steps left, cleaned, dirt known, map seen
    StateBlock("chargers", 4 * MAX_CHARGERS, _chargers),
    StateBlock("robots", 6 * MAX_ROBOTS, _robots),
    StateBlock("moves", 4 * NUM_MOVES, _moves),  # open, dirt, danger, visits of each move's cell
    StateBlock("dirt_path", 2 + NUM_MOVES, _dirt_path),  # the nearest known dirt by path, each move's saving
    StateBlock("charger_path", NUM_MOVES, _charger_path),  # each move's saving toward the nearest charger
)

# --- derived: never edit below, edit the tables above -------------------------------------------

MAP_CHANNELS: int = len(MAP_LAYOUT)
MAP_SHAPE: tuple[int, int, int] = (MAP_CHANNELS, VIEW_SIZE, VIEW_SIZE)
STATE_SLICES: dict[str, slice] = state_slices(STATE_LAYOUT)
STATE_DIM: int = sum(b.size for b in STATE_LAYOUT)
REVISIT_INDEX: int = STATE_SLICES["hero"].start + 2


def earlier_visits(state: np.ndarray) -> int:
    """How often the hero ended a step on its current cell before this one (from the state vector)."""
    return int(round(float(state[REVISIT_INDEX]) / VISIT))


def legal_mask(m: VacuumMemory) -> np.ndarray:
    """(NUM_ACTIONS,) float32, 1 = allowed: a move legal_action allows whose cell the view shows
    open, a diagonal by the guide's rule (legal_action itself allows all 8: a blocked move only
    spends a step and a unit of battery); a hero boxed in keeps legal_action's moves. The guards
    (memory.robot_guard, memory.battery_guard) narrow the open moves, never to none. The model's
    actions 8..15 are no action of this game and never allowed."""
    legal = m.legal_action[:NUM_MOVES]
    moves = [float(bool(ok) and cell is not None) for ok, cell in zip(legal, m.move_cells())]
    if not any(moves):
        moves = [float(bool(ok)) for ok in legal] if any(legal) else [1.0] * NUM_MOVES
    else:
        if m.robot_guard:
            moves = robot_guarded_moves(m, moves)
        if m.battery_guard:
            moves = guarded_moves(m, moves)
    return np.array(moves + [0.0] * (NUM_ACTIONS - NUM_MOVES), dtype=np.float32)


#: A robot's next move, the guard's two readings: any of 8 directions (or none), then one of 4.
_ROBOT_REACH_8 = tuple((dx, dz) for dx in (-1, 0, 1) for dz in (-1, 0, 1))
_ROBOT_REACH_4 = ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1))


def _contact_after(cell: tuple[int, int], robots: list[tuple[int, int]], reach) -> bool:
    """Whether a robot stepping by one of `reach` can end within Chebyshev 1 of `cell` (contact)."""
    x, z = cell
    return any(max(abs(rx + dx - x), abs(rz + dz - z)) <= 1 for rx, rz in robots for dx, dz in reach)


def robot_guarded_moves(m: VacuumMemory, moves: list[float]) -> list[float]:
    """The open `moves` whose cell no official robot known this step can reach into contact with
    its next move, read as any of 8 directions; when none is, as one of 4 (the default rule);
    when none is either, those farthest from the nearest robot."""
    robots = m.known_robots()
    if not robots:
        return moves
    cells = [cell if ok else None for ok, cell in zip(moves, m.move_cells())]
    for reach in (_ROBOT_REACH_8, _ROBOT_REACH_4):
        safe = [float(cell is not None and not _contact_after(cell, robots, reach)) for cell in cells]
        if any(safe):
            return safe
    gaps = [m.robot_gap(*cell) if cell is not None else -1 for cell in cells]
    return [float(cell is not None and gap == max(gaps)) for cell, gap in zip(cells, gaps)]


#: Battery units the guard keeps beyond the path home (a robot in the corridor costs a detour).
GUARD_MARGIN = 10


def guarded_moves(m: VacuumMemory, moves: list[float]) -> list[float]:
    """The open `moves` after which the battery still reaches the nearest charger with GUARD_MARGIN
    to spare (over road seen, around the robots' reach while the battery allows that detour; while
    no route over road seen is known, over the optimistic path (cells never seen counted as road)
    with memory.unseen_slack times it more, as walls not yet seen lengthen it); when none does,
    those that leave the most; all of them while the battery lasts the episode or no charger is
    within reach."""
    steps, known = m.charger_steps()
    if m.battery >= max(m.max_step - m.step_no, 0) or int(steps[1, 1]) == UNKNOWN_STEPS:
        return moves
    margin = GUARD_MARGIN if known else GUARD_MARGIN + int(m.unseen_slack * steps[1, 1])
    if known and m.battery - 1 - steps[1, 1] >= margin:  # a robot in the corridor: count on the detour
        detour = m.charger_steps_around_robots()  # around it while the battery allows it (never shorter)
        if detour is not None and int(detour[1, 1]) != UNKNOWN_STEPS and m.battery - 1 - detour[1, 1] >= margin:
            steps = detour
    rows = steps.tolist()
    left = [(m.battery - 1) - rows[1 + dz][1 + dx] if ok and rows[1 + dz][1 + dx] != UNKNOWN_STEPS else None
            for (dx, dz), ok in zip(DIRECTIONS, moves)]
    safe = [float(after is not None and (after >= margin or rows[1 + dz][1 + dx] == 0))
            for after, (dx, dz) in zip(left, DIRECTIONS)]
    if any(safe):
        return safe
    reachable = [after for after in left if after is not None]
    if not reachable:
        return moves
    return [float(after is not None and after == max(reachable)) for after in left]
