"""Evaluate checkpoints (or the route planner) on a preset, with the planner's score on the same
episodes for scale.

    python tools/evaluate.py --ckpt runs/default/ckpt/back_to_the_realm_ppo/model.ckpt-1000.pkl
    python tools/evaluate.py --ckpt runs/default --every 4 --preset random-8 --workers 2
    python tools/evaluate.py --ckpt runs/default --best     # the checkpoint the run's evaluator scored best
    python tools/evaluate.py --agent planner --preset fixed-13 \\
        --map-file ../shared/realm/map_1.json --positions-file ../shared/realm/position_pool.json

Episodes are drawn once (random chests resolved, seeds S, S+1, ...) and every policy plays
exactly those, so "ratio" (agent mean / planner mean) compares like with like. Writes
episodes.csv, summary.csv and results.json to --out; for a directory of checkpoints also
score_vs_step.png and the scores beside the checkpoints (for clean_ckpt.py --keep-best).
Bad input (missing file, unknown preset, bad JSON, invalid usr_conf) exits with code 2.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from cli.flags import (add_best_arg, add_episode_args, add_map_args, add_package_arg, add_policy_args, add_record_arg,
                       eval_request)
from cli.run import run_tool
from evaluation.inputs import check_ray_address, map_label
from evaluation.session import Session, open_session
from evaluation.summary import format_table, summarize_all, write_evaluation
from workflow.checkpoints import ckpt_files
from workflow.config import REPO_ROOT


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", type=Path, help="checkpoint file, checkpoint directory or run directory")
    parser.add_argument("--agent", choices=("ckpt", "planner"), default="ckpt",
                        help="evaluate the checkpoint(s) (with the planner beside them) or the planner alone")
    add_episode_args(parser)
    add_map_args(parser)
    add_policy_args(parser)
    add_package_arg(parser)
    parser.add_argument("--episodes", type=int, default=30, help="episodes per policy (default 30)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    parser.add_argument("--ray", default=None, metavar="ADDRESS",
                        help="spread the episodes over a Ray cluster: local, auto or HOST:PORT (--workers caps the "
                             "actors; default one per CPU of the cluster). Needs requirements-ray.txt")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode (then +1 each)")
    parser.add_argument("--every", type=int, default=1, help="with a directory: every k-th checkpoint, newest first")
    add_best_arg(parser)
    parser.add_argument("--extra-info", default=None, metavar="VALUES",
                        help="score the checkpoints with the env handing the package each of these, comma-separated, "
                             "one row each on the same episodes: gorge_chase's [env] gorge_extra_info, full (extra_info "
                             "with frame_state) | withheld (without), e.g. full,withheld; the planner plays once "
                             "(it reads the true state). Default: the config's [env] value alone")
    parser.add_argument("--no-planner", action="store_true", help="skip the planner's reference episodes")
    parser.add_argument("--out", type=Path, help="output directory (default: <run>/eval/<preset>, else out/eval/)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_record_arg(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run_tool(evaluate, parse_args(argv))


def evaluate(args: argparse.Namespace) -> int:
    """Checkpoints (or the reference alone) on the episodes of a preset or --usr-conf, in the game
    the evaluated packages play (evaluation.session): the same mechanism for every game."""
    check_ray_address(args.ray)
    session = open_session(eval_request(args), report=say)
    env, episodes = session.episodes(args.episodes, args.seed)
    line = session.game.maps_line(env, [episode.usr_conf for episode in episodes])
    if line:
        say(line)
    reference = not args.no_planner
    keys = session.keys(reference)
    workers = args.workers if args.workers is not None else (None if args.ray else os.cpu_count() or 1)
    start = time.monotonic()
    results = session.play(episodes, reference=reference, workers=workers, ray=args.ray,
                           on_done=progress_bar(len(keys) * len(episodes), args.quiet))
    seconds = time.monotonic() - start
    summaries = summarize_all(keys, results)
    paths = write_evaluation(args.out or default_out(session), session, summaries, results, args.episodes, args.seed,
                             seconds)
    platform, maps = session.platform, map_label(session.env_kwargs)
    print(f"{session.label} ({session.game.name}, {platform.title or platform.name}) on {maps}: "
          f"{args.episodes} episodes per policy, seeds {args.seed}..{args.seed + args.episodes - 1}, {seconds:.1f} s")
    print(format_table(summaries))
    for p in paths:
        print(f"wrote {p}")
    if args.record is not None:
        recorded = session.record(args.record, episodes, results)
        print(f"wrote {len(recorded)} recorded episodes to {args.record} (python tools/viewer.py --folder {args.record})")
    return 0


def say(line: str) -> None:
    print(line, flush=True)


def default_out(session: Session) -> Path:
    """<run>/eval/<label> for a run's checkpoints, else out/eval/<label> (planner-<label> for the reference alone)."""
    if session.ckpts:
        run_dir = ckpt_files.run_dir_of(session.ckpts[0].parent)
        if run_dir is not None:
            return run_dir / "eval" / session.label
    return REPO_ROOT / "out" / "eval" / (f"planner-{session.label}" if session.request.agent == "planner"
                                         else session.label)


def progress_bar(total: int, quiet: bool):
    if quiet:
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, desc="episodes", unit="ep", file=sys.stderr, dynamic_ncols=True)

    def on_done(key, index, record):
        bar.update(1)
        if bar.n >= total:
            bar.close()

    return on_done


if __name__ == "__main__":
    sys.exit(main())
