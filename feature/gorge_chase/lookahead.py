"""Exploit's look-ahead for the moments a monster is near (`[features_gorge] lookahead_guard`):
each open move and flash is played out a few steps on the map the hero has explored, against the
monsters' chase rule, then raced for a refuge; exploit acts within the actions that come out
best (feature.gorge_chase.observation.exploit_legal). Training's samples keep the features' mask,
unless `[features_gorge] lookahead_guard_training` narrows it there too (feature.gorge_chase.layout.legal_mask).

Why: the trained policy's deaths are mostly a wrong turn with a monster a few cells away (into
a pocket, between the two monsters, along a wall the speed-up closes); a veto of those turns by
a search with the true state lifted a 60-minute checkpoint from 0.75× to 1.01× the reference
(docs/BENCHMARKS.md 24). This is that search on what the package knows: the platform runs a
package's own code in `exploit`, so it is legal there, and it reads only the observation.

The model, each simulated step (docs/games/gorge_chase.md, "The look-ahead guard"):
- the hero: the candidate action first (a move of one cell, two while a buff lasts, a diagonal
  needing one of its two sides open; a flash to its landing), then each of its moves on road it
  has seen, searched depth first, the move that leaves the nearest monster farthest (4-connected
  path length) first: the first line is a fleeing hero's, and the search stops at a line that
  lives the whole play-out or after a budget of states (Search.survives; BUDGET, or
  `[features_gorge] lookahead_budget`);
- the monsters whose cell is known (in view, or extra_info's true cells): `speed` sub-steps each
  to the orthogonal neighbour with the least path length to the hero (+0.25 onto the cell it
  came from, +0.05 along its last move's axis; of exact ties, which the env draws at random,
  every one on the play-out's first step, the hero living what the worst leaves it, and the one
  nearer the hero after), on road seen or never seen (a monster may know a short cut the hero has
  not explored); monster 2 appears at its step on the hero's cell of 10 steps before, and every
  monster gains a cell at the speed-up (env_info's monster_interval and monster_speed_boost_step);
- caught: a monster within one cell (Chebyshev) after the monsters' moves.
"""
from __future__ import annotations

from feature.bitgrid import bit_grid, moves_from
from feature.gorge_chase.constants import CAPTURE_RADIUS, DIRECTIONS, NUM_MOVES, VIEW_RADIUS
from feature.gorge_chase.lookahead_compiled import Rules, guard

WINDOW_RADIUS = 31  # the searched window: 63 × 63 cells round the hero (the memory's coarse crops' reach)
WINDOW = 2 * WINDOW_RADIUS + 1
GRID = bit_grid(WINDOW, WINDOW)
STRIDE = GRID.stride
BACK_STEP_PENALTY, SAME_AXIS_PENALTY = 0.25, 0.05  # the monsters' rule (docs/games/gorge_chase.md)
SPAWN_DELAY = 10  # monster 2 appears on the hero's cell of this many steps before its step
FAR_LIMIT = 2 * WINDOW  # a path length beyond any in the window
#: per direction, the bit offset of one move and of its two straight sides
MOVE_OFFSETS = tuple((dz * STRIDE + dx, dx * (dx != 0 and dz != 0), dz * STRIDE * (dx != 0 and dz != 0))
                     for dx, dz in DIRECTIONS)
#: the 4 straight neighbours as (bit offset, axis: 0 along x, 1 along z)
ORTHOGONAL = ((1, 0), (-1, 0), (STRIDE, 1), (-STRIDE, 1))


