"""Route planner: the project's upper reference score for an episode.

With full knowledge of the map it (1) picks the set and order of chests that maximise the final
score exactly (Held-Karp over ≤ 13 chests), (2) inserts the speed buff on the leg where the
detour pays, and (3) drives the env through its own `step()`: each step takes the move whose
simulated landing (the env's own sliding rule) is closest to the target on an 8-connected
distance field, and spends the flash where a look-ahead found it saves the most cells. Whatever
score it reaches is the score an agent with perfect navigation could expect on that episode.

Distances are 8-connected (octile) rather than the map's 4-connected BFS: the hero walks 8
directions, so octile cells × 500/700 estimates steps within a few percent, where BFS cells
overstate diagonal legs by up to 41 % and would misjudge which chests fit a tight step limit.

Command line:  python -m realm.back_to_the_realm.reference [--preset NAME] [--episodes N] [--map-seed S | --map-file F --positions-file F]
"""
from __future__ import annotations

import argparse
import heapq
import math
import sys
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from realm.back_to_the_realm.constants import (
    BUFF_DURATION_STEPS,
    BUFF_ID,
    BUFF_STEP_LENGTH,
    CELL_WIDTH,
    FLASH_DISTANCE,
    NUM_POSITIONS,
    ORGAN_CHEST,
    ORIGIN_X,
    ORIGIN_Z,
    PICKUP_RADIUS,
    STEP_LENGTH,
)
from realm.back_to_the_realm.env import UNIT_VECTORS, RealmEnv, final_score, walk_substeps
from realm.back_to_the_realm.lookups import lookups_for
from realm.back_to_the_realm.maps import Map, cell_of
from realm.back_to_the_realm.protocol import EpisodeConfig

STEPS_PER_CELL = CELL_WIDTH / STEP_LENGTH  # a plain step covers 1.4 cells
#: Fraction of max_step a plan may use: the controller's path is a little longer than the estimate.
STEP_BUDGET_SAFETY = 0.95
#: Without look-ahead: cells a flash must save over the best move before it is spent (it then
#: cools down for 606 steps, longer than most episodes last).
FLASH_MIN_GAIN = 10.0
#: With look-ahead: a best advantage below this many cells is not worth a flash.
FLASH_WORTH_MIN = 1.0
#: With look-ahead on an inexact twin (step jitter, no seed): cells of slack on the best advantage.
FLASH_INEXACT_MARGIN = 2.0
#: ... and steps past the twin's best moment after which the look-ahead is redone.
FLASH_INEXACT_SLACK_STEPS = 5
_OCTILE_SLOPE = math.sqrt(2.0) - 1.0
_INF = float("inf")


def octile_distances(passable: np.ndarray, xc: int, zc: int) -> np.ndarray:
    """8-connected shortest path lengths in cells (diagonal √2, corners not cut) from (xc, zc).

    Closer to how the hero actually walks than the 4-connected BFS, so it both ranks moves well
    and turns path lengths into step estimates. Indexed [zc][xc]; unreachable = inf.
    """
    h, w = passable.shape
    free = passable.reshape(-1).tolist()
    dist = [_INF] * (h * w)
    start = zc * w + xc
    dist[start] = 0.0
    heap = [(0.0, start)]
    diag = math.sqrt(2.0)
    while heap:
        d, i = heapq.heappop(heap)
        if d > dist[i]:
            continue
        r, c = divmod(i, w)
        for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)):
            nr, nc = r + dr, c + dc
            if not (0 <= nr < h and 0 <= nc < w):
                continue
            j = nr * w + nc
            if not free[j]:
                continue
            if dr and dc:
                if not (free[r * w + nc] and free[nr * w + c]):
                    continue
                nd = d + diag
            else:
                nd = d + 1.0
            if nd < dist[j]:
                dist[j] = nd
                heapq.heappush(heap, (nd, j))
    return np.array(dist, dtype=np.float64).reshape(h, w)


def cost_to_go(field_: np.ndarray | list[list[float]], x: float, z: float, xc: int, zc: int) -> float:
    """Cells from world (x, z) to the field's source, continuous within a cell.

    A field holds one value per cell centre, so every point of a cell would look alike and the
    best of 8 moves would be decided by which cell it lands in. Going through one of the 3×3
    neighbouring centres instead (octile distance to it + its field value, the least of the nine)
    also rewards progress inside a cell and keeps the hero off wall corners. Called 8+ times a
    step, so it takes the field as nested lists too (`PathFields.rows`), which index faster.
    """
    u = (x - ORIGIN_X) / CELL_WIDTH - 0.5  # in cell-centre units: centre of cell c sits at c
    v = (z - ORIGIN_Z) / CELL_WIDTH - 0.5
    h, w = len(field_), len(field_[0])
    best = _INF
    for cz in (zc - 1, zc, zc + 1):
        if not 0 <= cz < h:
            continue
        row = field_[cz]
        dz = abs(v - cz)
        for cx in (xc - 1, xc, xc + 1):
            if not 0 <= cx < w:
                continue
            f = row[cx]
            if f >= best:
                continue
            dx = abs(u - cx)
            cost = f + (dx + _OCTILE_SLOPE * dz if dx > dz else dz + _OCTILE_SLOPE * dx)
            if cost < best:
                best = cost
    return best


