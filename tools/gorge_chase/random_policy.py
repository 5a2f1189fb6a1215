"""A random legal policy on a gorge_chase preset's evaluation episodes: the floor beside a
checkpoint and the reference on exactly the episodes tools/evaluate.py draws (the preset's maps
in turn, seeds S, S+1, ...; games.gorge_chase.GorgeChase.episodes).

    python tools/gorge_chase/random_policy.py --preset gorge-generated-heldout --episodes 10
    python tools/gorge_chase/random_policy.py --preset gorge-heldout --maps ../shared/kaiwu_gorge/map/grids
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from cli.run import run_tool
from evaluation.gorge_chase import play
from games.gorge_chase import GAME
from realm import make_env
from realm.gorge_chase.presets import gorge_preset


def random_records(preset: str, episodes: int, seed: int = 0, maps: str | None = None) -> list:
    """GorgeEpisode records of a uniformly random legal action (legal_action) per step."""
    env = make_env(protocol="gorge", maps_folder=maps, seed=seed)
    rng = np.random.default_rng(seed)

    def choose(env_obs) -> int:
        return int(rng.choice(np.flatnonzero(env_obs["observation"]["legal_action"])))

    return [play(env, e.usr_conf, e.seed, choose) for e in GAME.episodes(env, gorge_preset(preset), episodes, seed)]


def summary(records: list) -> dict:
    return {"episodes": len(records), "score": float(np.mean([r.total_score for r in records])),
            "survival_rate": float(np.mean([r.won for r in records])), "steps": float(np.mean([r.steps for r in records])),
            "chests": float(np.mean([r.chests for r in records])), "flashes": float(np.mean([r.flash_count for r in records]))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="gorge-generated-heldout")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode (and of the draws)")
    parser.add_argument("--maps", default=None, help="a folder of official maps (default: the generated maps)")

    def action(args) -> int:
        print(json.dumps(summary(random_records(args.preset, args.episodes, args.seed, args.maps)), indent=1))
        return 0
    return run_tool(action, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
