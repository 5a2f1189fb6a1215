"""A full-information reference policy: it reads the env's true state (the whole map's dirt, every
official robot's cell and square, the chargers, its battery), not the observation, so its scores
are an upper reference for agents that see only the 21x21 view.

How it plays, each step:

1. safety: a move is safe when no official robot can come within Chebyshev distance 1 of its
   landing cell this step (each robot's possible cells after its move: where it stands and every
   cell its move rule reaches inside its square; with collision_check "before_and_after" the
   landing must also be clear of where the robots stand now); unsafe moves are never taken while
   a safe one exists; with a robot within `DANGER` cells, among the safe moves that leave the
   most (at least 2) moves safe next step whatever the robot does, the farthest from it (the
   nearest a charger when the battery is short) is taken while any next move is at risk (no
   walking into a corner with a robot behind);
2. battery: the distance from every road cell to the nearest active charger cell (8-connected
   under the diagonal rule, one search per episode; a step through a robot's square counts
   `CONTESTED_STEP` more and a charger within reach of one `CONTESTED_WAIT` more, for the
   detours and waits a robot there forces) bounds every plan: a dirt cell is a target
   only if the hero can reach it and then a charger with `MARGIN` steps to spare
   (+ `MARGIN_PER_STEP` per step home, for detours round robots); with no such target it walks
   home by the shortest path to a charger cell that keeps clear of the robots (another charger
   when a robot sits by the nearest), keeps to that path and waits by it while a robot blocks
   its next step (turning back and forth between two ways home empties the battery), and
   refills (the battery refills to full on any charger cell);
3. coverage: the nearest such dirt cell by a breadth-first search over road cells not within
   Chebyshev distance `AVOID` of a robot; among equally near ones the one with the fewest dirty
   neighbours (the edge of the dirty region first: the sweep leaves no islands behind), then the
   one straight ahead; the first step of the path to it is played. A path longer than a few steps
   is kept and followed while its target is still dirt and its next step safe.

`evaluate(...)` plays episodes with it (or with a uniformly random policy) and sums them up.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from realm.robot_vacuum.constants import CELL_DIRT, COLLISION_RANGE, GRID_SIZE, NPC_RADIUS, NUM_ACTIONS
from realm.robot_vacuum.env import NPC_ACTIONS, RobotVacuumEnv
from realm.robot_vacuum.maps import CELL_PAD, CELL_X, CELL_Z

MARGIN = 16  # battery steps kept beyond the way home
MARGIN_PER_STEP = 0.25  # and per step of the way home
AVOID = 2  # plans keep this Chebyshev distance from every official robot's cell
FAR = 1 << 20  # the distance of an unreachable cell
KEEP_PATH = 4  # a path at least this long is kept between steps
CONTESTED_WAIT = 20  # steps budgeted for a robot by a charger to wander off
CONTESTED_STEP = 1  # steps budgeted per step home through a robot's square (detours, waits)
DANGER = 4  # a robot this close (Chebyshev) makes the next move an escape


def charger_distance(env: RobotVacuumEnv, contested_wait: int = 0, contested_step: int = 0) -> list[int]:
    """[c] -> the cost from road cell c to the nearest active charger cell (FAR off road): one
    per step (8-connected under the diagonal rule), `contested_step` more per step onto a cell an
    official robot can reach (`contested`), and `contested_wait` more for a contested charger (the
    wait for the robot to wander off). With both 0, the number of steps."""
    moves, flags = env.moves, env.charger_flags
    dist = [FAR] * (GRID_SIZE * GRID_SIZE)
    risky = [False] * (GRID_SIZE * GRID_SIZE)
    for c in env.map.road_cells:
        risky[c] = contested(env, c)
    buckets: dict[int, list[int]] = {}
    for c in env.map.road_cells:
        if flags[c]:
            d = contested_wait if risky[c] else 0
            dist[c] = d
            buckets.setdefault(d, []).append(c)
    d = 0
    while buckets:
        for c in buckets.pop(d, []):
            if dist[c] != d:
                continue
            base = c * 8
            for a in range(NUM_ACTIONS):
                t = moves[base + a]
                cost = d + 1 + (contested_step if risky[c] else 0)  # the step from t onto c
                if cost < dist[t]:
                    dist[t] = cost
                    buckets.setdefault(cost, []).append(t)
        d += 1
    return dist


def contested(env: RobotVacuumEnv, c: int) -> bool:
    """Whether an official robot can come within contact of a hero on cell c (its square grown by
    the contact range and one step)."""
    reach = NPC_RADIUS + COLLISION_RANGE + 1
    x, z = CELL_X[c], CELL_Z[c]
    return any(abs(x - ox) <= reach and abs(z - oz) <= reach for ox, oz in env.npc_homes)


class ReferencePolicy:
    """`act(env)` -> action for the env's current state (full information)."""

    def __init__(self, seed: int | None = 0):
        self._random = random.Random(seed)
        self._env = None
        self._last_step = -1
        self._home: list[int] = []
        self._path: list[int] = []
        self._home_way: list[int] = []
        self._last_action = 0

    def _start(self, env: RobotVacuumEnv) -> None:
        self._env = env
        self._home = charger_distance(env, CONTESTED_WAIT, CONTESTED_STEP)
        self._path = []
        self._home_way = []

    def _npc_reach(self, env: RobotVacuumEnv) -> list[set]:
        """Each robot's possible cells after this step's move (its cell and every cell a try can
        reach inside its square)."""
        moves, out = env.moves, []
        actions = NPC_ACTIONS[env.npc_moves]
        for n, (ox, oz) in zip(env.npc_cells, env.npc_homes):
            cells = {n}
            for a in actions:
                t = moves[n * 8 + a]
                if abs(CELL_X[t] - ox) <= NPC_RADIUS and abs(CELL_Z[t] - oz) <= NPC_RADIUS:
                    cells.add(t)
            out.append(cells)
        return out

    def _safe(self, env: RobotVacuumEnv, t: int, reach: list[set]) -> bool:
        tx, tz = CELL_X[t], CELL_Z[t]
        now = env.collision_check == "before_and_after"
        for n, cells in zip(env.npc_cells, reach):
            if now and max(abs(CELL_X[n] - tx), abs(CELL_Z[n] - tz)) <= COLLISION_RANGE:
                return False
            for p in cells:
                if abs(CELL_X[p] - tx) <= COLLISION_RANGE and abs(CELL_Z[p] - tz) <= COLLISION_RANGE:
                    return False
        return True

    def _ways_out(self, env: RobotVacuumEnv, t: int, reach: list[set]) -> int:
        """How many of the next step's moves from cell t stay out of contact whatever the robots do
        in both steps (more than 2 cells, Chebyshev, from every cell a robot can reach this step)."""
        moves, count = env.moves, 0
        cells = [p for r in reach for p in r]
        for a in range(NUM_ACTIONS):
            u = moves[t * 8 + a]
            ux, uz = CELL_X[u], CELL_Z[u]
            if all(max(abs(CELL_X[p] - ux), abs(CELL_Z[p] - uz)) > 2 * COLLISION_RANGE for p in cells):
                count += 1
        return count

    def _near_npc(self, env: RobotVacuumEnv):
        npcs = [(CELL_X[n], CELL_Z[n]) for n in env.npc_cells]

        def near(c):
            x, z = CELL_X[c], CELL_Z[c]
            for nx, nz in npcs:
                if abs(nx - x) <= AVOID and abs(nz - z) <= AVOID:
                    return True
            return False

        return near

    def _plan(self, env: RobotVacuumEnv, start: int, budget: int, need_home: bool) -> list[int]:
        """The path (cells after start) to the chosen dirt target within `budget` steps, with the
        way home after it when `need_home`; [] when none fits."""
        moves, state, home = env.moves, env.cell_state, self._home
        near = self._near_npc(env)
        parent = {start: -1}
        frontier = [start]
        d = 0
        dx0, dz0 = _direction(self._last_action)
        while frontier and d < budget:
            d += 1
            nxt, found = [], []
            for c in frontier:
                base = c * 8
                for a in range(NUM_ACTIONS):
                    t = moves[base + a]
                    if t in parent or near(t) or (need_home and d + home[t] + MARGIN > budget):
                        continue  # no target past a cell too far from a charger fits either
                    parent[t] = c
                    nxt.append(t)
                    if state[CELL_PAD[t]] == CELL_DIRT and (
                            not need_home or d + home[t] * (1 + MARGIN_PER_STEP) + MARGIN <= budget):
                        found.append(t)
            if found:
                def score(t):
                    dirty = sum(state[CELL_PAD[moves[t * 8 + a]]] == CELL_DIRT for a in range(NUM_ACTIONS))
                    first = t
                    while parent[first] != start:
                        first = parent[first]
                    straight = (CELL_X[first] - CELL_X[start], CELL_Z[first] - CELL_Z[start]) == (dx0, dz0)
                    return dirty, not straight
                target = min(found, key=score)
                path = []
                while target != start:
                    path.append(target)
                    target = parent[target]
                return path[::-1]
            frontier = nxt
        return []

    def _home_path(self, env: RobotVacuumEnv, start: int) -> list[int]:
        """The shortest path (cells after start) to an active charger cell over cells not within
        AVOID of a robot; [] when there is none or the hero stands on one."""
        moves, flags = env.moves, env.charger_flags
        if flags[start]:
            return []
        near = self._near_npc(env)
        parent = {start: -1}
        frontier = [start]
        while frontier:
            nxt = []
            for c in frontier:
                base = c * 8
                for a in range(NUM_ACTIONS):
                    t = moves[base + a]
                    if t in parent or near(t):
                        continue
                    parent[t] = c
                    if flags[t]:
                        path = []
                        while t != start:
                            path.append(t)
                            t = parent[t]
                        return path[::-1]
                    nxt.append(t)
            frontier = nxt
        return []

    def act(self, env: RobotVacuumEnv) -> int:
        if env is not self._env or env.step_no <= self._last_step:
            self._start(env)
        self._last_step = env.step_no
        c, moves, home, state = env.hero_cell, env.moves, self._home, env.cell_state
        reach = self._npc_reach(env)
        targets = [moves[c * 8 + a] for a in range(NUM_ACTIONS)]
        safe = [a for a, t in enumerate(targets) if self._safe(env, t, reach)]
        if not safe:  # nothing is safe: the move that keeps farthest from the robots
            return self._remember(max(range(NUM_ACTIONS), key=lambda a: _gap(env, targets[a])))
        steps_left = env.max_step - env.step_no
        need_home = env.battery - 1 < steps_left  # else the battery outlasts the episode
        urgent = need_home and env.battery - 1 <= home[c] * (1 + MARGIN_PER_STEP) + MARGIN + 1
        if _gap(env, c) <= DANGER:  # a robot close by: keep ways out for the next step
            outs = {a: self._ways_out(env, targets[a], reach) for a in safe}
            top = max(outs.values())
            ok = [a for a in safe if outs[a] >= min(top, 2)]
            if urgent:  # ... on the way home
                best = min(ok, key=lambda a: (home[targets[a]], -_gap(env, targets[a])))
            else:
                best = max(ok, key=lambda a: (outs[a], _gap(env, targets[a])))
            if top < NUM_ACTIONS or _gap(env, targets[best]) <= AVOID:
                self._path = []
                return self._remember(best)
        budget = env.battery - 1 if need_home else steps_left
        path = self._path
        if path and state[CELL_PAD[path[-1]]] == CELL_DIRT and path[0] in targets:
            a = targets.index(path[0])
            if a in safe and not self._near_npc(env)(path[0]):
                self._path = path[1:]
                return self._remember(a)
        self._path = []
        plan = self._plan(env, c, budget, need_home)
        if plan:
            self._home_way = []
        if plan:
            if len(plan) >= KEEP_PATH:
                self._path = plan[1:]
            for a in safe:
                if targets[a] == plan[0]:
                    return self._remember(a)
            self._path = []
        # home: the nearest charger cell the robots leave open, else down the charger distance (a
        # dirty cell first among equals), else the safest wait
        way = self._home_way if self._home_way and self._home_way[0] in targets else self._home_path(env, c)
        if len(way) >= env.battery:  # a detour the battery cannot make: wait by the straight way instead
            way = []
        if way:
            for a in safe:
                if targets[a] == way[0]:
                    self._home_way = way[1:]
                    return self._remember(a)
            # the way is blocked this step: wait by it rather than turn back (no dithering)
            self._home_way = way
            wx, wz = CELL_X[way[0]], CELL_Z[way[0]]
            return self._remember(min(safe, key=lambda a: (max(abs(CELL_X[targets[a]] - wx),
                                                                abs(CELL_Z[targets[a]] - wz)), -_gap(env, targets[a]))))
        return self._remember(min(safe, key=lambda a: (home[targets[a]], state[CELL_PAD[targets[a]]] != CELL_DIRT,
                                                       -_gap(env, targets[a]))))

    def _remember(self, a: int) -> int:
        self._last_action = a
        return a


