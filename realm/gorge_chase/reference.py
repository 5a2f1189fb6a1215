"""A full-information reference policy: it reads the env's true state (the map, both monsters'
cells and speeds, the step of the speed-up and of monster 2's spawn, the chests, the buffs, its
cooldowns), not the observation, so its scores are an upper reference for agents that see only
the 21x21 view.

How it plays, each step. Every move (and, when the moves leave it in danger and the flash is
ready, every flash) is a candidate; for each:

1. one step is simulated exactly: the hero's path (walls, the diagonal rule, the buff's second
   cell, chests and buffs picked up on the way), then the monsters' moves with the env's own
   rule (least shortest-path distance to the hero, the back-step and same-axis penalties; a tie
   taken as the first candidate); a candidate that ends in a monster's 3x3 is dropped (unless
   the step limit comes first); the monsters' distance to the hero afterwards is its `gap`;
2. the landing cell is scored by a race: the hero's arrival time at every road cell (8-connected
   path length, halved while boosted) against the earliest time any monster can come within
   reach of that cell (4-connected path length from its cell, at its speed now and after the
   speed-up; monster 2 from its spawn cell, the hero's cell of 10 steps before the spawn, taken
   as the hero's cell now until that is fixed). The cells the hero reaches first are its
   refuge; `margin` = the latest monster arrival over the refuge (how long it can stay safe,
   capped at the steps left), raised by the options of a flash from a refuge cell once it is
   ready (the monsters' arrival at the landing) and of a buff it reaches first (+`BUFF_GAIN`);
   the refuge's size (`room`) and the gap break ties (no dead ends, no dithering);
3. calm (a candidate keeps `SAFE` steps of margin and `BUFFER` steps between the monsters and
   its landing): the hero walks towards the nearest chest (or, unboosted, buff) that it reaches
   before the monsters and after which a refuge of `SAFE` steps is left (no chest at the end of
   a closing dead end), moving strictly closer; in danger: every candidate is played out
   `ROLLOUT_DEPTH` steps (the hero then keeps to the move that leaves the nearest monster
   farthest; the monsters, monster 2's spawn and the speed-up by the env's rules), the
   candidates that survive longest are kept and the best margin + tie-breaks wins.

A monster at speed 2 does not close in on a hero that flees diagonally (each diagonal step away
grows its 4-connected distance by 2 while the monster spends a sub-step realigning), so the hero
holds the gap while there is road ahead; it is caught at dead ends, the map's edges and between
two monsters coming from both sides.

The distances are the map's shared rows (`GorgeMap.distance_row`: bfs8 for the hero, bfs4 for
the monsters; the first episodes on a map fill them, later ones read them), vectorised with
numpy. Figures: docs/games/gorge_chase.md ("Reference policy").

`evaluate(...)` plays episodes with it (or with a random legal policy) and sums them up.
"""
from __future__ import annotations

import random
import weakref
from dataclasses import dataclass

import numpy as np

from realm.gorge_chase.constants import (
    BUFF_DURATION,
    BUFF_EXTRA_SPEED,
    DIRECTIONS,
    GRID_SIZE,
    HERO_SPEED,
    MONSTER2_HISTORY_STEPS,
    NO_SECOND_MONSTER,
    NUM_ACTIONS,
)
from realm.gorge_chase.env import GorgeChaseEnv, flash_target, monster_sub_steps, walk_path

SAFE = 60  # a margin (steps) that allows detours for chests
FLASH_PENALTY = 0.5  # a flash now against an equal plan that keeps it
BUFF_GAIN = 40  # margin a buff's boosted moves are worth (they hold the monsters' pace)
ROOM_WEIGHT = 0.002  # per refuge cell: room (loops, open ground) against dead ends
TARGETS_TRIED = 4  # the nearest items checked for a safe detour each step
BUFFER = 6  # steps a monster needs to reach the landing cell for a detour towards a chest
LOCAL_WEIGHT, LOCAL_CAP = 1.0, 10  # the landing cell's own time before a monster reaches it, capped
GAP_WEIGHT, GAP_CAP = 0.2, 20  # the monsters' distance after this step's moves (exact), capped: no dithering
ROLLOUT_DEPTH = 20  # steps each candidate is played out in danger
SPAWN_FORESIGHT = 20  # steps before monster 2's cell is fixed that it is expected on the hero's cell
REACH = 2  # a monster within this 4-connected distance of a cell threatens it (the 3x3 capture)


