"""Speed of the gorge_chase simulator (realm/gorge_chase) on one core: env.reset + env.step time
only (the policy's time is not counted). The hero flees the nearest monster with a cheap rule
on the observation (a random move among those that do not step towards it), monster 2 comes at
step 11, so both monsters chase through the episode as they do against a trained agent.

    python tools/gorge_chase/bench_env.py [--map-dir DIR] [--steps 20000] [--warm | --fill] [--cpu]

Prints per-map figures; the last line is `steps_per_second: N` (all maps together). The first
pass on a map also grows its shared distance rows (BFS from each new hero cell); `--warm` runs
one unmeasured pass first; `--fill` completes every row first (a few seconds per map, printed), so
the figure is the steady state of a long training run. `--cpu` counts CPU time rather than wall
time (on a machine shared with other work; the per-call clock costs a little more).
"""
from __future__ import annotations

import argparse
import random
import time

from realm import make_env
from realm.gorge_chase.constants import DIRECTIONS


def flee(obs, rnd: random.Random) -> int:
    fs = obs["observation"]["frame_state"]
    hero = fs["heroes"]["pos"]
    seen = [m["pos"] for m in fs["monsters"] if m["is_in_view"]]
    if not seen:
        return rnd.randrange(8)
    near = min(seen, key=lambda p: abs(p["x"] - hero["x"]) + abs(p["z"] - hero["z"]))
    away = [a for a, (dx, dz) in enumerate(DIRECTIONS) if dx * (near["x"] - hero["x"]) + dz * (near["z"] - hero["z"]) <= 0]
    if obs["observation"]["legal_action"][8] and rnd.random() < 0.05:
        return 8 + rnd.choice(away)
    return rnd.choice(away)


def run(env, conf, steps: int, rnd: random.Random, clock=time.perf_counter) -> tuple[float, int, int]:
    spent = 0.0
    t = clock()
    obs = env.reset(conf)
    spent += clock() - t
    done_steps = episodes = 0
    while done_steps < steps:
        act = flee(obs, rnd)
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
    parser.add_argument("--map-dir", default=None, help="official maps (gorge_chase_map_<id>.json or map_<id>.txt)")
    parser.add_argument("--maps", default="1,2,3,4,5,6,7,8,9,10")
    parser.add_argument("--steps", type=int, default=20000, help="steps per map")
    parser.add_argument("--warm", action="store_true", help="grow the distance rows in an unmeasured pass first")
    parser.add_argument("--fill", action="store_true", help="complete every distance row first (timed apart)")
    parser.add_argument("--cpu", action="store_true",
                        help="count the process's CPU time instead of wall time (a machine shared with other work)")
    args = parser.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    total_time = total_steps = 0
    for map_id in [int(m) for m in args.maps.split(",")]:
        env = make_env(protocol="gorge", maps_folder=args.map_dir, seed=map_id)
        conf = {"env_conf": {"map": [map_id], "monster_interval": 11, "monster_speedup": 500}}
        if args.fill:
            t = time.perf_counter()
            env.maps.get(map_id).fill_distances()
            print(f"map {map_id:>2}: all distance rows in {time.perf_counter() - t:.1f} s")
        if args.warm:
            run(env, conf, args.steps, random.Random(map_id), clock)
        spent, steps, episodes = run(env, conf, args.steps, random.Random(map_id + 100), clock)
        total_time += spent
        total_steps += steps
        print(f"map {map_id:>2} ({env.map.name}): {steps / spent:9.0f} steps/s  {episodes} episodes  "
              f"{steps / max(episodes, 1):.0f} steps/episode  distance rows {env.map.cached_rows()}")
    print(f"steps_per_second: {total_steps / total_time:.0f}")


if __name__ == "__main__":
    main()
