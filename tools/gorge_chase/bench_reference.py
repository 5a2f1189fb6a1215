"""How strong and how fast the gorge_chase full-information reference policy is
(realm/gorge_chase/reference.py), beside a random legal policy, on the official defaults
(10 chests, 2 buffs, monster 2 at step 300, speed-up at 500, 1000 steps).

    python tools/gorge_chase/bench_reference.py [--map-dir DIR] [--episodes 5] [--sets open,generated]

Map sets: "open" = official maps 9 and 10 (needs --map-dir, default ../shared/kaiwu_gorge/map/grids
when it exists), "generated" = generated maps 11-20 (held out from the generated training ids).
Episode k of a map is seeded with k. Per set and policy: survival rate (reached max_step
uncaught), mean steps, chests and score (1.5 per step + 100 per chest), and the reference's
mean decision time per step (policy time only, env time excluded; the first episodes on a map
also fill the map's distance rows, `--warm` times a second pass). The last line is
`reference_survival: X` over every episode played.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from realm import make_env
from realm.gorge_chase.reference import RandomLegalPolicy, ReferencePolicy
from realm.gorge_chase.usr_conf import default_usr_conf

DEFAULT_MAP_DIR = Path(__file__).resolve().parents[3] / "shared" / "kaiwu_gorge" / "map" / "grids"
SETS = {"open": (9, 10), "generated": tuple(range(11, 21))}


def play(env, policy, conf, seed: int) -> tuple[dict, float, int]:
    """One episode: (result, seconds spent in the policy, steps)."""
    obs = env.reset(conf, seed=seed)
    spent = 0.0
    while not (obs["terminated"] or obs["truncated"]):
        t = time.perf_counter()
        act = policy.act(env)
        spent += time.perf_counter() - t
        _, obs = env.step(act)
    info = obs["observation"]["env_info"]
    result = {"steps": info["step_no"], "chests": info["treasures_collected"], "score": info["total_score"],
              "survived": bool(obs["truncated"] and not env.caught)}
    return result, spent, info["step_no"]


def line(name: str, results: list, spent: float, steps: int) -> str:
    n = len(results)
    text = (f"{name:<10} episodes {n:>3}  survival {sum(r['survived'] for r in results) / n:5.2f}  "
            f"steps {sum(r['steps'] for r in results) / n:6.1f}  chests {sum(r['chests'] for r in results) / n:5.2f}  "
            f"score {sum(r['score'] for r in results) / n:7.1f}")
    if spent:
        text += f"  {spent / steps * 1000:.2f} ms/step"
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map-dir", default=str(DEFAULT_MAP_DIR))
    parser.add_argument("--sets", default="open,generated")
    parser.add_argument("--episodes", type=int, default=5, help="episodes per map")
    parser.add_argument("--maps", default=None, help="map ids instead of the sets (with --set-kind)")
    parser.add_argument("--verbose", action="store_true", help="one line per episode")
    parser.add_argument("--warm", action="store_true",
                        help="play the reference's episodes of each map twice and time the second pass (distance rows cached)")
    args = parser.parse_args(argv)
    conf = default_usr_conf()
    survived = played = 0
    for set_name in args.sets.split(","):
        ids = [int(i) for i in args.maps.split(",")] if args.maps else SETS[set_name]
        map_dir = args.map_dir if set_name == "open" else None
        if map_dir is not None and not Path(map_dir).is_dir():
            print(f"{set_name}: no map folder {map_dir}, skipped")
            continue
        for name, make in (("random", RandomLegalPolicy), ("reference", ReferencePolicy)):
            results, spent, steps = [], 0.0, 0
            for map_id in ids:
                env = make_env(protocol="gorge", maps_folder=map_dir, seed=0)
                conf["env_conf"]["map"] = [map_id]
                if args.warm and name == "reference":
                    for k in range(args.episodes):
                        play(env, make(seed=k), conf, seed=k)
                for k in range(args.episodes):
                    policy = make(seed=k)
                    result, s, n = play(env, policy, conf, seed=k)
                    results.append(result)
                    spent += s
                    steps += n
                    if args.verbose:
                        print(f"  {name} map {map_id} seed {k}: {result}", flush=True)
                    if name == "reference":
                        survived += result["survived"]
                        played += 1
            print(f"{set_name:<9} maps {','.join(map(str, ids))}: " + line(name, results, spent if name == "reference" else 0, steps),
                  flush=True)
    print(f"reference_survival: {survived / max(played, 1):.2f}")


if __name__ == "__main__":
    main()