class PathFields:
    """Octile distance fields to every special position of a map, computed once per map."""

    def __init__(self, m: Map):
        self.map = m
        self.fields = [octile_distances(m.passable, int(xc), int(zc)) for xc, zc in m.position_cells]
        self.rows = [f.tolist() for f in self.fields]  # the same fields for per-step lookups
        cells = m.position_cells
        self.between = np.array([[self.fields[a][cells[b][1], cells[b][0]] for b in range(NUM_POSITIONS)]
                                 for a in range(NUM_POSITIONS)])


_FIELDS: "weakref.WeakKeyDictionary[Map, PathFields]" = weakref.WeakKeyDictionary()


def path_fields(m: Map) -> PathFields:
    found = _FIELDS.get(m)
    if found is None:
        found = _FIELDS[m] = PathFields(m)
    return found


@dataclass
class Route:
    """Targets in visiting order (position ids: chests, maybe the buff, then the end)."""

    targets: list[int]
    chests: list[int]
    estimated_steps: float
    estimated_score: float


def best_chest_order(start_cost: np.ndarray, between: np.ndarray, end_cost: np.ndarray, direct_cost: float,
                     max_step: int, steps_per_cell: float = STEPS_PER_CELL) -> tuple[list[int], float]:
    """Exact subset and order of chests maximising the final score (Held-Karp).

    Costs are in cells: start→chest i, chest i→chest j, chest i→end, start→end. Returns
    (indices in visiting order, estimated steps). Plans whose estimate exceeds the step budget
    are not taken; with none feasible the hero heads straight for the end.

    The table cost[mask, last] is filled one subset size at a time, each size as a few whole-array
    numpy operations, so 13 chests (8192 × 13 states) take milliseconds rather than a Python loop
    over every subset.
    """
    n = len(start_cost)
    budget = max_step * STEP_BUDGET_SAFETY
    direct_steps = float(direct_cost) * steps_per_cell
    if n == 0:
        return [], direct_steps
    start_cost = np.asarray(start_cost, dtype=np.float64)
    between = np.asarray(between, dtype=np.float64)
    end_cost = np.asarray(end_cost, dtype=np.float64)
    full = 1 << n
    masks = np.arange(full)
    sizes = np.zeros(full, dtype=np.int64)
    for j in range(n):
        sizes += (masks >> j) & 1
    cost = np.full((full, n), _INF)
    parent = np.full((full, n), -1, dtype=np.int64)
    singles = 1 << np.arange(n)
    cost[singles, np.arange(n)] = start_cost
    for size in range(2, n + 1):
        layer = masks[sizes == size]
        for k in range(n):
            with_k = layer[(layer >> k) & 1 == 1]
            via = cost[with_k ^ (1 << k)] + between[:, k]  # via[m, last]: reach k from `last`
            last = np.argmin(via, axis=1)
            cost[with_k, k] = via[np.arange(len(with_k)), last]
            parent[with_k, k] = last
    steps = (cost + end_cost) * steps_per_cell
    score = np.where(steps <= budget, final_score(max_step, steps, sizes[:, None]), -_INF)
    best_mask, best_last = np.unravel_index(int(np.argmax(score)), score.shape)
    if not score[best_mask, best_last] > final_score(max_step, direct_steps, 0):
        return [], direct_steps
    order, mask, node = [], int(best_mask), int(best_last)
    while node >= 0:
        order.append(node)
        prev = int(parent[mask, node])
        mask &= ~(1 << node)
        node = prev
    return order[::-1], float(steps[best_mask, best_last])


