"""What the project's gorge_chase features cost per env step, against the simulator's own step in
the same run (a ratio that holds on a machine shared with other work, where absolute times do not).

    python tools/gorge_chase/bench_features.py [--maps 1,2,3] [--steps 3000] [--map-dir DIR]
    python tools/gorge_chase/bench_features.py --instructions [--steps 500]
    python tools/gorge_chase/bench_features.py --lookahead-guard   # with training's look-ahead mask
    python tools/gorge_chase/bench_features.py --guard-in-c-against-python   # the guard's C twin's gain

Plays episodes of the hosted simulator (the 15.0.1 protocol the aisrv steps; monster 2 at step 11,
the speed-up at 500) with tools/gorge_chase/bench_env.py's fleeing rule on the raw observation, and
after every reset and step runs what an aisrv runs for the features: the episode's memory
(GorgeView with [features_gorge]'s default global_info), observation_process (the map tensor,
the state vector, the legal mask) and the reward's view and shaping. --lookahead-guard adds the
look-ahead to the mask, as `[features_gorge] lookahead_guard_training = true` trains. Each map gets an unmeasured
pass of the env first, so the simulator's distance rows are grown as in a long training run.

Prints per map the CPU time per step of the env and of the features; the last line is
`feature_cost_in_env_steps: R`, the features' time over the env step's.

--guard-in-c-against-python plays the same seeded steps twice with the look-ahead in the mask:
its searches in C (feature/gorge_chase/lookahead.c, as training runs them where a C compiler is
at hand) and in Python (the definition, as an exported package runs them); each pass's masks are
checked equal step by step. The last line is `python_guard_over_c: R`, the features' CPU time
with the Python guard over the C's.

--instructions counts instead, with valgrind's callgrind (independent of the machine's load):
the same seeded steps run three times under valgrind (the unmeasured pass alone, then with the
env's steps, then with the env's steps and the features); the differences give instructions per
step. The last line is
`feature_instructions_per_step: N`.
"""
from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from bench_env import flee  # tools/gorge_chase/bench_env.py, beside this script
from feature.gorge_chase.observation import FeatureConfig, GorgeView, observation_process
from feature.gorge_chase.reward import RewardConfig, reward_shaping, step_view
from realm import make_env

EPISODE = {"monster_interval": 11, "monster_speedup": 500, "max_step": 1000}


class Features:
    """What an aisrv computes from each env_obs of one env: the memory, the ObsData, the reward."""

    def __init__(self, lookahead_guard: bool = False):
        self.weights = RewardConfig()
        self.options = {**FeatureConfig().view_options(), "lookahead_guard": lookahead_guard}
        self.view = self.prev = None

    def reset(self, env_obs) -> None:
        self.view = GorgeView(**self.options)
        memory, _ = self.view.reset(env_obs)
        observation_process(memory)
        self.prev = step_view(memory)

    def step(self, env_obs, action: int) -> None:
        memory, _ = self.view.step(env_obs)
        observation_process(memory)
        cur = step_view(memory, env_obs["terminated"], env_obs["truncated"])
        reward_shaping(self.prev, cur, action, self.weights)
        self.prev = cur


def play(env, conf: dict, steps: int, rnd: random.Random, features: Features | None,
         clock=time.process_time) -> tuple[float, float]:
    """`steps` steps (new episodes as they end): (env seconds, feature seconds)."""
    env_s = feature_s = 0.0
    t = clock()
    obs = env.reset(conf)
    env_s += clock() - t
    if features:
        t = clock()
        features.reset(obs)
        feature_s += clock() - t
    for _ in range(steps):
        act = flee(obs, rnd)
        t = clock()
        _, obs = env.step(act)
        env_s += clock() - t
        if features:
            t = clock()
            features.step(obs, act)
            feature_s += clock() - t
        if obs["terminated"] or obs["truncated"]:
            t = clock()
            obs = env.reset(conf)
            env_s += clock() - t
            if features:
                t = clock()
                features.reset(obs)
                feature_s += clock() - t
    return env_s, feature_s


def timed(args) -> None:
    env_total = feature_total = 0.0
    for map_id in args.maps:
        env = make_env(protocol="gorge", maps_folder=args.map_dir, seed=map_id)
        conf = {"env_conf": {"map": [map_id], **EPISODE}}
        play(env, conf, args.steps, random.Random(map_id), None)  # grows the distance rows
        env_s, feature_s = play(env, conf, args.steps, random.Random(map_id + 100), Features(args.lookahead_guard))
        env_total, feature_total = env_total + env_s, feature_total + feature_s
        print(f"map {map_id:>2}: env {env_s / args.steps * 1e6:7.1f} us/step, features "
              f"{feature_s / args.steps * 1e6:7.1f} us/step ({feature_s / env_s:.2f} x)", flush=True)
    steps = args.steps * len(args.maps)
    print(f"all maps: env {env_total / steps * 1e6:.1f} us/step, features {feature_total / steps * 1e6:.1f} us/step")
    print(f"feature_cost_in_env_steps: {feature_total / env_total:.2f}")


