"""The learner's checkpoints: prune, and find the newest one that loads.

`<ckpt>/<app>_<algo>/model.ckpt-N...` (N = train step) are the files the package's
`save_model` writes; the training system's counters go beside them (workflow.host.trainee). Pruning
follows workflow.checkpoints.ckpt_files (the newest K, plus the best by the recent mean episode score), the
same rule as tools/clean_ckpt.py. When the run evaluates its checkpoints ([eval]), the best is the
best by evaluation (workflow.checkpoints.evaluations), always kept, and the checkpoint the
evaluator is playing is never pruned meanwhile. User `save_model` calls go to `<ckpt>/user/` and keep the
newest user_save_mode_max_count.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from loguru import logger

from agent.checkpoint_io import CheckpointError
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.evaluations import read_evaluations
from workflow.metrics_keys import EPISODE_SCORE_KEY


class CheckpointManager:
    def __init__(self, ckpt_dir: Path, keep: int, keep_best: bool, user_dir: Path, user_keep: int,
                 metrics_csv: Path | None = None, evaluated: bool = False):
        self.ckpt_dir = Path(ckpt_dir)
        self.user_dir = Path(user_dir)
        self.keep = keep
        self.keep_best = keep_best
        self.user_keep = user_keep
        self.evaluated = evaluated  # the best by the run's evaluations, not by the training episodes' scores
        self.pinned: int | None = None  # the checkpoint the evaluator plays now
        # Pruning touches only checkpoints this run wrote, or older than the one it resumed from (which
        # loaded): a stray file with a higher id that does not load never costs a good checkpoint.
        self.written: set[int] = set()
        self.resumed_from = -1
        ids = [c.id for c in ckpt_files.list_checkpoints(self.ckpt_dir)]
        # Scores of checkpoints from before a resume come from the run's metrics.
        self.scores: dict[int, float] = (ckpt_files.scores_from_metrics(metrics_csv, ids, EPISODE_SCORE_KEY)
                                         if metrics_csv is not None and keep_best and not evaluated else {})

    def saved(self, step: int, recent_score: float | None) -> list[int]:
        """Record checkpoint `step` (written by whoever saves) and prune; returns the pruned ids."""
        self.written.add(step)
        keep_best = self.keep_best
        if self.evaluated:
            found = read_evaluations(self.ckpt_dir)
            self.scores = found.scores() if found is not None else {}
            self.pinned = found.pending if found is not None else None
            keep_best = True
        elif recent_score is not None and np.isfinite(recent_score):
            self.scores[step] = float(recent_score)
        doomed = ckpt_files.prune(self.ckpt_dir, self.keep, self.scores, keep_best, prunable=self.prunable)
        for ckpt in doomed:
            self.scores.pop(ckpt.id, None)
        return [ckpt.id for ckpt in doomed]

    def prunable(self, ckpt_id: int) -> bool:
        return ckpt_id != self.pinned and (ckpt_id in self.written or ckpt_id <= self.resumed_from)

    def load_newest(self, load, errors: tuple[type[BaseException], ...], warn=logger.warning) -> tuple[int, dict]:
        """`load(id)` on the newest checkpoint first, skipping (with a `warn`ing) those that raise one
        of `errors`. Returns (id, what load returned); CheckpointError with every reason when none loads."""
        reasons = []
        for ckpt in ckpt_files.cut_off_checkpoints(self.ckpt_dir):
            warn(f"passing over checkpoint {ckpt.path}: its write was cut off (the run state still "
                 f"flags it incomplete), so its files may be partial")
            reasons.append(f"{ckpt.path.name}: its write was cut off")
        for ckpt in reversed(ckpt_files.list_checkpoints(self.ckpt_dir)):
            try:
                loaded = load(ckpt.id)
                self.resumed_from = ckpt.id
                return ckpt.id, loaded
            except errors as e:
                warn(f"skipping checkpoint {ckpt.path}: {type(e).__name__}: {e}")
                reasons.append(f"{ckpt.path.name}: {e}")
        raise CheckpointError(f"nothing to resume from in {self.ckpt_dir}: "
                              + ("; ".join(reasons) if reasons else "no checkpoint model.ckpt-N.pkl"))


def prune_user_saves(user_dir: Path, keep: int) -> None:
    """Keep the newest `keep` user saves; 0 keeps them all (Kaiwu's user_save_mode_max_count)."""
    if keep > 0:
        ckpt_files.prune(user_dir, keep)