def plan_route(m: Map, episode: EpisodeConfig, from_cell: tuple[int, int] | None = None,
               chests: list[int] | None = None, use_buff: bool = True) -> Route:
    """Best chest subset and order for `episode` from the start (or `from_cell`), buff inserted
    where the detour is cheaper than the time it saves."""
    pf = path_fields(m)
    chests = list(episode.treasure_id if chests is None else chests)
    if from_cell is None:
        xc, zc = m.position_cells[episode.start]
    else:
        xc, zc = from_cell
    start_cost = np.array([pf.fields[c][zc, xc] for c in chests], dtype=np.float64)
    end_from_here = float(pf.fields[episode.end][zc, xc])
    between = pf.between[np.ix_(chests, chests)] if chests else np.zeros((0, 0))
    end_cost = pf.between[chests, episode.end] if chests else np.zeros(0)
    order, steps = best_chest_order(start_cost, between, end_cost, end_from_here, episode.max_step)
    targets = [chests[i] for i in order] + [episode.end]
    if use_buff:
        targets, steps = _insert_buff(pf, (xc, zc), targets, steps)
    chosen = [t for t in targets if t in chests]
    return Route(targets, chosen, steps, final_score(episode.max_step, steps, len(chosen)))


def _insert_buff(pf: PathFields, here: tuple[int, int], targets: list[int], steps: float) -> tuple[list[int], float]:
    """Put the buff on the leg where the detour costs fewer steps than the speed-up saves."""
    xc, zc = here
    buff_field = pf.fields[BUFF_ID]
    saved_steps = BUFF_DURATION_STEPS * (BUFF_STEP_LENGTH / STEP_LENGTH - 1.0)  # 50 fast steps cover 71 plain ones
    best_gain, best_leg = 0.0, None
    prev_cost = lambda t: pf.fields[t][zc, xc]  # noqa: E731
    for k, target in enumerate(targets):
        if k == 0:
            direct = prev_cost(target)
            detour = buff_field[zc, xc] + pf.between[BUFF_ID, target]
        else:
            direct = pf.between[targets[k - 1], target]
            detour = pf.between[targets[k - 1], BUFF_ID] + pf.between[BUFF_ID, target]
        gain = saved_steps - (detour - direct) * STEPS_PER_CELL
        if gain > best_gain:
            best_gain, best_leg = gain, k
    if best_leg is None:
        return targets, steps
    return targets[:best_leg] + [BUFF_ID] + targets[best_leg:], steps - best_gain


@dataclass
class PlannerResult:
    total_score: float
    steps: int
    chests: int
    won: bool
    buff_count: int
    flash_count: int
    planned_chests: list[int]
    estimated_score: float
    usr_conf: dict
    trajectory: list[tuple[float, float]] = field(default_factory=list)  # world positions, start first
    actions: list[int] = field(default_factory=list)


