"""Simulator throughput: reset + steps with full protocol observations, one process.

Runs the official map (when its files are found) and a generated map with seeded random legal
actions and prints steps/s per map, then the overall figure on the last line:
`steps_per_second: N`.

    python tools/back_to_the_realm/bench_env.py [--steps 30000] [--map-file F --positions-file P] [--map-seed 0]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

from realm import make_env  # noqa: E402

DEFAULT_MAP_DIR = ROOT.parent / "shared" / "realm"


def run(env, steps: int, seed: int) -> tuple[int, float]:
    """Play `steps` steps (resetting at episode ends); returns (steps, seconds)."""
    draws = np.random.default_rng(seed).integers(0, 16, size=steps).tolist()
    start = time.perf_counter()
    obs = env.reset(seed=seed)
    for act in draws:
        if act >= 8 and not obs.legal_act[1]:
            act -= 8  # keep actions legal: no flash while it cools down
        _, obs, _, terminated, truncated, _ = env.step(act)
        if terminated or truncated:
            obs = env.reset()
    return steps, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30000, help="steps per map")
    parser.add_argument("--map-file", type=Path, default=None)
    parser.add_argument("--positions-file", type=Path, default=None)
    parser.add_argument("--map-seed", type=int, default=0, help="seed of the generated map")
    parser.add_argument("--seed", type=int, default=0, help="episode and action seed")
    args = parser.parse_args(argv)

    maps = []
    map_file, positions_file = args.map_file, args.positions_file
    if map_file is None and (DEFAULT_MAP_DIR / "map_1.json").is_file():
        map_file, positions_file = DEFAULT_MAP_DIR / "map_1.json", DEFAULT_MAP_DIR / "position_pool.json"
    if map_file is not None:
        maps.append((f"official {Path(map_file).name}", make_env(map_file, positions_file, seed=args.seed)))
    else:
        print("official map: not found (pass --map-file/--positions-file); skipped")
    maps.append((f"generated seed {args.map_seed}", make_env(map_seed=args.map_seed, seed=args.seed)))

    total_steps, total_seconds = 0, 0.0
    for name, env in maps:
        steps, seconds = run(env, args.steps, args.seed)
        total_steps += steps
        total_seconds += seconds
        print(f"{name}: {steps / seconds:,.0f} steps/s ({steps} steps in {seconds:.2f} s)")
    print(f"steps_per_second: {total_steps / total_seconds:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