def _row(game_map, cell: int, metric: str) -> np.ndarray:
    """The map's complete distance row from flat cell `cell` as a uint16 view (no copy)."""
    return np.frombuffer(game_map.distance_row(cell, metric), dtype=np.uint16)


def _arrival(need: np.ndarray, s1: int, s2: int, slow_steps: int) -> np.ndarray:
    """Steps a monster needs to cover `need` cells moving s1 cells per step for `slow_steps`
    steps, then s2 per step."""
    if slow_steps <= 0 or s1 == s2:
        s = s2 if slow_steps <= 0 else s1
        return (need + (s - 1)) // s if s > 0 else np.where(need > 0, 1 << 20, 0)
    first = slow_steps * s1
    if s1 <= 0:
        slow = np.where(need > 0, 1 << 20, 0)
    else:
        slow = (need + (s1 - 1)) // s1
    return np.where(need <= first, slow, slow_steps + (need - first + (s2 - 1)) // s2)


_FLASH_TABLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _flash_table(game_map) -> np.ndarray:
    """[direction, compact index] -> compact index where a flash from that road cell lands
    (the cell itself when nothing is in range); per map, built once."""
    table = _FLASH_TABLES.get(game_map)
    if table is None:
        w, index = game_map.walkable_flat, game_map.index
        table = np.empty((8, game_map.num_road), dtype=np.int64)
        for i, c in enumerate(game_map.road_cells):
            x, z = c % GRID_SIZE, c // GRID_SIZE
            for d in range(8):
                fx, fz, _ = flash_target(w, x, z, d)
                table[d, i] = index[fz * GRID_SIZE + fx]
        _FLASH_TABLES[game_map] = table
    return table


def _first(ties):
    """The look-ahead's tie rule: the first of the tied cells (the env draws one)."""
    return ties[0]


def _path_to(game_map, hero: int):
    """A monster's find_path to the hero's cell (the env's bfs4 rule), for a sub-step without a candidate."""
    return lambda start: game_map.shortest_path(start, hero, "bfs4")


def _field_distance(field, index):
    """A cell's distance to the hero on a distance field (the env's bfs4 rule)."""
    return lambda c: field.get(index[c])


class ReferencePolicy:
    """`act(env)` -> action for the env's current state (full information)."""

    def __init__(self, seed: int | None = 0):
        self._random = random.Random(seed)

    # ---- the race: when can a monster reach each cell ----------------------------------------

    def _monster_arrival(self, env) -> np.ndarray:
        """Steps from the next state on until the first monster comes within REACH of each road
        cell, pessimistic by this step's monster moves (taken as made towards every cell)."""
        game_map = env.map
        step = env.step_no + 1  # the state scored is after this step
        speedup = env.monster_speedup
        best = None
        threats = []
        for m in env.monsters:
            boosted_now = env.boosted or step >= speedup  # the speed-up applies after this step's moves
            s_now = m.speed
            s_later = m.speed + (0 if env.boosted else 1)
            threats.append((m.z * GRID_SIZE + m.x, s_now, s_later, 0, boosted_now))
        if not env.second_spawned and env.monster_interval != NO_SECOND_MONSTER:
            spawn_step = env.monster_interval
            wait = spawn_step - step
            if wait <= MONSTER2_HISTORY_STEPS + SPAWN_FORESIGHT:
                # its cell is the hero's of step spawn_step - 10: known from the history, else
                # taken as the hero's cell now (so it keeps out of dead ends round the spawn)
                target = spawn_step - MONSTER2_HISTORY_STEPS
                cell = None
                for s, x, z in env.history:
                    if s == target:
                        cell = z * GRID_SIZE + x
                if cell is None:
                    cell = env.hero_z * GRID_SIZE + env.hero_x
                base = env._monster_base_speed
                s_now = base + (1 if env.boosted else 0)
                threats.append((cell, s_now, base + 1, max(wait, 0), env.boosted))
        for cell, s_now, s_later, wait, _ in threats:
            d = _row(game_map, cell, "bfs4").astype(np.int32)
            # the moves of this step (s_now) are taken as done towards every cell: pessimistic
            need = d - REACH - (s_now if wait == 0 else 0)
            np.maximum(need, 0, out=need)
            slow = max(speedup - step, 0) if not env.boosted else 0
            slow = max(slow - wait, 0)
            t = _arrival(need, s_now, s_later, slow) + wait
            best = t if best is None else np.minimum(best, t)
        return best

    # ---- the policy ---------------------------------------------------------------------------

    def act(self, env: GorgeChaseEnv) -> int:
        game_map = env.map
        w = game_map.walkable_flat
        hx, hz = env.hero_x, env.hero_z
        step = env.step_no + 1
        left = env.max_step - step  # steps after this one
        arrival = self._monster_arrival(env)
        flash_land = _flash_table(game_map)
        # per cell: the best monster arrival time at the landing of a flash from it
        flash_best = arrival[flash_land].max(axis=0)
        boosted = env.buff_remaining > 0
        cells = HERO_SPEED + env.hero_move_bonus + (BUFF_EXTRA_SPEED if boosted else 0)
        buffs = [(b[2] * GRID_SIZE + b[1], 0 if b[3] else b[4]) for b in env.buffs]
        buff_cells = {c for c, wait in buffs if wait == 0}
        chest_cells = {t[2] * GRID_SIZE + t[1] for t in env.treasures if t[3]}

        candidates = []  # (action, landing flat cell, path cells)
        seen = set()
        for a in range(8):
            path = walk_path(w, hx, hz, a, cells, env.diagonal_rule)
            x, z = path[-1] if path else (hx, hz)
            c = z * GRID_SIZE + x
            if (c, len(path)) in seen:
                continue
            seen.add((c, len(path)))
            candidates.append((a, c, path))
        cooldown_after = max(env.flash_cooldown - 1, 0)
        scored = [self._score(env, a, c, path, arrival, flash_best, buffs, buff_cells, chest_cells, cooldown_after, left)
                  for a, c, path in candidates]
        scored = [s for s in scored if s is not None]
        calm = any(s[0] >= min(left, SAFE) and s[6] >= min(BUFFER, left) for s in scored)
        if env.flash_cooldown == 0 and not calm:  # flashes are weighed only when the moves leave it in danger
            for d in range(8):
                x, z, k = flash_target(w, hx, hz, d)
                c = z * GRID_SIZE + x
                if k == 0 or (c, -1) in seen:
                    continue
                seen.add((c, -1))
                dx, dz = DIRECTIONS[d]
                path = [(hx + dx * i, hz + dz * i) for i in range(1, k + 1)]
                scored_flash = self._score(env, 8 + d, c, path, arrival, flash_best, buffs, buff_cells, chest_cells,
                                           cooldown_after, left)
                if scored_flash is not None:
                    scored.append(scored_flash)
        return self._choose(env, scored, arrival, left, boosted, buff_cells, chest_cells, calm)

    def _score(self, env, a, c, path, arrival, flash_best, buffs, buff_cells, chest_cells, cooldown_after, left):
        """(margin, room, action, landing, -, chests picked up, local) of one candidate, None if
        the monsters' moves of this step catch the hero there."""
        game_map = env.map
        index = game_map.index
        gap = self._gap_after_moves(env, c, left)
        if gap is None:
            return None
        flat_path = [z * GRID_SIZE + x for x, z in path] if path else [c]
        chests = sum(1 for p in flat_path if p in chest_cells)
        picks_buff = any(p in buff_cells for p in flat_path)
        boost = BUFF_DURATION - 1 if picks_buff else max(env.buff_remaining - 1, 0)
        row8 = _row(game_map, c, "bfs8").astype(np.int32)
        hero_t = row8 if boost == 0 else np.where(row8 <= 2 * boost, (row8 + 1) // 2, row8 - boost)
        refuge = hero_t < arrival
        margin = int(arrival[refuge].max()) if refuge.any() else 0
        room = int(np.count_nonzero(refuge))
        # a flash from a refuge cell once it is ready (the hero waits there if it must)
        ready = env.talent_cooldown - 1 if a >= 8 else cooldown_after
        when = np.maximum(hero_t, ready)
        usable = (arrival > when) & (flash_best > when + 1)
        if usable.any():
            margin = max(margin, int(flash_best[usable].max()))
        # a buff it reaches first: no ground lost for its boosted moves
        if boost == 0:
            for b, wait in buffs:
                i = index[b]
                if hero_t[i] < arrival[i] and hero_t[i] >= wait:
                    margin = max(margin, int(arrival[i]) + BUFF_GAIN)
        margin = min(margin, left)
        local = min(int(arrival[index[c]]), left)  # steps before a monster can reach the landing cell
        return margin, room, a, c, gap, chests, local

    def _choose(self, env, scored, arrival, left, boosted, buff_cells, chest_cells, calm: bool) -> int:
        if not scored:  # caught whatever it does
            return self._random.randrange(8)
        game_map = env.map
        index = game_map.index
        hx, hz = env.hero_x, env.hero_z
        best_margin = max(s[0] for s in scored)

        # chests (and buffs) while the margin allows
        need = min(left, SAFE)
        if best_margin >= need:
            pool = [s for s in scored if s[0] >= need and s[6] >= min(BUFFER, left)]
            targets = list(chest_cells)
            if not boosted:
                targets += list(buff_cells)
            if targets and pool:
                hero = index[hz * GRID_SIZE + hx]
                target = self._safe_target(game_map, targets, hero, arrival, need)
                if target is not None:
                    to_target = _row(game_map, target, "bfs8")
                    now = int(to_target[hero])
                    closer = [s for s in pool if s[5] > 0 or int(to_target[index[s[3]]]) < now]
                    if closer:
                        def key(s):
                            return (s[5] > 0, -int(to_target[index[s[3]]]), s[2] < 8, s[0], s[1])

                        return max(closer, key=key)[2]

        def value(s):
            return (s[0] + LOCAL_WEIGHT * min(s[6], LOCAL_CAP) + ROOM_WEIGHT * s[1] + GAP_WEIGHT * min(s[4], GAP_CAP)
                    - (FLASH_PENALTY if s[2] >= 8 else 0))

        if not calm:  # in danger: play each candidate out against the monsters' exact rule
            depth = min(ROLLOUT_DEPTH, left)
            lived = {s[2]: self._rollout(env, s[2], s[3], depth) for s in scored}
            best = max(lived.values())
            scored = [s for s in scored if lived[s[2]] == best]

        top = max(value(s) for s in scored)
        ties = [s for s in scored if value(s) >= top - 1e-9]
        return self._random.choice(ties)[2]

    def _rollout(self, env, action: int, landing: int, depth: int) -> int:
        """Steps (up to `depth`) the hero survives after playing `action` (landing on flat cell
        `landing`) when it then keeps to the move that leaves the nearest monster farthest (no
        flash), the monsters moving by the env's rule (ties taken as the first), monster 2
        spawning and the speed-up coming on their steps."""
        game_map = env.map
        w, index = game_map.walkable_flat, game_map.index
        orth = game_map.orthogonal_neighbours()
        r = env.capture_radius
        step = env.step_no + 1
        boost = max(env.buff_remaining - 1, 0)  # the timers run whatever the action
        buffs = {b[2] * GRID_SIZE + b[1] for b in env.buffs if b[3]}
        if landing in buffs:
            boost = BUFF_DURATION - 1
        mons = [[m.z * GRID_SIZE + m.x, m.prev, m.last_axis, m.speed, m.monster_id] for m in env.monsters]
        boosted = env.boosted
        pending = not env.second_spawned and env.monster_interval != NO_SECOND_MONSTER
        trail = {s_: z * GRID_SIZE + x for s_, x, z in env.history}
        trail[step] = landing
        h = landing
        for k in range(depth + 1):
            if k:  # the hero's move of step `step`
                step += 1
                hx, hz = h % GRID_SIZE, h // GRID_SIZE
                cells = HERO_SPEED + env.hero_move_bonus + (BUFF_EXTRA_SPEED if boost > 0 else 0)
                best, best_gap = h, -1
                for a in range(8):
                    path = walk_path(w, hx, hz, a, cells, env.diagonal_rule)
                    if not path:
                        continue
                    x, z = path[-1]
                    n = z * GRID_SIZE + x
                    field = game_map.distance_field(n, "bfs4")
                    gap = min(field.get(index[m[0]]) for m in mons)
                    if gap > best_gap:
                        best, best_gap = n, gap
                h = best
                trail[step] = h
                if boost > 0:
                    boost -= 1
            # the monsters' moves of this step
            field = game_map.distance_field(h, "bfs4")
            occupied = {m[0]: m[4] for m in mons}
            hx, hz = h % GRID_SIZE, h // GRID_SIZE
            dist = _field_distance(field, index)
            for m in mons:
                if m[0] != h:
                    m[0], m[1], m[2] = monster_sub_steps(m[0], m[1], m[2], m[3], m[4], occupied, orth, dist, _first,
                                                         _path_to(game_map, h))
            if pending and step >= env.monster_interval:
                pending = False
                cell = trail.get(env.monster_interval - MONSTER2_HISTORY_STEPS, h)
                if cell not in occupied:
                    mons.append([cell, -1, -1, env._monster_base_speed + (1 if boosted else 0), -2])
            if not boosted and step >= env.monster_speedup:
                boosted = True
                for m in mons:
                    m[3] += 1
            if step >= env.max_step:
                return depth
            for m in mons:
                if abs(m[0] % GRID_SIZE - hx) <= r and abs(m[0] // GRID_SIZE - hz) <= r:
                    return k
        return depth

    def _safe_target(self, game_map, targets, hero: int, arrival, need: int):
        """The nearest item (flat cell) the hero reaches before the monsters and from which it
        still has a refuge of at least `need` steps (no chest at the end of a closing dead end)."""
        index = game_map.index
        here = _row(game_map, game_map.road_cells[hero], "bfs8")
        order = sorted(targets, key=lambda t: here[index[t]])
        for t in order[:TARGETS_TRIED]:
            i = index[t]
            reach = int(here[i])
            if arrival[i] <= reach + 1:
                continue
            after = _row(game_map, t, "bfs8").astype(np.int32)
            after += reach
            refuge = after < arrival
            if refuge.any() and int(arrival[refuge].max()) >= need:
                return t
        return None

    def _gap_after_moves(self, env, hero: int, left: int):
        """The monsters' moves of this step (the env's rule, ties taken as the first) against
        the hero on `hero`: None if a monster's capture square holds the hero afterwards (and
        the step limit does not end the episode first), else the least 4-connected distance
        from a monster to the hero then."""
        game_map = env.map
        field = game_map.distance_field(hero, "bfs4")
        gap = GAP_CAP
        orth = game_map.orthogonal_neighbours()
        index = game_map.index
        occupied = {m.z * GRID_SIZE + m.x: m.monster_id for m in env.monsters}
        hx, hz = hero % GRID_SIZE, hero // GRID_SIZE
        r = env.capture_radius
        step = env.step_no + 1
        dist = _field_distance(field, index)
        for m in env.monsters:
            cur = m.z * GRID_SIZE + m.x
            if cur != hero:
                cur, _, _ = monster_sub_steps(cur, m.prev, m.last_axis, m.speed, m.monster_id, occupied, orth, dist,
                                              _first, _path_to(game_map, hero))
            mx, mz = cur % GRID_SIZE, cur // GRID_SIZE
            if abs(mx - hx) <= r and abs(mz - hz) <= r and left > 0:
                return None
            gap = min(gap, field.get(index[cur]))
        # monster 2 appears this step (it does not move on its spawn step)
        if not env.second_spawned and env.monster_interval != NO_SECOND_MONSTER and step >= env.monster_interval:
            target = step - MONSTER2_HISTORY_STEPS
            for s, x, z in env.history:
                if s == target and abs(x - hx) <= r and abs(z - hz) <= r and left > 0:
                    return None
        return gap


class RandomLegalPolicy:
    """A uniformly random legal action (flashes only when ready)."""

    def __init__(self, seed: int | None = 0):
        self._random = random.Random(seed)

    def act(self, env: GorgeChaseEnv) -> int:
        return self._random.randrange(NUM_ACTIONS if env.flash_cooldown == 0 else 8)


@dataclass
class Summary:
    episodes: int
    survival_rate: float
    mean_steps: float
    mean_chests: float
    mean_score: float

    def __str__(self) -> str:
        return (f"episodes {self.episodes}  survival {self.survival_rate:.2f}  steps {self.mean_steps:.1f}  "
                f"chests {self.mean_chests:.2f}  score {self.mean_score:.1f}")


def play(env: GorgeChaseEnv, policy, usr_conf=None, seed: int | None = None) -> dict:
    """One episode; returns steps, chests, score, survived (truncated without capture)."""
    obs = env.reset(usr_conf, seed=seed)
    while not (obs["terminated"] or obs["truncated"]):
        _, obs = env.step(policy.act(env))
    info = obs["observation"]["env_info"]
    return {"steps": info["step_no"], "chests": info["treasures_collected"], "score": info["total_score"],
            "survived": bool(obs["truncated"] and not env.caught), "map_id": env.map_id}


def evaluate(env: GorgeChaseEnv, policy, usr_conf=None, episodes: int = 10, seed: int = 0) -> Summary:
    """Play `episodes` episodes (episode k reseeded with seed + k) and average them."""
    results = [play(env, policy, usr_conf, seed=seed + k) for k in range(episodes)]
    n = len(results)
    return Summary(n, sum(r["survived"] for r in results) / n, sum(r["steps"] for r in results) / n,
                   sum(r["chests"] for r in results) / n, sum(r["score"] for r in results) / n)


__all__ = ["RandomLegalPolicy", "ReferencePolicy", "Summary", "evaluate", "play", "DIRECTIONS"]
