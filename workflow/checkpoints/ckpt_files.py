"""Checkpoints on disk: listing them, and which ones a pruning keeps (their file names and
ids are agent.checkpoint_io's).

The learner (while it trains) and tools/clean_ckpt.py (afterwards) prune with the same rule,
so a run directory looks the same whichever of them last touched it. A checkpoint is
`model.ckpt-{id}.pkl` where id is the learner's train step when it was written; a Kaiwu package
may write several files per checkpoint, each named `model.ckpt-{id}...` (the platform's rule):
they are one checkpoint, listed by its `.pkl` file (or its first file) and pruned together.

Scores that decide the "best" checkpoint come from a sidecar `ckpt_scores.json` in the
checkpoint directory (written by tools/evaluate.py; id -> mean total score) or, failing that,
from the run's metrics.csv.
"""
from __future__ import annotations

import bisect
import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

from agent.checkpoint_io import ckpt_name, parse_ckpt_id, write_atomically  # noqa: F401 (the names' one home)
from workflow.checkpoints.run_state import incomplete_ids

SCORES_SIDECAR = "ckpt_scores.json"


@dataclass(frozen=True, order=True)
class Checkpoint:
    id: int
    path: Path


def _groups(ckpt_dir: Path) -> dict[int, list[Path]]:
    groups: dict[int, list[Path]] = {}
    if ckpt_dir.is_dir():
        for path in ckpt_dir.iterdir():
            ckpt_id = parse_ckpt_id(path)
            if ckpt_id is not None and path.is_file():
                groups.setdefault(ckpt_id, []).append(path)
    return groups


def list_checkpoints(ckpt_dir: str | Path) -> list[Checkpoint]:
    """The whole checkpoints in a directory, oldest (smallest id) first: other files are ignored,
    and so are checkpoints whose write was cut off (`cut_off_checkpoints`), which can be partial."""
    cut_off = incomplete_ids(ckpt_dir)
    return [ckpt for ckpt in all_checkpoint_files(ckpt_dir) if ckpt.id not in cut_off]


def cut_off_checkpoints(ckpt_dir: str | Path) -> list[Checkpoint]:
    """Checkpoints whose write was cut off (a kill, a power loss): the run state still flags them
    incomplete (workflow.checkpoints.run_state), so nothing loads, counts or prunes them."""
    cut_off = incomplete_ids(ckpt_dir)
    return [ckpt for ckpt in all_checkpoint_files(ckpt_dir) if ckpt.id in cut_off]


def all_checkpoint_files(ckpt_dir: str | Path) -> list[Checkpoint]:
    """Every checkpoint named in a directory, whole or not, oldest first."""
    found = []
    for ckpt_id, paths in _groups(Path(ckpt_dir)).items():
        main = Path(ckpt_dir) / ckpt_name(ckpt_id)
        found.append(Checkpoint(ckpt_id, main if main in paths else sorted(paths)[0]))
    return sorted(found)


def checkpoint_files(ckpt_dir: str | Path, ckpt_id: int) -> list[Path]:
    """Every file of checkpoint `ckpt_id` (`model.ckpt-{id}` and what follows it in a name)."""
    return sorted(_groups(Path(ckpt_dir)).get(int(ckpt_id), []))


def latest_checkpoint(ckpt_dir: str | Path) -> Checkpoint | None:
    found = list_checkpoints(ckpt_dir)
    return found[-1] if found else None


def find_checkpoint(ckpt_dir: str | Path, ckpt_id: int | str = "latest") -> Checkpoint:
    """The whole checkpoint with this id ("latest" = newest); FileNotFoundError naming the
    directory, and the checkpoints there whose write was cut off."""
    found = list_checkpoints(ckpt_dir)
    match = found[-1:] if ckpt_id == "latest" else [c for c in found if c.id == int(ckpt_id)]
    if match:
        return match[0]
    cut_off = [c.id for c in cut_off_checkpoints(ckpt_dir)]
    why = (f"; cut off while they were written (their run state still flags them incomplete): {cut_off}"
           if cut_off else "")
    if not found:
        raise FileNotFoundError(f"no checkpoint (model.ckpt-N.pkl) in {ckpt_dir}{why}")
    raise FileNotFoundError(f"no checkpoint with id {ckpt_id} in {ckpt_dir}; ids: {[c.id for c in found]}{why}")


def run_dir_of(ckpt_dir: str | Path) -> Path | None:
    """The run directory of a checkpoint directory laid out as runs/<name>/ckpt/<app>_<algo>/."""
    ckpt_dir = Path(ckpt_dir).resolve()
    if ckpt_dir.parent.name == "ckpt":
        return ckpt_dir.parent.parent
    return None


def checkpoint_dirs(path: str | Path) -> list[Path]:
    """Checkpoint directories under `path`: itself if it holds checkpoints, else ckpt/<app>_<algo>/."""
    path = Path(path)
    if list_checkpoints(path):
        return [path]
    ckpt_root = path / "ckpt"
    if ckpt_root.is_dir():
        return sorted(d for d in ckpt_root.iterdir() if d.is_dir() and list_checkpoints(d))
    return []