_DIRECTIONS = ((1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1))


def _direction(a: int) -> tuple[int, int]:
    return _DIRECTIONS[a]


def _gap(env: RobotVacuumEnv, t: int) -> int:
    """Chebyshev distance from cell t to the nearest official robot."""
    tx, tz = CELL_X[t], CELL_Z[t]
    return min((max(abs(CELL_X[n] - tx), abs(CELL_Z[n] - tz)) for n in env.npc_cells), default=FAR)


class RandomPolicy:
    """A uniformly random action each step (the template's untrained agent, roughly)."""

    def __init__(self, seed: int | None = 0):
        self._random = random.Random(seed)

    def act(self, env: RobotVacuumEnv) -> int:
        return self._random.randrange(NUM_ACTIONS)


@dataclass
class Summary:
    episodes: int
    score: float  # mean cells cleaned by the hero
    survival: float  # share of episodes that reached max_step
    steps: float
    charges: float
    collisions: int
    empty_battery: int


def play(env: RobotVacuumEnv, policy, usr_conf=None, seed: int | None = None) -> dict:
    """One episode; its score, steps, charges and how it ended."""
    obs = env.reset(usr_conf, seed=seed)
    while not (obs["terminated"] or obs["truncated"]):
        _, obs = env.step(policy.act(env))
    info = obs["observation"]["env_info"]
    return {"score": info["total_score"], "steps": info["step_no"], "charges": info["charge_count"],
            "truncated": obs["truncated"], "fail_reason": env.fail_reason if obs["terminated"] else None}


def evaluate(env: RobotVacuumEnv, policy, usr_conf, episodes: int, base_seed: int = 0) -> Summary:
    """`episodes` episodes: episode k on the usr_conf's map k % len(map), seeded base_seed + k."""
    conf = usr_conf or {"env_conf": {}}
    maps = list(conf.get("env_conf", {}).get("map", [1]))
    results = []
    for k in range(episodes):
        one = {"env_conf": {**conf.get("env_conf", {}), "map": [maps[k % len(maps)]]}}
        results.append(play(env, policy, one, seed=base_seed + k))
    n = max(len(results), 1)
    return Summary(episodes=len(results), score=sum(r["score"] for r in results) / n,
                   survival=sum(r["truncated"] for r in results) / n, steps=sum(r["steps"] for r in results) / n,
                   charges=sum(r["charges"] for r in results) / n,
                   collisions=sum(r["fail_reason"] == "collision" for r in results),
                   empty_battery=sum(r["fail_reason"] == "battery" for r in results))