def guard_in_c_against_python(args) -> None:
    """The features with the look-ahead's searches in C, then in Python, on the same steps."""
    from feature.gorge_chase import layout, lookahead

    compiled = lookahead.guard
    masks: dict[str, list] = {}
    totals: dict[str, float] = {}
    for way in ("C", "Python"):
        kept = masks[way] = []

        def recorded(m, moves, flashes, kept=kept):
            kept.append(lookahead.guarded(m, moves, flashes))
            return kept[-1]

        layout.guarded = recorded
        if way == "Python":  # the C's answer declined: guarded runs its Python definition
            lookahead.guard = lambda *a: None
        try:
            totals[way] = 0.0
            for map_id in args.maps:
                env = make_env(protocol="gorge", maps_folder=args.map_dir, seed=map_id)
                conf = {"env_conf": {"map": [map_id], **EPISODE}}
                play(env, conf, args.steps, random.Random(map_id), None)  # grows the distance rows
                totals[way] += play(env, conf, args.steps, random.Random(map_id + 100), Features(True))[1]
        finally:
            layout.guarded = lookahead.guarded
            lookahead.guard = compiled
        steps = args.steps * len(args.maps)
        print(f"guard in {way:<6}: features {totals[way] / steps * 1e6:8.1f} us/step ({len(kept)} guard calls)",
              flush=True)
    if masks["C"] != masks["Python"]:
        raise SystemExit("the C guard's masks differ from the Python's on the same steps")
    print(f"python_guard_over_c: {totals['Python'] / totals['C']:.2f}")


def replay(args) -> None:
    """One counted run (--replay MODE): the env's unmeasured pass, then the measured steps with
    nothing ("none"), the env alone ("env") or the env and the features ("features")."""
    for map_id in args.maps:
        env = make_env(protocol="gorge", maps_folder=args.map_dir, seed=map_id)
        conf = {"env_conf": {"map": [map_id], **EPISODE}}
        play(env, conf, args.steps, random.Random(map_id), None)  # grows the distance rows
        if args.replay != "none":
            play(env, conf, args.steps, random.Random(map_id + 100), Features(args.lookahead_guard) if args.replay == "features" else None)


def counted(args) -> None:
    """Runs `replay` under callgrind for each mode: instructions per step by difference."""
    counts = {}
    for mode in ("none", "env", "features"):
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--replay", mode, "--steps", str(args.steps), "--maps", ",".join(map(str, args.maps))]
        cmd += ["--lookahead-guard"] if args.lookahead_guard else []
        cmd += ["--map-dir", args.map_dir] if args.map_dir else []
        print(f"counting {mode} under callgrind ...", flush=True)
        result = subprocess.run(cmd, capture_output=True, text=True)
        match = re.search(r"Collected\s*:\s*(\d+)", result.stderr)
        if result.returncode != 0 or not match:
            raise SystemExit(f"valgrind failed (exit {result.returncode}):\n{result.stderr[-2000:]}")
        counts[mode] = int(match.group(1))
    steps = args.steps * len(args.maps)
    env = (counts["env"] - counts["none"]) / steps
    features = (counts["features"] - counts["env"]) / steps
    print(f"env: {env:,.0f} instructions per step; features: {features:,.0f} per step ({features / env:.2f} x)")
    print(f"feature_instructions_per_step: {features:.0f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map-dir", default=None, help="official maps (map_<id>.txt); default the generated maps")
    parser.add_argument("--maps", default="1,2,3", help="map ids, comma-separated")
    parser.add_argument("--steps", type=int, default=3000, help="measured steps per map")
    parser.add_argument("--instructions", action="store_true", help="count instructions with callgrind instead")
    parser.add_argument("--lookahead-guard", action="store_true",
                        help="the mask also narrowed by the look-ahead ([features_gorge] lookahead_guard_training)")
    parser.add_argument("--guard-in-c-against-python", action="store_true",
                        help="the features with the look-ahead in the mask, its searches in C then in Python")
    parser.add_argument("--replay", choices=("none", "env", "features"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        args.maps = [int(m) for m in args.maps.split(",")]
    except ValueError:
        parser.error(f"--maps must be comma-separated map ids, got {args.maps!r}")
    if args.steps < 1:
        parser.error(f"--steps must be >= 1, got {args.steps}")
    if args.map_dir is not None and not Path(args.map_dir).is_dir():
        parser.error(f"--map-dir {args.map_dir}: not a directory")
    if args.replay:
        replay(args)
    elif args.guard_in_c_against_python:
        guard_in_c_against_python(args)
    elif args.instructions:
        counted(args)
    else:
        timed(args)


if __name__ == "__main__":
    main()
