"""The learner's checkpoints: write, prune, and find the newest one that loads.

`<ckpt>/<app>_<algo>/model.ckpt-N.pkl` (N = train step) holds everything `--resume` needs:
the agent's model, optimizer and counters (Agent.save_model) plus, in `extra`, the training
system's counters and RNG states. Pruning follows workflow.ckpt_files (the newest K, plus the
best by the recent mean episode score), the same rule as tools/clean_ckpt.py.
User `save_model` calls go to `<ckpt>/user/` and keep the newest user_save_mode_max_count.
"""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import torch
from loguru import logger

from agent.agent import Agent, CheckpointError
from workflow import ckpt_files
from workflow.metrics_keys import EPISODE_SCORE_KEY


def capture_rng(agent: Agent) -> dict:
    """RNG states as tensors and plain values (what a weights_only checkpoint may hold)."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": {"kind": kind, "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached": float(cached)},
        "torch": torch.get_rng_state(),
        "agent_sample": agent.sample_generator.get_state(),
        "agent_shuffle": agent.shuffle_generator.get_state(),
    }


def restore_rng(agent: Agent, state: dict) -> None:
    if not state:
        return
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    n = state["numpy"]
    np.random.set_state((n["kind"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached"]))
    torch.set_rng_state(state["torch"])
    agent.sample_generator.set_state(state["agent_sample"])
    agent.shuffle_generator.set_state(state["agent_shuffle"])


class CheckpointManager:
    def __init__(self, ckpt_dir: Path, keep: int, keep_best: bool, user_dir: Path, user_keep: int,
                 metrics_csv: Path | None = None):
        self.ckpt_dir = Path(ckpt_dir)
        self.user_dir = Path(user_dir)
        self.keep = keep
        self.keep_best = keep_best
        self.user_keep = user_keep
        # Pruning touches only checkpoints this run wrote, or older than the one it resumed from (which
        # loaded): a stray file with a higher id that does not load never costs a good checkpoint.
        self.written: set[int] = set()
        self.resumed_from = -1
        ids = [c.id for c in ckpt_files.list_checkpoints(self.ckpt_dir)]
        # Scores of checkpoints from before a resume come from the run's metrics.
        self.scores: dict[int, float] = (ckpt_files.scores_from_metrics(metrics_csv, ids, EPISODE_SCORE_KEY)
                                         if metrics_csv is not None and keep_best else {})

    def save(self, agent: Agent, step: int, extra: dict, recent_score: float | None) -> Path:
        path = agent.save_model(self.ckpt_dir, step, extra={**extra, "rng": capture_rng(agent)})
        self.saved(step, recent_score)
        return path

    def saved(self, step: int, recent_score: float | None) -> list[int]:
        """Record checkpoint `step` (written by whoever saves) and prune; returns the pruned ids."""
        self.written.add(step)
        if recent_score is not None and np.isfinite(recent_score):
            self.scores[step] = float(recent_score)
        doomed = ckpt_files.prune(self.ckpt_dir, self.keep, self.scores, self.keep_best, prunable=self.prunable)
        for ckpt in doomed:
            self.scores.pop(ckpt.id, None)
        return [ckpt.id for ckpt in doomed]

    def prunable(self, ckpt_id: int) -> bool:
        return ckpt_id in self.written or ckpt_id <= self.resumed_from

    def save_user(self, agent: Agent, step: int) -> Path:
        """A save the episode loop asked for; never pruned by the training checkpoints' rule."""
        path = agent.save_model(self.user_dir, step)
        prune_user_saves(self.user_dir, self.user_keep)
        return path

    def restore_newest(self, agent: Agent) -> tuple[int, dict]:
        """Load the newest checkpoint that reads; a broken one is skipped with a warning.
        Returns (id, extra); CheckpointError with every reason when none loads."""
        def load(ckpt_id: int) -> dict:
            extra = agent.load_model(self.ckpt_dir, ckpt_id)
            check_counters(extra.get("counters", {}))
            try:
                restore_rng(agent, extra.get("rng", {}))
            except (TypeError, ValueError, KeyError, IndexError, RuntimeError, AttributeError) as e:
                raise CheckpointError(f"its RNG state is malformed: {type(e).__name__}: {e}") from e
            return extra
        return self.load_newest(load, (CheckpointError,))

    def load_newest(self, load, errors: tuple[type[BaseException], ...]) -> tuple[int, dict]:
        """`load(id)` on the newest checkpoint first, skipping (with a warning) those that raise one
        of `errors`. Returns (id, what load returned); CheckpointError with every reason when none loads."""
        reasons = []
        for ckpt in reversed(ckpt_files.list_checkpoints(self.ckpt_dir)):
            try:
                loaded = load(ckpt.id)
                self.resumed_from = ckpt.id
                return ckpt.id, loaded
            except errors as e:
                logger.warning(f"skipping checkpoint {ckpt.path}: {type(e).__name__}: {e}")
                reasons.append(f"{ckpt.path.name}: {e}")
        raise CheckpointError(f"nothing to resume from in {self.ckpt_dir}: "
                              + ("; ".join(reasons) if reasons else "no checkpoint model.ckpt-N.pkl"))


def check_counters(counters) -> None:
    """The training system's run counters in a checkpoint: a dict of non-negative integers."""
    if not isinstance(counters, dict):
        raise CheckpointError(f"its counters are a {type(counters).__name__}, not a table")
    for key, value in counters.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CheckpointError(f"its counter {key} = {value!r} is not a non-negative integer")


def prune_user_saves(user_dir: Path, keep: int) -> None:
    """Keep the newest `keep` user saves; 0 keeps them all (Kaiwu's user_save_mode_max_count)."""
    if keep > 0:
        ckpt_files.prune(user_dir, keep)


def preload(agent: Agent, model_dir: str, model_id: int | str) -> int:
    """Kaiwu's preload_model: start from another run's model (weights only, fresh optimizer
    state and counters). Returns the id that was loaded."""
    found = ckpt_files.find_checkpoint(model_dir, model_id)
    fresh_optimizer = agent.optimizer.state_dict()
    agent.load_model(model_dir, found.id)
    agent.optimizer.load_state_dict(fresh_optimizer)
    agent.train_step = agent.samples_learned = agent.model_version = 0
    return found.id
