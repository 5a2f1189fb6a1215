"""A full-information reference policy: it reads the env's true state (the map, both monsters'
cells and speeds, the chests, the buffs, its cooldowns), not the observation, so its scores are
an upper reference for agents that see only the 21x21 view.

How it plays, each step:
- every move and (when ready) every flash is scored by where it leaves the hero: its safety is
  the least shortest-path distance from a monster to the landing cell minus that monster's speed
  (the monsters chase by shortest paths), refined by a two-step look-ahead (the best safety of
  the cells one further move away, against monsters one step nearer), and by an escape term
  (road cells nearby, so it does not run into a dead end);
- while it is safe (safety above `SAFE`), it walks the shortest path to the nearest chest or
  available buff instead, if that step keeps it safe;
- a flash is taken only when it improves the safety clearly over the best move (cornered).

`evaluate(...)` plays episodes with it (or with a random legal policy) and sums them up.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from realm.gorge_chase.constants import BUFF_EXTRA_SPEED, DIRECTIONS, GRID_SIZE, HERO_SPEED, NUM_ACTIONS
from realm.gorge_chase.env import GorgeChaseEnv, flash_target, walk_path
from realm.gorge_chase.maps import UNREACHABLE

SAFE = 8  # safety above which chests are worth a detour
FLASH_GAIN = 4  # a flash must improve the safety by this much over the best move
ESCAPE_RADIUS = 3


class ReferencePolicy:
    """`act(env)` -> action for the env's current state (full information)."""

    def __init__(self, seed: int | None = 0):
        self._random = random.Random(seed)
        self._room: dict = {}

    def _field(self, env, x, z):
        return env.map.distance_field(z * GRID_SIZE + x, "bfs4")

    def _room_around(self, env, c: int) -> int:
        """Road cells within ESCAPE_RADIUS moves of c (cached per map and cell)."""
        key = (env.map.name, c)
        room = self._room.get(key)
        if room is None:
            moves8 = env.map.moves8()
            seen = {c}
            frontier = [c]
            for _ in range(ESCAPE_RADIUS):
                nxt = []
                for u in frontier:
                    for v in moves8[u]:
                        if v not in seen:
                            seen.add(v)
                            nxt.append(v)
                frontier = nxt
            room = self._room[key] = len(seen)
        return room

    def act(self, env: GorgeChaseEnv) -> int:
        w = env.map.walkable_flat
        index = env.map.index
        hx, hz = env.hero_x, env.hero_z
        monsters = [(self._field(env, m.x, m.z), m.speed) for m in env.monsters]
        moves8 = env.map.moves8()

        def safety(c: int, extra: int = 0) -> float:
            i = index[c]
            worst = 1e9
            for field, speed in monsters:
                d = field.get(i)
                if d == UNREACHABLE:
                    continue
                worst = min(worst, d - speed * (1 + extra))
            return worst

        def value(c: int) -> float:
            now = safety(c)
            ahead = max((safety(n, 1) for n in moves8[c]), default=now - 2)
            return min(now, ahead + 1) * 10 + min(now, 40) * 0.5 + self._room_around(env, c) * 0.05

        cells = HERO_SPEED + env.hero_move_bonus + (BUFF_EXTRA_SPEED if env.buff_remaining > 0 else 0)
        options = []  # (value, safety, action, cell)
        for a in range(8):
            path = walk_path(w, hx, hz, a, cells, env.diagonal_rule)
            x, z = path[-1] if path else (hx, hz)
            c = z * GRID_SIZE + x
            options.append((value(c), safety(c), a, c))
        best_move = max(options)
        # chests / buffs while safe
        if best_move[1] > SAFE:
            target = self._target(env)
            if target is not None:
                tfield = self._field(env, *target)
                here = tfield.get(index[hz * GRID_SIZE + hx])
                toward = [o for o in options if tfield.get(index[o[3]]) < here and o[1] > SAFE - 2]
                if toward:
                    return max(toward, key=lambda o: (-tfield.get(index[o[3]]), o[0]))[2]
        if env.flash_cooldown == 0 and best_move[1] <= SAFE // 2:
            flashes = []
            for d in range(8):
                x, z, _ = flash_target(w, hx, hz, d)
                c = z * GRID_SIZE + x
                flashes.append((value(c), safety(c), 8 + d, c))
            best_flash = max(flashes)
            if best_flash[1] >= best_move[1] + FLASH_GAIN:
                return best_flash[2]
        ties = [o for o in options if o[0] == best_move[0]]
        return self._random.choice(ties)[2]

    def _target(self, env):
        """The nearest chest or available buff (by path from the hero), as (x, z)."""
        items = [(t[1], t[2]) for t in env.treasures if t[3]]
        if env.buff_remaining == 0:
            items += [(b[1], b[2]) for b in env.buffs if b[3]]
        if not items:
            return None
        hero_field = self._field(env, env.hero_x, env.hero_z)
        index = env.map.index
        return min(items, key=lambda p: hero_field.get(index[p[1] * GRID_SIZE + p[0]]))


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
            "survived": bool(obs["truncated"] and not env.caught), "map_id": obs["extra_info"]["map_id"]}


def evaluate(env: GorgeChaseEnv, policy, usr_conf=None, episodes: int = 10, seed: int = 0) -> Summary:
    """Play `episodes` episodes (episode k reseeded with seed + k) and average them."""
    results = [play(env, policy, usr_conf, seed=seed + k) for k in range(episodes)]
    n = len(results)
    return Summary(n, sum(r["survived"] for r in results) / n, sum(r["steps"] for r in results) / n,
                   sum(r["chests"] for r in results) / n, sum(r["score"] for r in results) / n)


__all__ = ["RandomLegalPolicy", "ReferencePolicy", "Summary", "evaluate", "play", "DIRECTIONS"]
