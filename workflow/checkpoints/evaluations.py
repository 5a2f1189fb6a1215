"""The run's evaluations beside its checkpoints: `evaluations.json` in the checkpoint directory,
written (atomically) by the run's evaluator alone (evaluation.evaluator) and read by the learner
(pruning keeps the best, metrics.csv gets the rows), the launcher, --resume and the tools.

    {"settings": {...},                  what was played: platform, env, usr_conf, episodes, seed
     "planner": {"score": ..., ...},     the route planner on the same episodes (once per setting)
     "checkpoints": {"<id>": {"score", "ratio", "win", "chests", "steps", "env_steps",
                              "wall_time", "seconds"}},
     "best": <id> | null,                the highest score (ties: the newer checkpoint)
     "pending": <id> | null,             the checkpoint being played now: never pruned meanwhile
     "target": {"metric", "value", "train_step"} | absent}   the stop_value reached, and where

Scores compare only on the same settings: an evaluator whose settings differ from the file's
starts a new table (the old one is kept as evaluations-<time>.json).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from agent.checkpoint_io import write_atomically
from workflow.checkpoints.ckpt_files import Checkpoint, list_checkpoints

EVALUATIONS_FILE = "evaluations.json"
#: The values of one checkpoint's evaluation (each a mean over the episodes), and their metric keys.
VALUES = ("score", "ratio", "win", "chests", "steps")
METRIC_PREFIX = "eval/"


@dataclass
class Evaluations:
    settings: dict = field(default_factory=dict)
    planner: dict | None = None
    checkpoints: dict[int, dict] = field(default_factory=dict)
    pending: int | None = None
    target: dict | None = None

    @property
    def best(self) -> int | None:
        """The id with the highest score (ties: the newer); None before any evaluation."""
        scored = [i for i, entry in self.checkpoints.items() if _finite(entry.get("score"))]
        return max(scored, key=lambda i: (self.checkpoints[i]["score"], i)) if scored else None

    def scores(self) -> dict[int, float]:
        return {i: float(e["score"]) for i, e in self.checkpoints.items() if _finite(e.get("score"))}

    def to_json(self) -> dict:
        return {"settings": self.settings, "planner": self.planner,
                "checkpoints": {str(i): self.checkpoints[i] for i in sorted(self.checkpoints)},
                "best": self.best, "pending": self.pending, **({"target": self.target} if self.target else {})}

    @staticmethod
    def metrics(entry: dict) -> dict[str, float]:
        """One checkpoint's evaluation as metric values (eval/score, eval/ratio, ...)."""
        return {METRIC_PREFIX + key: float(entry[key]) for key in VALUES if _finite(entry.get(key))}


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_evaluations(ckpt_dir: str | Path) -> Evaluations | None:
    """The run's evaluations, or None when there are none (no file, or one that cannot be read:
    it is rewritten whole by the next evaluation)."""
    path = Path(ckpt_dir) / EVALUATIONS_FILE
    try:
        raw = json.loads(path.read_text())
        checkpoints = {int(k): dict(v) for k, v in raw.get("checkpoints", {}).items() if isinstance(v, dict)}
        pending = raw.get("pending")
        return Evaluations(settings=dict(raw.get("settings") or {}), planner=raw.get("planner"),
                           checkpoints=checkpoints, pending=int(pending) if isinstance(pending, int) else None,
                           target=raw.get("target") if isinstance(raw.get("target"), dict) else None)
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def write_evaluations(ckpt_dir: str | Path, evaluations: Evaluations) -> Path:
    path = Path(ckpt_dir) / EVALUATIONS_FILE
    body = json.dumps(evaluations.to_json(), indent=1, sort_keys=False) + "\n"
    write_atomically(path, lambda f: f.write(body.encode()))
    return path


def set_aside(ckpt_dir: str | Path) -> Path | None:
    """Keep an evaluations file of other settings as evaluations-<time>.json; its new name."""
    path = Path(ckpt_dir) / EVALUATIONS_FILE
    if not path.exists():
        return None
    kept = path.with_name(f"evaluations-{time.strftime('%Y%m%d-%H%M%S')}.json")
    path.replace(kept)
    return kept


def best_checkpoint(ckpt_dir: str | Path) -> tuple[Checkpoint, dict] | None:
    """The whole checkpoint with the best evaluation that is still on disk, with its entry; None
    when the run has no evaluation of one."""
    found = read_evaluations(ckpt_dir)
    if found is None:
        return None
    whole = {c.id: c for c in list_checkpoints(ckpt_dir)}
    scores = {i: s for i, s in found.scores().items() if i in whole}
    if not scores:
        return None
    best = max(scores, key=lambda i: (scores[i], i))
    return whole[best], found.checkpoints[best]


def describe(ckpt_id: int, entry: dict) -> str:
    """'model.ckpt-40 (score 123.4, ratio 0.912, won 80%)'."""
    ratio = f", ratio {entry['ratio']:.3f}" if _finite(entry.get("ratio")) else ""
    won = f", won {entry['win']:.0%}" if _finite(entry.get("win")) else ""
    return f"model.ckpt-{ckpt_id} (score {entry['score']:.1f}{ratio}{won})"
