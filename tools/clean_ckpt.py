"""Prune a checkpoint directory to the newest K checkpoints (and the best one, if asked).

    python tools/clean_ckpt.py runs/default --keep 3 --keep-best          # dry run: lists deletions
    python tools/clean_ckpt.py runs/default/ckpt/back_to_the_realm_ppo --keep 3 --apply

DIR is a checkpoint directory or a run directory (its ckpt/<app>_<algo>/ directories are
pruned). The rule is the training system's own (workflow.checkpoints.ckpt_files), so pruning by hand and
pruning while training agree. "Best" uses the run's own evaluations ([eval], evaluations.json),
else the scores tools/evaluate.py recorded beside the checkpoints, else the run's metrics.csv.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.run import EXIT_BAD_INPUT
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.evaluations import EVALUATIONS_FILE, read_evaluations
from workflow.metrics_keys import EPISODE_SCORE_KEY


def known_scores(ckpt_dir: Path, ids: list[int], score_key: str) -> tuple[dict[int, float], str]:
    """Scores per checkpoint id and where they came from ("" when none are known): the run's own
    evaluations first ([eval]), then tools/evaluate.py's, then the training episodes'."""
    evaluations = read_evaluations(ckpt_dir)
    if evaluations is not None and evaluations.scores():
        return evaluations.scores(), f"{ckpt_dir / EVALUATIONS_FILE} (the run's evaluations)"
    scores = ckpt_files.read_scores_sidecar(ckpt_dir)
    if scores:
        return scores, str(ckpt_dir / ckpt_files.SCORES_SIDECAR)
    run_dir = ckpt_files.run_dir_of(ckpt_dir)
    metrics = run_dir / "metrics.csv" if run_dir else None
    if metrics and metrics.is_file():
        scores = ckpt_files.scores_from_metrics(metrics, ids, score_key)
        if scores:
            return scores, f"{metrics} ({score_key})"
    return {}, ""


def clean_dir(ckpt_dir: Path, keep: int, keep_best: bool, apply: bool, score_key: str) -> int:
    """Prune one directory; returns how many checkpoints were (or would be) deleted."""
    checkpoints = ckpt_files.list_checkpoints(ckpt_dir)
    scores, source = known_scores(ckpt_dir, [c.id for c in checkpoints], score_key) if keep_best else ({}, "")
    if keep_best and not scores:
        print(f"{ckpt_dir}: no scores known (no {ckpt_files.SCORES_SIDECAR}, no '{score_key}' in metrics.csv); "
              f"keeping the newest {keep} only")
    kept = ckpt_files.choose_kept([c.id for c in checkpoints], keep, scores, keep_best)
    doomed = [c for c in checkpoints if c.id not in kept]
    best = max((i for i in kept if i in scores), key=lambda i: (scores[i], i), default=None)
    print(f"{ckpt_dir}: {len(checkpoints)} checkpoints, keeping {sorted(kept)}"
          + (f" (best {best}: {scores[best]:.1f} from {source})" if best is not None else ""))
    verb = "deleting" if apply else "would delete"
    for ckpt in doomed:
        print(f"  {verb} {ckpt.path}")
    for ckpt in ckpt_files.cut_off_checkpoints(ckpt_dir):  # a live learner's write in progress looks the same
        print(f"  leaving {ckpt.path}: its write was cut off or is under way (not counted among the {keep})")
    if apply:
        ckpt_files.prune(ckpt_dir, keep, scores, keep_best, apply=True)
    elif doomed:
        print("  (dry run: pass --apply to delete)")
    return len(doomed)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", type=Path, help="checkpoint directory or run directory")
    parser.add_argument("--keep", type=int, required=True, help="newest checkpoints to keep")
    parser.add_argument("--keep-best", action="store_true", help="also keep the best-scoring checkpoint")
    parser.add_argument("--apply", action="store_true", help="delete for real (default: dry run)")
    parser.add_argument("--score-key", default=EPISODE_SCORE_KEY,
                        help=f"metrics.csv key that scores a checkpoint (default {EPISODE_SCORE_KEY})")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.keep < 0:
        print(f"error: --keep must be >= 0, got {args.keep}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not args.dir.is_dir():
        print(f"error: directory not found: {args.dir}", file=sys.stderr)
        return EXIT_BAD_INPUT
    dirs = ckpt_files.checkpoint_dirs(args.dir)
    if not dirs:
        print(f"error: no checkpoints (model.ckpt-N.pkl) in {args.dir} or its ckpt/*/", file=sys.stderr)
        return EXIT_BAD_INPUT
    for ckpt_dir in dirs:
        clean_dir(ckpt_dir, args.keep, args.keep_best, args.apply, args.score_key)
    return 0


if __name__ == "__main__":
    sys.exit(main())