class RouteController:
    """Drives the hero along a Route through the env's own step(), replanning after each pick-up.

    Moves: each step simulates the 8 moves with the env's own sliding rule and takes the one whose
    landing has the lowest cost-to-go (`cost_to_go`). Flash: when it is ready, a look-ahead plays
    the rest of the episode on a twin env without flashing and notes the largest advantage a flash
    would have had over the best move; the real run flashes where that advantage comes up, so the
    one flash an episode usually allows is spent where it shortens the route the most.
    """

    def __init__(self, env: RealmEnv, flash_min_gain: float = FLASH_MIN_GAIN, use_buff: bool = True,
                 look_ahead: bool = True):
        self.env = env
        self.map = env.map
        self.fields = path_fields(env.map)
        self.free = lookups_for(env.map).passable_flat
        self.flash_min_gain = flash_min_gain
        self.use_buff = use_buff
        self.look_ahead = look_ahead
        self.targets: list[int] = []
        self._counts = (0, 0)  # (chests, buffs) taken, to notice a pick-up

    def _hero(self):
        hero = self.env.env_info.frame_state.heroes[0]
        x, z = self.env.hero_position  # exact: the protocol's Position is rounded to int32
        return x, z, bool(hero.speed_up), hero.talent.status == 1

    def _cost_at(self, field_, tx, tz, x, z, xc, zc) -> float:
        """Cells still to walk from world (x, z): 0 within pick-up reach of the target, else
        `cost_to_go` on the target's field."""
        if (x - tx) ** 2 + (z - tz) ** 2 <= PICKUP_RADIUS ** 2:
            return 0.0
        return cost_to_go(field_, x, z, xc, zc)

    def _best_move(self, field_, tx, tz, fast: bool) -> tuple[float, float, int]:
        """(cost after the move, Euclidean gap after it, direction) of the best of the 8 moves;
        a move whose path passes within reach of the target costs -1 (it takes it this step)."""
        x, z, _, _ = self._hero()
        xc, zc = cell_of(x, z)
        length = BUFF_STEP_LENGTH if fast else STEP_LENGTH
        best = (_INF, _INF, 0)
        for d in range(8):
            points = walk_substeps(self.free, x, z, xc, zc, d, length)
            if any((px - tx) ** 2 + (pz - tz) ** 2 <= PICKUP_RADIUS ** 2 for px, pz, _, _ in points):
                key = (-1.0, 0.0, d)
            else:
                px, pz, pxc, pzc = points[-1]
                key = (cost_to_go(field_, px, pz, pxc, pzc), math.hypot(tx - px, tz - pz), d)
            best = min(best, key)
        return best

    def _flash_advantage(self, field_, tx, tz, walk_cost: float) -> tuple[float, int | None]:
        """(cells a flash saves over the best move, its direction); blocked landings are skipped:
        they waste the flash ("fail") or land somewhere unplanned ("nearest")."""
        x, z, _, _ = self._hero()
        best = (0.0, None)
        for d, (ux, uz) in enumerate(UNIT_VECTORS):
            fx, fz = x + ux * FLASH_DISTANCE, z + uz * FLASH_DISTANCE
            fxc, fzc = cell_of(fx, fz)
            if not self.map.is_passable_cell(fxc, fzc):
                continue
            gain = walk_cost - self._cost_at(field_, tx, tz, fx, fz, fxc, fzc)
            if gain > best[0]:
                best = (gain, d)
        return best

    def choose_action(self, target: int, flash_threshold: float = _INF) -> int:
        """The best move toward `target`, or a flash when it saves at least `flash_threshold` cells
        more than that move (and the flash is ready)."""
        _, _, fast, flash_ready = self._hero()
        field_ = self.fields.rows[target]
        tx, tz = self.map.positions[target]
        walk_cost, _, move = self._best_move(field_, tx, tz, fast)
        if flash_ready and walk_cost >= 0 and flash_threshold < _INF:
            advantage, direction = self._flash_advantage(field_, tx, tz, walk_cost)
            if direction is not None and advantage >= flash_threshold:
                return 8 + direction
        return move

    def _current_target(self) -> int:
        end = self.env.episode.end
        while self.targets[0] != end and not self._is_live(self.targets[0]):
            self.targets.pop(0)
        return self.targets[0]

    def _advance(self, act: int):
        """Play `act`; replan after a pick-up. Returns the step's ScoreInfo, terminated, truncated."""
        _, _, score, terminated, truncated, _ = self.env.step(act)
        counts = (score.treasure_count, score.buff_count)
        if counts != self._counts:
            self._counts = counts
            self.targets = self._replan(self.targets)
        return score, terminated, truncated

    def run(self, usr_conf: dict | None = None, seed: int | None = None) -> PlannerResult:
        env = self.env
        env.reset(usr_conf=usr_conf, seed=seed)
        episode = env.episode
        route = plan_route(self.map, episode, use_buff=self.use_buff)
        self.targets = list(route.targets)
        self._counts = (0, 0)
        x, z, _, _ = self._hero()
        trajectory, actions = [(x, z)], []
        threshold: float | None = None  # the flash advantage to wait for; None: not looked ahead yet
        recheck_after = _INF  # an inexact look-ahead is redone when its best moment has passed
        terminated = truncated = False
        score = None
        while not (terminated or truncated):
            target = self._current_target()
            flash_ready = self._hero()[3]
            if flash_ready and (threshold is None or env.steps > recheck_after):
                threshold, recheck_after = self._flash_threshold(usr_conf, seed, actions)
            act = self.choose_action(target, threshold if flash_ready else _INF)
            flashes_before = env.env_info.game_info.talent_count
            score, terminated, truncated = self._advance(act)
            if score.talent_count > flashes_before:
                threshold = None  # the next flash gets its own look-ahead once it is ready
            actions.append(act)
            x, z, _, _ = self._hero()
            trajectory.append((x, z))
        return PlannerResult(
            total_score=float(score.total_score), steps=env.steps, chests=int(score.treasure_count), won=terminated,
            buff_count=int(score.buff_count), flash_count=int(score.talent_count), planned_chests=route.chests,
            estimated_score=route.estimated_score, usr_conf={"diy": _episode_dict(episode)},
            trajectory=trajectory, actions=actions,
        )

    def _flash_threshold(self, usr_conf: dict | None, seed: int | None, actions: list[int]) -> tuple[float, float]:
        """(flash advantage in cells to wait for from now on, step after which to look again).

        Without look-ahead: `flash_min_gain`, for good. With it: replay this episode on a twin env,
        walk the rest of it without flashing, and wait for the best advantage seen there. With a
        seed (or no step jitter) the twin is exact and the flash fires at that very step;
        otherwise the twin's steps differ a little, so the threshold leaves some room and the
        look-ahead is redone should the twin's best moment pass unused.
        """
        if not self.look_ahead:
            return self.flash_min_gain, _INF
        env = self.env
        twin_env = RealmEnv(self.map, flash_blocked=env.flash_blocked, step_jitter=env.step_jitter)
        exact = seed is not None or not env.step_jitter
        if seed is not None:
            twin_env.reset(usr_conf, seed=seed)  # the same draws: chests and step jitter alike
        else:
            twin_env.reset({"diy": _episode_dict(env.episode)})
        for act in actions:
            twin_env.step(act)
        twin = RouteController(twin_env, self.flash_min_gain, self.use_buff, look_ahead=False)
        twin.targets, twin._counts = list(self.targets), self._counts
        best, best_step = 0.0, env.steps
        done = False
        while not done:
            target = twin._current_target()
            field_ = twin.fields.rows[target]
            tx, tz = self.map.positions[target]
            walk_cost, _, move = twin._best_move(field_, tx, tz, twin._hero()[2])
            if walk_cost >= 0:
                advantage = twin._flash_advantage(field_, tx, tz, walk_cost)[0]
                if advantage > best:
                    best, best_step = advantage, twin_env.steps
            _, terminated, truncated = twin._advance(move)
            done = terminated or truncated
        if best < FLASH_WORTH_MIN:
            return _INF, _INF
        if exact:
            return best - 1e-6, _INF
        return best - FLASH_INEXACT_MARGIN, best_step + FLASH_INEXACT_SLACK_STEPS

    def _is_live(self, pid: int) -> bool:
        for organ in self.env.env_info.frame_state.organs:
            if organ.config_id == pid:
                return organ.status == 1
        return False

    def _replan(self, targets: list[int]) -> list[int]:
        """After a pick-up the rest of the plan may be beaten (a chest taken in passing, fewer
        steps left): solve again from here over the live chests, within the remaining steps."""
        env = self.env
        episode = env.episode
        live = [o.config_id for o in env.env_info.frame_state.organs if o.sub_type == ORGAN_CHEST and o.status == 1]
        x, z, _, _ = self._hero()
        here = cell_of(x, z)
        remaining = EpisodeConfig(episode.start, episode.end, episode.treasure_random, len(live), live,
                                  max(1, episode.max_step - env.steps), episode.talent_type)
        buff_live = self._is_live(BUFF_ID) and BUFF_ID in targets
        return plan_route(self.map, remaining, from_cell=here, chests=live, use_buff=buff_live).targets


