"""Speed of the robot_vacuum simulator (realm/robot_vacuum) on one core with a uniformly random
policy: env.reset + env.step time only (the policy's draw is not counted), the official default
episode (4 official robots, 4 chargers, battery 200, 1000 steps) on each map in turn.

    python tools/robot_vacuum/bench_env.py [--map-dir DIR] [--maps 1,2,3] [--steps 20000] [--cpu]

Maps are generated (or loaded) before the clock starts. Prints per-map figures; the last line is
`steps_per_second: N` (all maps together). `--cpu` counts CPU time rather than wall time (on a
machine shared with other work).
"""
from __future__ import annotations

import argparse
import random
import time

from realm import make_env


def run(env, conf, steps: int, rnd: random.Random, clock=time.perf_counter) -> tuple[float, int, int]:
    spent = 0.0
    t = clock()
    obs = env.reset(conf)
    spent += clock() - t
    done_steps = episodes = 0
    while done_steps < steps:
        act = rnd.randrange(8)
        t = clock()
        _, obs = env.step(act)
        if obs["terminated"] or obs["truncated"]:
            obs = env.reset(conf)
            episodes += 1
        spent += clock() - t
        done_steps += 1
    return spent, done_steps, episodes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map-dir", default=None, help="official maps (robot_vacuum_map_<id>.json or map_<id>.txt)")
    parser.add_argument("--maps", default="1,2,3,4,5")
    parser.add_argument("--steps", type=int, default=20000, help="steps per map")
    parser.add_argument("--cpu", action="store_true",
                        help="count the process's CPU time instead of wall time (a machine shared with other work)")
    args = parser.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    total_time = total_steps = 0
    for map_id in [int(m) for m in args.maps.split(",")]:
        env = make_env(protocol="vacuum", maps_folder=args.map_dir, seed=map_id)
        conf = {"env_conf": {"map": [map_id]}}
        env.maps.get(map_id)  # generate or load it before the clock starts
        spent, steps, episodes = run(env, conf, args.steps, random.Random(map_id), clock)
        total_time += spent
        total_steps += steps
        print(f"map {map_id:>2} ({env.map.name}): {steps / spent:9.0f} steps/s  {episodes} episodes  "
              f"{steps / max(episodes, 1):.0f} steps/episode")
    print(f"steps_per_second: {total_steps / total_time:.0f}")


if __name__ == "__main__":
    main()