def every_kth(checkpoints: list[Checkpoint], k: int) -> list[Checkpoint]:
    """Every k-th checkpoint counted from the newest, so the newest is always included."""
    if k <= 1:
        return list(checkpoints)
    picked = checkpoints[::-1][::k]
    return picked[::-1]


def choose_kept(ids: list[int], keep: int, scores: dict[int, float] | None = None, keep_best: bool = False) -> set[int]:
    """Ids to keep: the newest `keep`, plus the best-scoring one when `keep_best` and scores exist.

    The best is picked among ids that have a score; ties go to the newer checkpoint.
    """
    if keep < 0:
        raise ValueError(f"keep must be >= 0, got {keep}")
    ordered = sorted(set(ids))
    kept = set(ordered[max(0, len(ordered) - keep):])
    if keep_best and scores:
        scored = [i for i in ordered if i in scores and math.isfinite(scores[i])]
        if scored:
            kept.add(max(scored, key=lambda i: (scores[i], i)))
    return kept


def choose_deleted(checkpoints: list[Checkpoint], keep: int, scores: dict[int, float] | None = None,
                   keep_best: bool = False) -> list[Checkpoint]:
    kept = choose_kept([c.id for c in checkpoints], keep, scores, keep_best)
    return [c for c in checkpoints if c.id not in kept]


def prune(ckpt_dir: str | Path, keep: int, scores: dict[int, float] | None = None, keep_best: bool = False,
          apply: bool = True, prunable=None) -> list[Checkpoint]:
    """Delete (when `apply`) the checkpoints the rule does not keep; returns them either way.
    `prunable(id)`, when given, limits the rule to the ids it accepts: others are never touched."""
    found = list_checkpoints(ckpt_dir)
    if prunable is not None:
        found = [c for c in found if prunable(c.id)]
    doomed = choose_deleted(found, keep, scores, keep_best)
    if apply:
        for ckpt in doomed:
            for path in checkpoint_files(ckpt_dir, ckpt.id):
                path.unlink(missing_ok=True)
    return doomed


# --- scores -----------------------------------------------------------------------------------

def read_scores_sidecar(ckpt_dir: str | Path) -> dict[int, float]:
    """id -> mean total score from the latest evaluation recorded beside the checkpoints."""
    path = Path(ckpt_dir) / SCORES_SIDECAR
    if not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text())
        return {int(k): float(v) for k, v in raw.get("scores", {}).items()}
    except (json.JSONDecodeError, AttributeError, TypeError, ValueError):
        return {}


def write_scores_sidecar(ckpt_dir: str | Path, scores: dict[int, float], episodes: dict) -> Path:
    """Record evaluation scores beside the checkpoints.

    `episodes` describes what was played (usr_conf, seeds, map). Scores of other checkpoints
    are merged in only when they were measured on the same episodes, so the best checkpoint
    is never picked by comparing different settings.
    """
    path = Path(ckpt_dir) / SCORES_SIDECAR
    merged: dict[int, float] = {}
    if path.is_file():
        try:
            old = json.loads(path.read_text())
            if old.get("episodes") == episodes:
                merged = {int(k): float(v) for k, v in old.get("scores", {}).items()}
        except (json.JSONDecodeError, AttributeError, TypeError, ValueError):
            merged = {}
    merged.update({int(k): float(v) for k, v in scores.items()})
    body = {"episodes": episodes, "scores": {str(k): merged[k] for k in sorted(merged)}}
    write_atomically(path, lambda f: f.write((json.dumps(body, indent=1) + "\n").encode()))
    return path


SCORE_NAME = "total_score"


def _is_score_key(key: str) -> bool:
    return key.rsplit("/", 1)[-1] == SCORE_NAME


def scores_from_metrics(metrics_csv: str | Path, ckpt_ids: list[int], key: str | None = None) -> dict[int, float]:
    """Mean of metric `key` over the episodes each checkpoint played.

    `key` None picks the episode score: the key named `total_score` (under any prefix; the
    most frequent one if several). Episodes logged at train steps in [id, next id) were played
    by checkpoint `id` (give or take the policy lag); the newest checkpoint takes everything
    logged after it.
    """
    path = Path(metrics_csv)
    ids = sorted(set(ckpt_ids))
    if not ids or not path.is_file():
        return {}
    rows: dict[str, list[tuple[int, float]]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            name = row.get("key") or ""
            if not (name == key if key is not None else _is_score_key(name)):
                continue
            try:
                step, value = int(float(row["train_step"])), float(row["value"])
            except (TypeError, ValueError):
                continue
            if math.isfinite(value):
                rows.setdefault(name, []).append((step, value))
    if not rows:
        return {}
    chosen = max(rows.values(), key=len)
    sums = {i: 0.0 for i in ids}
    counts = {i: 0 for i in ids}
    for step, value in chosen:
        owner = bisect.bisect_right(ids, step) - 1
        if owner >= 0:
            sums[ids[owner]] += value
            counts[ids[owner]] += 1
    return {i: sums[i] / counts[i] for i in ids if counts[i]}
