"""An evaluation's results summed up: per policy the means over its episodes and, beside the
reference's scores of the same episodes, the ratio; as a table for the terminal, and as what the
evaluation leaves on disk (episodes.csv, summary.csv, results.json, a score-against-train-step
picture, the scores beside the checkpoints)."""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from evaluation.inputs import map_label
from evaluation.session import INFO_MARK, Session
from evaluation.worker import PLANNER
from workflow.checkpoints import ckpt_files

EPISODE_FIELDS = ("policy", "ckpt_id", "episode", "seed", "total_score", "won", "chests", "steps", "buff_count",
                  "flash_count", "usr_conf")
SUMMARY_FIELDS = ("policy", "ckpt_id", "episodes", "score_mean", "score_std", "win_rate", "chests_mean",
                  "chests_available", "steps_mean", "buff_mean", "flash_mean", "planner_score_mean", "ratio")


@dataclass
class Summary:
    policy: str  # "planner" or the checkpoint path (with an extra_info value after INFO_MARK)
    ckpt_id: int | None
    episodes: int
    score_mean: float
    score_std: float
    win_rate: float
    chests_mean: float
    chests_available: float
    steps_mean: float
    buff_mean: float
    flash_mean: float
    planner_score_mean: float | None = None  # over the same episodes
    ratio: float | None = None  # score_mean / planner_score_mean

    def row(self) -> dict:
        return {k: getattr(self, k) for k in SUMMARY_FIELDS}


def ckpt_id_of(policy: str) -> int | None:
    """The checkpoint id of a policy key (a checkpoint path, with an extra_info value after INFO_MARK)."""
    return ckpt_files.parse_ckpt_id(policy.split(INFO_MARK)[0])


def summarize(policy: str, records: dict, planner: dict | None) -> Summary:
    """Means over one policy's episodes; with the planner's records of the same episodes, the ratio.

    Raises ValueError if an episode of the planner differs (usr_conf or seed) from the agent's.
    """
    indices = sorted(records)
    recs = [records[i] for i in indices]
    scores = np.array([r.total_score for r in recs], dtype=np.float64)
    summary = Summary(
        policy=policy,
        ckpt_id=ckpt_id_of(policy),
        episodes=len(recs),
        score_mean=float(scores.mean()),
        score_std=float(scores.std()),
        win_rate=float(np.mean([r.won for r in recs])),
        chests_mean=float(np.mean([r.chests for r in recs])),
        chests_available=float(np.mean([r.chests_available for r in recs])),
        steps_mean=float(np.mean([r.steps for r in recs])),
        buff_mean=float(np.mean([r.buff_count for r in recs])),
        flash_mean=float(np.mean([r.flash_count for r in recs])),
    )
    if planner is not None and policy != PLANNER:
        for i in indices:
            same = i in planner and planner[i].usr_conf == records[i].usr_conf and planner[i].seed == records[i].seed
            if not same:
                raise ValueError(f"episode {i}: the planner did not play the same episode as {policy}")
        planner_mean = float(np.mean([planner[i].total_score for i in indices]))
        summary.planner_score_mean = planner_mean
        summary.ratio = summary.score_mean / planner_mean if planner_mean > 0 else float("nan")
    return summary


def summarize_all(keys: list[str], results: dict) -> list[Summary]:
    """One Summary per policy key, in `keys`' order, each beside the planner's episodes."""
    return [summarize(key, results[key], results.get(PLANNER)) for key in keys]


def _fmt(value, spec: str, empty: str = "-") -> str:
    return empty if value is None else format(value, spec)


class Column(NamedTuple):
    """A column of the table a game may have nothing to say in (robot_vacuum has no chests, buffs
    or flashes): left out when no row `has` anything there; the files keep every field."""

    title: str
    width: int
    cell: Callable[[Summary], str]
    has: Callable[[Summary], float]


BEFORE_STEPS = (Column("chests", 9, lambda s: f"{s.chests_mean:.1f}/{s.chests_available:.0f}",
                       lambda s: s.chests_available or s.chests_mean),)
AFTER_STEPS = (Column("buff", 5, lambda s: f"{s.buff_mean:.2f}", lambda s: s.buff_mean),
               Column("flash", 5, lambda s: f"{s.flash_mean:.2f}", lambda s: s.flash_mean))