class Search:
    """One step's look-ahead state: the window's road (the hero's) and ground (the monsters')
    as bit grids, the monsters known, the timers."""

    def __init__(self, road: int, ground: int, monsters: list[list], step: int, interval: int, speedup: int,
                 buff_left: int, history: dict[int, int], budget: int | None = None):
        self.road, self.ground = road, ground
        self.budget = BUDGET if budget is None else budget  # the states a candidate's search expands at most
        self.monsters = monsters  # [bit index, speed, previous bit index or -1, last axis or -1]
        self.step, self.interval, self.speedup = step, interval, speedup
        self.buff_left = buff_left
        self.history = history  # step -> the hero's bit index at its end (the steps before this one that matter)
        self.outcomes: dict[tuple, int] = {}  # a play-out's state -> the steps lived at best (Search.survives)
        self.expanded = 0  # the states this candidate's search expanded
        # the searches that depend only on cells, shared by every play-out of this step: the path
        # lengths from the hero's cell (grown as far as asked), and the hero's moves from a cell in order
        self.levels: dict[int, Levels] = {}
        self.flights: dict[tuple, list[int]] = {}

    # --- the hero ---------------------------------------------------------------------------

    def walk(self, at: int, direction: int, cells: int) -> int:
        """The hero's cell after a move of `cells` cells (stopping where the road ends)."""
        step, side_x, side_z = MOVE_OFFSETS[direction]
        road = self.road
        for _ in range(cells):
            to = at + step
            if to < 0 or not road >> to & 1:
                break
            if side_x and not (road >> (at + side_x) & 1 or road >> (at + side_z) & 1):
                break
            at = to
        return at

    def moves(self, at: int, cells: int, monsters: list[list]) -> list[int]:
        """The distinct landings of a move from `at`, the farthest (4-connected) from the nearest
        monster first; of equals the shortest move, then the larger index (the C twin's order).
        The first is the flight a fleeing hero takes."""
        sources = 0
        for m in monsters:
            sources |= 1 << m[0]
        key = (at, cells, sources)
        if key not in self.flights:
            landings = {self.walk(at, d, cells) for d in range(NUM_MOVES)}
            distance = distances_at(self.ground | sources, sources, landings, FAR_LIMIT)
            self.flights[key] = sorted(landings, key=lambda cell: (distance[cell], -abs(cell - at), cell), reverse=True)
        return self.flights[key]

    # --- the play-outs ----------------------------------------------------------------------

    def survives(self, first: int, depth: int) -> int:
        """Steps (up to `depth`) the hero can live after landing on bit index `first` this step,
        whichever of the monsters' tied moves the env draws this step: the least, over those
        moves (Search.every_move), of a depth-first search over the hero's later moves, the
        flight from the nearest monster first (so its first line is the fleeing hero's), that
        stops at a line living `depth` steps or after `self.budget` states expanded (then the best
        line found). A state's answer, once its search ended within the budget, is kept
        (`self.outcomes`) for every later line and candidate that meets it, while monster 2's
        spawn, which reads the hero's cells of the line, is not still to come within the play-out."""
        shared = not self.step < self.interval <= self.step + depth
        history = dict(self.history)
        history[self.step + 1] = first
        lived = depth
        for monsters in self.every_move(self.monsters, first):
            self.expanded = 0
            lived = min(lived, self._after_moves(1, first, monsters, history, depth, shared)[0])
            if lived == 0:
                break
        return lived

    def _expand(self, t: int, hero: int, monsters: list[list], history: dict[int, int], depth: int,
                shared: bool) -> tuple[int, bool]:
        """(steps lived at best, whether that is exact) for the hero landing on `hero` at step t
        of the play-out with the monsters where they stood before the step's moves (their ties
        taken as `_move_monsters` takes them)."""
        history[self.step + t] = hero  # the line's cells: those before this step are this line's
        monsters = [list(m) for m in monsters]
        self._move_monsters(monsters, hero)
        return self._after_moves(t, hero, monsters, history, depth, shared)

    def _after_moves(self, t: int, hero: int, monsters: list[list], history: dict[int, int], depth: int,
                     shared: bool) -> tuple[int, bool]:
        """_expand's answer from the monsters' moves of step t on (`monsters`: where they went)."""
        step = self.step + t
        if step == self.interval > self.step:  # monster 2 was still to come
            spawn = history.get(step - SPAWN_DELAY, hero)
            monsters = monsters + [[spawn, 1 + (step > self.speedup), -1, -1]]
        if step == self.speedup > self.step:
            monsters = [[m[0], m[1] + 1, m[2], m[3]] for m in monsters]
        if caught(hero, monsters):
            return t - 1, True
        if t == depth:
            return depth, True
        key = (t, hero, tuple(map(tuple, monsters)))
        if shared and key in self.outcomes:
            return self.outcomes[key], True
        self.expanded += 1
        best, exact = t, True
        boosted = self.buff_left - t > 0
        options = self.moves(hero, 2 if boosted else 1, monsters)
        for k, cell in enumerate(options):
            lived, whole = self._expand(t + 1, cell, monsters, history, depth, shared)
            best, exact = max(best, lived), exact and whole
            if best == depth:
                exact = True
                break
            if self.expanded > self.budget:
                exact = exact and k == len(options) - 1
                break
        if shared and exact:
            self.outcomes[key] = best
        return best, exact

    def _levels(self, hero: int) -> Levels:
        levels = self.levels.get(hero)
        if levels is None:
            levels = self.levels[hero] = Levels(self.ground | 1 << hero, hero)
        return levels

    def every_move(self, monsters: list[list], hero: int) -> list[list[list]]:
        """The monsters' moves towards `hero` (their rule, as _move_monsters) once for each way
        the env may draw their exact ties: every tied neighbour taken, in the order of ORTHOGONAL,
        monster by monster and sub-step by sub-step; each outcome once."""
        levels = self._levels(hero)
        outcomes = [([list(m) for m in monsters], {m[0] for m in monsters})]
        for i in range(len(monsters)):
            grown = []
            for done, held in outcomes:
                speed = done[i][1]
                held = held - {done[i][0]}
                # the monster's ways as (cell, previous cell, axis, path length), sub-step by sub-step
                ways = [(done[i][0], done[i][2], done[i][3], levels.distance(done[i][0]))]
                for _ in range(speed):
                    ways = [nxt for way in ways for nxt in self._tied_steps(levels, held, *way)]
                for cur, prev, axis, _ in ways:
                    moved = [list(m) for m in done]
                    moved[i] = [cur, speed, prev, axis]
                    grown.append((moved, held | {cur}))
            outcomes = grown
        unique: dict[tuple, list[list]] = {}
        for moved, _ in outcomes:
            unique.setdefault(tuple(map(tuple, moved)), moved)
        return list(unique.values())

    @staticmethod
    def _tied_steps(levels: Levels, held: set[int], cur: int, prev: int, axis: int,
                    here: int | None) -> list[tuple]:
        """A monster's sub-step from `cur`: each neighbour of the least score (the rule's path
        length and penalties), or staying where no neighbour is open."""
        scored = []
        for offset, ax in ORTHOGONAL:
            n = cur + offset
            if n < 0 or n in held:
                continue
            d = levels.distance(n) if here is None else levels.distance_beside(n, here)
            if d is None:
                continue
            scored.append((d + (BACK_STEP_PENALTY if n == prev else 0.0) + (SAME_AXIS_PENALTY if ax == axis else 0.0),
                           n, ax, d))
        if not scored:
            return [(cur, prev, axis, here)]
        least = min(score for score, *_ in scored)
        return [(n, cur, ax, d) for score, n, ax, d in scored if abs(score - least) < 1e-9]

    def _move_monsters(self, monsters: list[list], hero: int) -> None:
        """Each monster's `speed` sub-steps by its rule (in place); of exact ties, which the env
        draws at random, the neighbour nearer the hero (the first of those in ORTHOGONAL's order)."""
        levels = self._levels(hero)
        held = {m[0] for m in monsters}
        for m in monsters:
            held.discard(m[0])
            way = (m[0], m[2], m[3], levels.distance(m[0]))
            for _ in range(m[1]):
                way = min(self._tied_steps(levels, held, *way), key=lambda tied: chebyshev(tied[0], hero))
            held.add(way[0])
            m[0], m[2], m[3] = way[0], way[1], way[2]


