"""The v2 planner: the upper reference score of a v2 episode, with full information (the end,
every chest, the buff and the active obstacles are known from the first step).

It (1) picks the chests and their order that maximise the final score (the 2024 planner's exact
Held-Karp, `realm.back_to_the_realm.reference.best_chest_order`, on move counts of this episode's grid, obstacles
closed), (2) inserts the buff on the leg where its detour costs less than its speed saves, and
(3) drives the env through its own `step()`: each step takes the move (`realm.back_to_the_realm_v2.env.walk`, the
env's rule) that lands closest to the target on an exact move-count field, and casts the talent
(`flash_landing`) when it saves at least FLASH_MIN_GAIN moves and no better cast is coming within
the next LOOK_AHEAD steps of the walk. It replans after every pick-up.

    python -m realm.back_to_the_realm_v2.reference [--map-seed S | --map-file F --obstacles-file F] [--episodes N]
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from realm.back_to_the_realm.reference import best_chest_order
from realm.back_to_the_realm_v2.env import RealmEnvV2, flash_landing, walk
from realm.back_to_the_realm_v2.maps import move_distances

FLASH_MIN_GAIN = 6  # moves a cast must save over the best move
LOOK_AHEAD = 20  # steps of the walk ahead searched for a better cast
_INF = float("inf")


@dataclass
class PlannerResultV2:
    total_score: float
    step_no: int  # the last step's step_no (actions − 1), as the server logs it
    steps: int
    chests: int
    won: bool
    buff_count: int
    talent_count: int
    planned_route: list[str]  # "chest 3", "buff", "end" in visiting order
    estimated_steps: float
    trajectory: list[tuple[int, int]] = field(default_factory=list)  # cells, start first
    jumps: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)


class PlannerV2:
    """Plays one episode of a RealmEnvV2 with full information; see the module doc."""

    def __init__(self, env: RealmEnvV2, *, use_buff: bool = True, flash_min_gain: int = FLASH_MIN_GAIN,
                 look_ahead: int = LOOK_AHEAD):
        self.env = env
        self.use_buff = use_buff
        self.flash_min_gain = flash_min_gain
        self.look_ahead = look_ahead

    # ---- route -----------------------------------------------------------------------------

    def _fields(self):
        e = self.env.episode
        grid = self.env.grid
        points = {("chest", i): p for i, p in enumerate(e.treasures)}
        points["buff"] = e.buff
        points["end"] = e.end
        fields = {}
        avoid_end = grid.copy()
        avoid_end[e.end[1], e.end[0]] = False  # the end finishes the episode: other legs go round it
        for key, (x, z) in points.items():
            f = move_distances(grid if key == "end" else avoid_end, x, z).astype(np.float64)
            f[f < 0] = _INF
            fields[key] = f
        return points, fields

    def _route(self, here, steps_left: int, buff_usable: bool):
        """Targets (keys of `points`) from cell `here` within `steps_left` steps."""
        env = self.env
        x, z = here
        live = [("chest", i) for i, taken in enumerate(env.chests_taken) if not taken]
        start_cost = np.array([self.fields[c][z, x] for c in live])
        between = np.array([[self.fields[a][self.points[b][1], self.points[b][0]] for b in live] for a in live]).reshape(len(live), len(live))
        end_cost = np.array([self.fields["end"][self.points[c][1], self.points[c][0]] for c in live])
        direct = float(self.fields["end"][z, x])
        per_cell = 1.0 / env.step_length
        order, steps = best_chest_order(start_cost, between, end_cost, direct, max(1, steps_left), per_cell)
        targets = [live[i] for i in order] + ["end"]
        if self.use_buff and buff_usable:
            targets, steps = self._insert_buff(here, targets, steps)
        return targets, steps

    def _insert_buff(self, here, targets, steps):
        env = self.env
        s, b = env.step_length, env.buff_step_length
        saved = env.buff_duration * (b / s - 1.0)
        buff = self.fields["buff"]
        best_gain, best_leg = 0.0, None
        prev = here
        for k, target in enumerate(targets):
            tx, tz = self.points[target]
            px, pz = prev
            direct = self.fields[target][pz, px]
            detour = buff[pz, px] + buff[tz, tx]
            gain = saved - (detour - direct) / s
            if gain > best_gain:
                best_gain, best_leg = gain, k
            prev = (tx, tz)
        if best_leg is None:
            return targets, steps
        return targets[:best_leg] + ["buff"] + targets[best_leg:], steps - best_gain

    # ---- control ---------------------------------------------------------------------------

    def _best_move(self, field_, target, x, z, cells):
        free = self.env.free
        end = self.env.episode.end
        best = (_INF, 8)
        for d in range(8):
            path = walk(free, x, z, d, cells)
            if target in path:
                return -1.0, d
            if end in path:
                continue
            lx, lz = path[-1] if path else (x, z)
            best = min(best, (field_[lz, lx], d))
        return best

    def _best_flash(self, field_, target, x, z):
        free = self.env.free
        best = (_INF, None)
        for d in range(8):
            lx, lz = flash_landing(free, x, z, d)
            if (lx, lz) == self.env.episode.end and (lx, lz) != target:
                continue
            cost = -1.0 if (lx, lz) == target else field_[lz, lx]
            best = min(best, (cost, d), key=lambda c: c[0])
        return best

    def _flash_now(self, field_, target, x, z, cells) -> int | None:
        """The direction to cast in now, or None: the cast must save flash_min_gain moves over the
        best move and no cast along the next look_ahead steps of the walk may save more."""
        move_cost, _ = self._best_move(field_, target, x, z, cells)
        if move_cost < 0:
            return None
        flash_cost, d = self._best_flash(field_, target, x, z)
        gain = move_cost - flash_cost
        if d is None or gain < self.flash_min_gain:
            return None
        cx, cz, walked = x, z, 0
        for _ in range(self.look_ahead):
            cost, md = self._best_move(field_, target, cx, cz, 1)
            if cost < 0:
                break
            cx, cz = walk(self.env.free, cx, cz, md, 1)[-1]
            walked += 1
            later_flash, _ = self._best_flash(field_, target, cx, cz)
            if walked + later_flash < flash_cost:
                return None  # walking on and casting later gets there sooner
        return d

    def run(self, usr_conf: dict | None = None, seed: int | None = None) -> PlannerResultV2:
        env = self.env
        env.reset(usr_conf, seed)
        e = env.episode
        self.points, self.fields = self._fields()
        targets, estimate = self._route(e.start, e.max_step, True)
        planned = [f"chest {t[1] + 1}" if isinstance(t, tuple) else t for t in targets]
        trajectory, jumps, actions = [env.hero], [], []
        counts = (0, 0)
        terminated = truncated = False
        step_no = -1
        extra = env.extra_info
        while not (terminated or truncated):
            while targets[0] != "end" and not self._live(targets[0]):
                targets.pop(0)
            target_key = targets[0]
            target = self.points[target_key]
            field_ = self.fields[target_key]
            x, z = env.hero
            cells = env.buff_step_length if env.buff_steps_left > 0 else env.step_length
            act = None
            if env.talent_ready:
                d = self._flash_now(field_, target, x, z, cells)
                if d is not None:
                    act = 8 + d
            if act is None:
                act = self._best_move(field_, target, x, z, cells)[1]
                act = 0 if act >= 8 else act
            step_no, _, terminated, truncated, extra = env.step(act)
            actions.append(act)
            trajectory.append(env.hero)
            if env.last_jump is not None:
                jumps.append(env.last_jump)
            game = extra["game_info"]
            now = (game["treasure_collected_count"], game["buff_count"])
            if now != counts and not (terminated or truncated):
                counts = now
                targets, _ = self._route(env.hero, e.max_step - env.steps, "buff" in targets and env.buff_available)
        game = extra["game_info"]
        return PlannerResultV2(
            total_score=float(game["total_score"]), step_no=step_no, steps=env.steps,
            chests=int(game["treasure_collected_count"]), won=terminated, buff_count=int(game["buff_count"]),
            talent_count=int(game["talent_count"]), planned_route=planned, estimated_steps=float(estimate),
            trajectory=trajectory, jumps=jumps, actions=actions,
        )

    def _live(self, key) -> bool:
        if key == "buff":
            return self.env.buff_available
        return not self.env.chests_taken[key[1]]


def run_planner_v2(env: RealmEnvV2, usr_conf: dict | None = None, seed: int | None = None, **options) -> PlannerResultV2:
    """Play one episode of `env` (usr_conf and seed as for `env.reset`) with the planner."""
    return PlannerV2(env, **options).run(usr_conf, seed)


def planner_score_v2(usr_conf: dict | None = None, seed: int | None = None, *, map_file=None, obstacles_file=None,
                     map_seed: int = 0, map_name: str | None = None, **env_options) -> float:
    """The planner's total_score on the v2 episode of (map, usr_conf, seed), the same episode an
    env built with the same arguments plays after `reset(usr_conf, seed)`."""
    from realm import make_env

    env = make_env(map_file, map_seed=map_seed, protocol=RealmEnvV2.PROTOCOL, obstacles_file=obstacles_file,
                   map_name=map_name, **env_options)
    return run_planner_v2(env, usr_conf, seed).total_score


def main(argv: list[str] | None = None) -> int:
    from realm import make_env

    parser = argparse.ArgumentParser(prog="python -m realm.back_to_the_realm_v2.reference", description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0, help="first episode seed; episode k uses seed + k")
    parser.add_argument("--map-seed", type=int, default=0)
    parser.add_argument("--map-name", default=None)
    parser.add_argument("--map-file")
    parser.add_argument("--obstacles-file")
    args = parser.parse_args(argv)
    env = make_env(args.map_file, map_seed=args.map_seed, protocol=RealmEnvV2.PROTOCOL,
                   obstacles_file=args.obstacles_file, map_name=args.map_name)
    t0 = time.perf_counter()
    results = [run_planner_v2(env, None, seed=args.seed + k) for k in range(args.episodes)]
    scores = np.array([r.total_score for r in results])
    print(f"map {env.map.name}, {args.episodes} episodes of its default usr_conf ({time.perf_counter() - t0:.1f} s)")
    print(f"win rate {np.mean([r.won for r in results]):.2f}  chests {np.mean([r.chests for r in results]):.2f}  "
          f"talents {np.mean([r.talent_count for r in results]):.2f}  buffs {np.mean([r.buff_count for r in results]):.2f}  "
          f"mean steps {np.mean([r.steps for r in results]):.1f}")
    print(f"mean score {scores.mean():.2f} ± {scores.std():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