def format_table(summaries: list[Summary]) -> str:
    before, after = ([c for c in columns if any(c.has(s) for s in summaries)] for columns in (BEFORE_STEPS, AFTER_STEPS))

    def cells(columns, s=None) -> str:
        return "".join(f"{c.title if s is None else c.cell(s):>{c.width}} " for c in columns)

    header = (f"{'policy':<22} {'eps':>4} {'score mean ± std':>18} {'win':>6} {cells(before)}{'steps':>7} "
              f"{cells(after)}{'planner':>8} {'ratio':>6}")
    lines = [header, "-" * len(header)]
    for s in summaries:
        name = PLANNER if s.policy == PLANNER else (f"ckpt {s.ckpt_id}" if s.ckpt_id is not None else s.policy)
        if s.ckpt_id is not None and INFO_MARK in s.policy:
            name += f" {s.policy.split(INFO_MARK)[1]}"
        lines.append(f"{name:<22} {s.episodes:>4} {s.score_mean:>9.1f} ± {s.score_std:<6.1f} {s.win_rate:>6.0%} "
                     f"{cells(before, s)}{s.steps_mean:>7.0f} {cells(after, s)}"
                     f"{_fmt(s.planner_score_mean, '8.1f', '       -')} {_fmt(s.ratio, '6.3f', '     -')}")
    return "\n".join(lines)


def write_outputs(out: Path, settings: dict, summaries: list[Summary], results: dict) -> list[Path]:
    """episodes.csv, summary.csv and results.json (the settings, the summaries, every episode) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    episode_rows = []
    for policy, records in results.items():
        for index in sorted(records):
            row = records[index].to_row()
            episode_rows.append({"policy": policy, "ckpt_id": ckpt_id_of(policy), "episode": index,
                                 **{k: row[k] for k in EPISODE_FIELDS if k in row}})
    paths = [out / "episodes.csv", out / "summary.csv", out / "results.json"]
    with paths[0].open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=EPISODE_FIELDS)
        writer.writeheader()
        writer.writerows(episode_rows)
    with paths[1].open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SUMMARY_FIELDS)
        writer.writeheader()
        writer.writerows(s.row() for s in summaries)
    body = {"settings": settings, "summary": [s.row() for s in summaries],
            "episodes": [{**r, "usr_conf": json.loads(r["usr_conf"])} for r in episode_rows]}
    paths[2].write_text(json.dumps(body, indent=1) + "\n")
    return paths


def write_evaluation(out: Path, session: Session, summaries: list[Summary], results: dict, count: int, seed: int,
                     seconds: float) -> list[Path]:
    """Everything an evaluation of `session` leaves: write_outputs' files in `out`, for several
    checkpoints score_vs_step.png, and the scores beside the checkpoints (clean_ckpt.py
    --keep-best reads them); the picture and the scores are those of the first extra_info value."""
    request = session.request
    settings = {"preset": session.label, "usr_conf": session.usr_conf, "env": session.env_kwargs, "episodes": count,
                "policy": request.policy, "seed": seed, "checkpoints": [str(c) for c in session.ckpts],
                "game": session.game.name, "platform": session.platform.name, "seconds": round(seconds, 2)}
    if request.extra_info is not None:
        rule = session.game.info_rule
        settings["extra_info"] = {rule: [kwargs[rule] for _, kwargs in session.variants]}
    paths = write_outputs(out, settings, summaries, results)
    first = [s for s in summaries if s.policy == PLANNER or s.policy.endswith(session.variants[0][0])]
    if len(session.ckpts) > 1:
        paths.append(plot_score_vs_step(out / "score_vs_step.png", first,
                                        f"{session.label} on {map_label(session.env_kwargs)}"))
    if session.ckpts:
        scores = {s.ckpt_id: s.score_mean for s in first if s.ckpt_id is not None}
        ckpt_files.write_scores_sidecar(session.ckpts[0].parent, scores,
                                        {"usr_conf": session.usr_conf, "env": session.env_kwargs, "episodes": count,
                                         "seed": seed, "policy": request.policy})
    return paths


def plot_score_vs_step(path: Path, summaries: list[Summary], title: str) -> Path:
    """The checkpoints' mean score (± std) and win rate against their train step, the planner's
    mean as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = sorted((s for s in summaries if s.ckpt_id is not None), key=lambda s: s.ckpt_id)
    steps = np.array([s.ckpt_id for s in agents], dtype=np.float64)
    mean = np.array([s.score_mean for s in agents])
    std = np.array([s.score_std for s in agents])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, mean, marker="o", label="agent (mean)")
    ax.fill_between(steps, mean - std, mean + std, alpha=0.2, label="± std")
    planner = next((s for s in summaries if s.policy == PLANNER), None)
    if planner is not None:
        ax.axhline(planner.score_mean, color="tab:red", linestyle="--", label=f"planner {planner.score_mean:.0f}")
    ax2 = ax.twinx()
    ax2.plot(steps, [s.win_rate for s in agents], color="tab:green", alpha=0.6, marker=".", label="win rate")
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_ylabel("win rate")
    ax.set_xlabel("train step")
    ax.set_ylabel("total score")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    handles = ax.get_legend_handles_labels()
    handles2 = ax2.get_legend_handles_labels()
    ax.legend(handles[0] + handles2[0], handles[1] + handles2[1], fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