class Levels:
    """A 4-connected search from one cell over `ground`, grown only as far as asked."""

    def __init__(self, ground: int, source: int):
        self.ground = ground
        self.frontier = 1 << source
        self.unvisited = ground & ~self.frontier
        self.levels = [self.frontier]

    def _grow(self) -> bool:
        """One more level; False where the ground ends (or at FAR_LIMIT)."""
        if len(self.levels) >= FAR_LIMIT:
            return False
        f = self.frontier
        f = (f << 1 | f >> 1 | f << STRIDE | f >> STRIDE) & self.unvisited
        if not f:
            return False
        self.unvisited ^= f
        self.frontier = f
        self.levels.append(f)
        return True

    def distance(self, cell: int) -> int | None:
        bit = 1 << cell
        if not self.ground & bit:
            return None
        for i, level in enumerate(self.levels):
            if level & bit:
                return i
        while self._grow():
            if self.frontier & bit:
                return len(self.levels) - 1
        return None

    def distance_beside(self, cell: int, level: int) -> int | None:
        """distance(cell) for a 4-neighbour of a cell at `level`: one of level - 1, level, level + 1."""
        bit = 1 << cell
        if not self.ground & bit:
            return None
        while len(self.levels) < level + 2 and self._grow():
            pass
        for i in range(max(0, level - 1), min(level + 2, len(self.levels))):
            if self.levels[i] & bit:
                return i
        return None


