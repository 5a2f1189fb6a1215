"""Score runs against their game's targets (games.base.Game.scorecard): each run's newest
checkpoint on every preset of the targets, each way of the information switch, beside the
reference on the same episodes; per target the value of each run, the median and the worst.

    python tools/scorecard.py --runs runs/seed-1 runs/seed-2 runs/seed-3 --config conf/gorge_chase.toml \\
        --maps-dir ../shared/kaiwu_gorge/map/grids --workers 2

Writes scorecard.md and scorecard.json to --out (default out/scorecard) and keeps each policy's
scores under <out>/cache, so a run scored once is not played again (the cache knows the checkpoint
file, the env and the episodes, not the code: --no-cache after changing the simulator or the
agent's code); prints the tables, and the
count of targets met last. Bad input (no such run, a preset that needs --maps-dir) exits with code 2.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from cli.run import run_tool
from evaluation.scorecard import Scorer, markdown, score_card, write_card
from workflow.config import REPO_ROOT


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, nargs="+", required=True,
                        help="run directories (their newest checkpoint) or checkpoint files, one column each")
    parser.add_argument("--config", type=Path, default=None,
                        help="the config every run is scored with (its [env] and the agent's sections); default: "
                             "each run's own, which must then agree on [env]")
    parser.add_argument("--maps-dir", type=Path, default=None,
                        help="the folder of the game's official map files, for the presets that play them")
    parser.add_argument("--seed", type=int, default=0, help="seed of each preset's first episode (then +1 each)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "out" / "scorecard", help="output directory")
    parser.add_argument("--no-cache", action="store_true", help="play everything again (the cache is rewritten)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run_tool(scorecard, parse_args(argv))


def scorecard(args: argparse.Namespace) -> int:
    start = time.monotonic()
    scorer = Scorer(args.runs, config=args.config, maps_dir=args.maps_dir, seed=args.seed,
                    workers=args.workers if args.workers is not None else os.cpu_count() or 1,
                    cache=args.out / "cache", replay=args.no_cache, report=lambda line: print(line, flush=True))
    card = score_card(scorer, scorer.game.scorecard, scorer.game.scorecard_gap)
    for path in write_card(card, args.out):
        print(f"wrote {path}")
    print(f"{time.monotonic() - start:.0f} s")
    print(markdown(card))
    return 0


if __name__ == "__main__":
    sys.exit(main())
