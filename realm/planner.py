"""Route planner: the project's upper reference score for an episode.

With full knowledge of the map it (1) picks the set and order of chests that maximise the final
score exactly (Held-Karp over ≤ 13 chests), (2) inserts the speed buff on the leg where the
detour pays, and (3) drives the env through its own `step()`: each step takes the move whose
simulated landing (the env's own sliding rule) is closest to the target on an 8-connected
distance field, and flashes when a jump gains enough cells toward the target. Whatever score it
reaches is the score an agent with perfect navigation could expect on that episode.

Command line:  python -m realm.planner [--preset NAME] [--episodes N] [--map-seed S | --map-file F --positions-file F]
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

from realm.constants import (
    BUFF_DURATION_STEPS,
    BUFF_ID,
    BUFF_STEP_LENGTH,
    CELL_WIDTH,
    CHEST_SCORE,
    END_BONUS,
    FLASH_DISTANCE,
    NUM_POSITIONS,
    ORIGIN_X,
    ORIGIN_Z,
    PICKUP_RADIUS,
    STEP_BONUS,
    STEP_LENGTH,
)
from realm.env import UNIT_VECTORS, RealmEnv, walk_substeps
from realm.maps import Map
from realm.protocol import EpisodeConfig

STEPS_PER_CELL = CELL_WIDTH / STEP_LENGTH  # a plain step covers 1.4 cells
#: Fraction of max_step a plan may use: the controller's path is a little longer than the estimate.
STEP_BUDGET_SAFETY = 0.95
#: Cells a flash must gain toward the target before it is spent (it cools down for 606 steps).
FLASH_MIN_GAIN = 10.0
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


class PathFields:
    """Octile distance fields to every special position of a map, computed once per map."""

    def __init__(self, m: Map):
        self.map = m
        self.fields = [octile_distances(m.passable, int(xc), int(zc)) for xc, zc in m.position_cells]
        cells = m.position_cells
        self.between = np.array([[self.fields[a][cells[b][1], cells[b][0]] for b in range(NUM_POSITIONS)]
                                 for a in range(NUM_POSITIONS)])


_FIELDS: "weakref.WeakKeyDictionary[Map, PathFields]" = weakref.WeakKeyDictionary()


def path_fields(m: Map) -> PathFields:
    found = _FIELDS.get(m)
    if found is None:
        found = _FIELDS[m] = PathFields(m)
    return found


def final_score(max_step: int, steps: float, chests: int) -> float:
    return END_BONUS + STEP_BONUS * (max_step - steps) + CHEST_SCORE * chests


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
    """
    n = len(start_cost)
    budget = max_step * STEP_BUDGET_SAFETY
    best_order: list[int] = []
    best_steps = float(direct_cost) * steps_per_cell
    best_score = final_score(max_step, best_steps, 0)
    if n == 0:
        return best_order, best_steps
    full = 1 << n
    cost = np.full((full, n), _INF)
    parent = np.full((full, n), -1, dtype=np.int64)
    for i in range(n):
        cost[1 << i, i] = start_cost[i]
    bits = np.array([1 << j for j in range(n)])
    for mask in range(1, full):
        row = cost[mask]
        if not np.isfinite(row).any():
            continue
        steps = (row + end_cost) * steps_per_cell
        k = int(np.argmin(steps))
        chests = bin(mask).count("1")
        score = final_score(max_step, steps[k], chests)
        if steps[k] <= budget and score > best_score:
            best_score, best_steps, best_last, best_mask = score, float(steps[k]), k, mask
            best_order = [best_last]
        outside = (mask & bits) == 0
        if not outside.any():
            continue
        via = row[:, None] + between  # via[last, nxt]
        last = np.argmin(via, axis=0)
        reach = via[last, np.arange(n)]
        for j in np.nonzero(outside)[0]:
            nmask = mask | (1 << j)
            if reach[j] < cost[nmask, j]:
                cost[nmask, j] = reach[j]
                parent[nmask, j] = last[j]
    if not best_order:
        return [], best_steps
    order, mask, node = [], best_mask, best_last
    while node >= 0:
        order.append(int(node))
        prev = parent[mask, node]
        mask &= ~(1 << node)
        node = prev
    return order[::-1], best_steps


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
    saved_steps = BUFF_DURATION_STEPS * (1.0 - STEP_LENGTH / BUFF_STEP_LENGTH)  # 50 fast steps ≈ 71 plain ones
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
    """Drives the hero along a Route through the env's own step(), replanning after each pick-up."""

    def __init__(self, env: RealmEnv, flash_min_gain: float = FLASH_MIN_GAIN, use_buff: bool = True):
        self.env = env
        self.map = env.map
        self.fields = path_fields(env.map)
        self.free = self.map.passable.astype(np.uint8).tobytes()
        self.flash_min_gain = flash_min_gain
        self.use_buff = use_buff

    def _hero(self):
        hero = self.env.env_info.frame_state.heroes[0]
        return hero.pos.x, hero.pos.z, bool(hero.speed_up), hero.talent.status == 1

    def _landing_key(self, field_, tx, tz, points):
        """Lower is better: reach the target, else the field at the landing cell, then Euclid."""
        for x, z, _, _ in points:
            if (x - tx) ** 2 + (z - tz) ** 2 <= PICKUP_RADIUS ** 2:
                return (-1.0, 0.0)
        x, z, xc, zc = points[-1]
        return (float(field_[zc, xc]), math.hypot(tx - x, tz - z))

    def choose_action(self, target: int) -> int:
        x, z, fast, flash_ready = self._hero()
        xc = int((x - ORIGIN_X) // CELL_WIDTH)
        zc = int((z - ORIGIN_Z) // CELL_WIDTH)
        field_ = self.fields.fields[target]
        tx, tz = self.map.positions[target]
        here = float(field_[zc, xc])
        length = BUFF_STEP_LENGTH if fast else STEP_LENGTH
        moves = [(self._landing_key(field_, tx, tz, walk_substeps(self.free, x, z, xc, zc, d, length)), d)
                 for d in range(8)]
        best_key, best_move = min(moves)
        if flash_ready and best_key[0] >= 0:
            flash_gain, flash_dir = self._best_flash(field_, x, z, here)
            walk_gain = here - best_key[0]
            if flash_dir is not None and flash_gain - walk_gain >= self.flash_min_gain:
                return 8 + flash_dir
        return best_move

    def _best_flash(self, field_, x, z, here):
        best = (0.0, None)
        for d, (ux, uz) in enumerate(UNIT_VECTORS):
            fx, fz = x + ux * FLASH_DISTANCE, z + uz * FLASH_DISTANCE
            fxc, fzc = int((fx - ORIGIN_X) // CELL_WIDTH), int((fz - ORIGIN_Z) // CELL_WIDTH)
            if not self.map.is_passable_cell(fxc, fzc):
                continue  # a blocked target either wastes the flash or lands somewhere unplanned
            gain = here - float(field_[fzc, fxc])
            if gain > best[0]:
                best = (gain, d)
        return best

    def run(self, usr_conf: dict | None = None, seed: int | None = None) -> PlannerResult:
        env = self.env
        env.reset(usr_conf=usr_conf, seed=seed)
        episode = env.episode
        route = plan_route(self.map, episode, use_buff=self.use_buff)
        targets = list(route.targets)
        x, z, _, _ = self._hero()
        trajectory, actions = [(x, z)], []
        chests_before, buff_before = 0, 0
        terminated = truncated = False
        score = None
        while not (terminated or truncated):
            while targets[0] != episode.end and not self._is_live(targets[0]):
                targets.pop(0)
            act = self.choose_action(targets[0])
            _, _, score, terminated, truncated, _ = env.step(act)
            actions.append(act)
            x, z, _, _ = self._hero()
            trajectory.append((x, z))
            if score.treasure_count != chests_before or score.buff_count != buff_before:
                chests_before, buff_before = score.treasure_count, score.buff_count
                targets = self._replan(targets)
        return PlannerResult(
            total_score=float(score.total_score), steps=env.steps, chests=int(score.treasure_count), won=terminated,
            buff_count=int(score.buff_count), flash_count=int(score.talent_count), planned_chests=route.chests,
            estimated_score=route.estimated_score, usr_conf={"diy": _episode_dict(episode)},
            trajectory=trajectory, actions=actions,
        )

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
        live = [o.config_id for o in env.env_info.frame_state.organs if o.sub_type == 1 and o.status == 1]
        x, z, _, _ = self._hero()
        here = (int((x - ORIGIN_X) // CELL_WIDTH), int((z - ORIGIN_Z) // CELL_WIDTH))
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
    from realm.presets import PRESETS, preset

    parser = argparse.ArgumentParser(prog="python -m realm.planner", description=__doc__.split("\n\n")[0])
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