def _episode_dict(e: EpisodeConfig) -> dict:
    return {"start": e.start, "end": e.end, "treasure_random": 0, "treasure_id": list(e.treasure_id),
            "max_step": e.max_step, "talent_type": e.talent_type}


def run_planner(env: RealmEnv, usr_conf: dict | None = None, seed: int | None = None, **options) -> PlannerResult:
    """Play one episode with the planner; the result's usr_conf has the chests resolved."""
    return RouteController(env, **options).run(usr_conf, seed)


def main(argv: list[str] | None = None) -> int:
    from realm import make_env
    from realm.back_to_the_realm.presets import PRESETS, preset

    parser = argparse.ArgumentParser(prog="python -m realm.back_to_the_realm.reference", description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="leaderboard-2024", choices=sorted(PRESETS))
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="first episode seed; episode k uses seed + k")
    parser.add_argument("--map-seed", type=int, default=0)
    parser.add_argument("--map-file")
    parser.add_argument("--positions-file")
    parser.add_argument("--flash-blocked", default="fail", choices=["fail", "nearest"])
    args = parser.parse_args(argv)
    if bool(args.map_file) != bool(args.positions_file):
        parser.error("--map-file and --positions-file go together")
    env = make_env(map_file=args.map_file, positions_file=args.positions_file, map_seed=args.map_seed,
                   flash_blocked=args.flash_blocked)
    t0 = time.perf_counter()
    results = [run_planner(env, preset(args.preset), seed=args.seed + k) for k in range(args.episodes)]
    scores = np.array([r.total_score for r in results])
    steps = np.array([r.steps for r in results])
    print(f"map {env.map.name}, preset {args.preset}, {args.episodes} episodes "
          f"({time.perf_counter() - t0:.1f} s)")
    print(f"win rate {np.mean([r.won for r in results]):.2f}  chests {np.mean([r.chests for r in results]):.2f}  "
          f"flashes {np.mean([r.flash_count for r in results]):.2f}  buffs {np.mean([r.buff_count for r in results]):.2f}")
    print(f"mean steps {steps.mean():.1f}")
    print(f"mean score {scores.mean():.2f} ± {scores.std():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