def distances_at(ground: int, sources: int, cells: set[int], limit: int) -> dict[int, int]:
    """4-connected path length from the nearest source to each of `cells` (limit + 1 beyond)."""
    out = {cell: limit + 1 for cell in cells}
    wanted = 0
    for cell in cells:
        wanted |= 1 << cell
    frontier, unvisited = sources, ground & ~sources
    for step in range(limit + 1):
        hit = frontier & wanted
        if hit:
            for cell in cells:
                if hit >> cell & 1:
                    out[cell] = step
            wanted &= ~hit
            if not wanted:
                break
        frontier = (frontier << 1 | frontier >> 1 | frontier << STRIDE | frontier >> STRIDE) & unvisited
        if not frontier:
            break
        unvisited ^= frontier
    return out


def chebyshev(a: int, b: int) -> int:
    (ar, ac), (br, bc) = divmod(a, STRIDE), divmod(b, STRIDE)
    return max(abs(ar - br), abs(ac - bc))


def caught(hero: int, monsters: list[list]) -> bool:
    hr, hc = divmod(hero, STRIDE)
    return any(abs(m[0] // STRIDE - hr) <= CAPTURE_RADIUS and abs(m[0] % STRIDE - hc) <= CAPTURE_RADIUS
               for m in monsters)


def bit_of(column: int, row: int) -> int:
    """The window's bit index of (column, row)."""
    return row * STRIDE + column


def view_to_window(c: int, r: int) -> int:
    """A view cell's bit index in the window (both centred on the hero)."""
    return bit_of(c - VIEW_RADIUS + WINDOW_RADIUS, r - VIEW_RADIUS + WINDOW_RADIUS)

TRIGGER = 8  # the play-outs run while a known monster's path length to the hero is at most this
RACE_TRIGGER = 24  # the race runs while one is within this
DEPTH = 20  # steps each candidate is played out
BUDGET = 100  # states a candidate's search expands at most (docs/BENCHMARKS.md 31); [features_gorge] lookahead_budget
MAX_BUDGET = 2000  # the most the C twin takes (lookahead.c's MAX_BUDGET)
SPAWN_FORESIGHT = 12  # the play-outs also run this many steps before monster 2 appears
STALE_STEPS = 30  # a monster seen within this many steps still counts in the race
SAFE = 40  # a margin (steps) that leaves the policy free to choose
REACH = 2  # a monster within this 4-connected path length of a cell threatens it (the 3x3 capture)
RULES = Rules(GRID, FAR_LIMIT, CAPTURE_RADIUS, SPAWN_DELAY, BACK_STEP_PENALTY, SAME_AXIS_PENALTY, MOVE_OFFSETS, REACH,
              TRIGGER, RACE_TRIGGER, DEPTH, SAFE, BUDGET)


def safe_sets(ground: int, monsters: list[tuple[int, int, int]], horizon: int) -> list[int]:
    """[k] = the cells of `ground` no monster can threaten within k steps (k = 0..horizon), each
    monster (bit index, speed, head start in cells) taken as moving `speed` cells a step along
    its shortest path, `head start` cells ahead of its cell (a monster last seen steps ago)."""
    reached = [0] * (horizon + 1)
    for cell, speed, head in monsters:
        source = 1 << cell
        frontier, unvisited, seen = source, ground & ~source, source
        levels = [source]
        for _ in range(REACH + head + horizon * speed):
            frontier = (frontier << 1 | frontier >> 1 | frontier << STRIDE | frontier >> STRIDE) & unvisited
            if not frontier:
                break
            unvisited ^= frontier
            levels.append(frontier)
        taken = 0  # levels already in `seen`
        for k in range(horizon + 1):
            for level in levels[taken:REACH + head + k * speed + 1]:
                seen |= level
            taken = max(taken, min(len(levels), REACH + head + k * speed + 1))
            reached[k] |= seen
    return [ground & ~r for r in reached]


def margin(ground: int, landing: int, safe: list[int]) -> int:
    """The race: the steps the hero can stay out of reach from `landing` (its refuge: the cells
    it reaches, 8-connected, before any monster threatens them; the latest threat over them),
    the horizon where the refuge runs off the searched window. The hero stands on `landing`
    after this step's moves, the monsters' included: a cell h moves on is reached at step h + 1."""
    horizon = len(safe) - 1
    frontier = 1 << landing
    if not frontier & safe[1]:
        return 0
    refuge, unvisited = frontier, ground & ~frontier
    for h in range(2, horizon + 1):
        frontier = moves_from(frontier, ground, STRIDE) & unvisited & safe[h]
        if not frontier:
            break
        unvisited &= ~frontier
        refuge |= frontier
        if frontier & GRID.border:
            return horizon
    best = 0
    for k in range(horizon + 1):
        if refuge & safe[k]:
            best = k
    return best


def guarded(m, moves: list[float], flashes: list[float], compiled: bool = True) -> tuple[list[float], list[float]]:
    """The open `moves` and `flashes` (1.0 = open) a look-ahead finds best while a known monster
    is near (or monster 2 is due): those that survive the play-outs longest, and of those the ones
    that keep SAFE steps of margin in the race (or the largest margin where none does); all of
    them otherwise.
    `m`: the episode's GorgeMemory; `compiled`: all from the grids on in C where it is at hand
    (feature.gorge_chase.lookahead_compiled.guard, the same answers), else in Python."""
    hx, hz = m.hero
    in_window = [s for s in m.monsters if s.present and s.last_step >= 0
                 and abs(s.last_x - hx) <= WINDOW_RADIUS and abs(s.last_z - hz) <= WINDOW_RADIUS]
    known = [s for s in in_window if s.known and s.last_step == m.step_no]
    # seen lately but not now (extra_info withheld, out of view): the race counts them from their
    # last cell with a head start of the cells they may have come since
    lately = [s for s in in_window if all(s is not k for k in known) and m.step_no - s.last_step <= STALE_STEPS]
    info = m.env_info
    interval = int(info.get("monster_interval", 0))
    spawn_soon = 0 < interval - m.step_no <= SPAWN_FORESIGHT  # monster 2 appears on a cell of the hero's trail
    if not (known or lately or spawn_soon) or not (any(moves) or any(flashes)):
        return moves, flashes
    centre = bit_of(WINDOW_RADIUS, WINDOW_RADIUS)
    cells = [bit_of(s.last_x - hx + WINDOW_RADIUS, s.last_z - hz + WINDOW_RADIUS) for s in known]
    threats = [(c, s.speed, 0) for c, s in zip(cells, known)]
    threats += [(bit_of(s.last_x - hx + WINDOW_RADIUS, s.last_z - hz + WINDOW_RADIUS), s.speed,
                 s.speed * (m.step_no - s.last_step)) for s in lately]
    spawn_step = interval - SPAWN_DELAY  # the play-outs read the trail only for monster 2's spawn cell
    spawn = m.trail.get(spawn_step)
    spawn_cell = (bit_of(spawn[0] - hx + WINDOW_RADIUS, spawn[1] - hz + WINDOW_RADIUS) if spawn is not None
                  and abs(spawn[0] - hx) <= WINDOW_RADIUS and abs(spawn[1] - hz) <= WINDOW_RADIUS else None)
    flash_landings = [view_to_window(c, r) if ok else None for ok, (c, r, _) in zip(flashes, m.flash_cells())]
    max_step = int(info.get("max_step", m.step_no + DEPTH))
    budget = BUDGET if m.lookahead_budget is None else m.lookahead_budget
    speedup = int(info.get("monster_speed_boost_step", 0))
    if compiled:
        rules = RULES if budget == RULES.budget else RULES._replace(budget=budget)
        keep = guard(rules, m.search_planes(WINDOW_RADIUS), centre,
                     [(c, s.speed) for c, s in zip(cells, known)], threats, m.step_no, interval, speedup,
                     m.buff_remaining, -1 if spawn_cell is None else spawn_cell, max_step, spawn_soon, moves,
                     flash_landings)
        if keep is False:
            return moves, flashes
        if keep is not None:
            return keep[:NUM_MOVES], keep[NUM_MOVES:]
    road_mask, unseen_mask = m.search_window(WINDOW_RADIUS)
    road = GRID.of_mask(road_mask)
    ground = road | GRID.of_mask(unseen_mask)
    near = RACE_TRIGGER + 1
    for cell, _, head in threats:
        source = 1 << cell
        reach = distances_at(ground | source | 1 << centre, source, {centre}, RACE_TRIGGER + head)[centre]
        near = min(near, reach - head)
    if near > RACE_TRIGGER and not spawn_soon:
        return moves, flashes
    history = {} if spawn_cell is None else {spawn_step: spawn_cell}
    search = Search(road | 1 << centre, ground | 1 << centre, [[c, s.speed, -1, -1] for c, s in zip(cells, known)],
                    m.step_no, interval, speedup, m.buff_remaining, history, budget)
    step_cells = 2 if m.buff_remaining > 0 else 1
    landings = [search.walk(centre, d, step_cells) if ok else None for d, ok in enumerate(moves)] + flash_landings
    # the distinct landings in the order of the actions (the C twin's): a search's answers are
    # kept for the candidates after it, and its budget makes the order count
    options = list(dict.fromkeys(cell for cell in landings if cell is not None))
    lived = {cell: 0 for cell in options}
    if near <= TRIGGER or spawn_soon:
        depth = max(1, min(DEPTH, max_step - m.step_no))
        lived = {cell: search.survives(cell, depth) for cell in options}
    best = max(lived.values())
    options = {cell for cell in options if lived[cell] == best}
    safe = safe_sets(ground | 1 << centre, threats, SAFE)
    room = {cell: margin(ground | 1 << centre, cell, safe) for cell in options}
    enough = min(SAFE, max(room.values()))
    keep = [float(cell in room and room[cell] >= enough) for cell in landings]
    return keep[:NUM_MOVES], keep[NUM_MOVES:]
