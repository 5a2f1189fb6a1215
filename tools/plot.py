"""Learning curves of a run from its metrics.csv, as PNGs.

    python tools/plot.py runs/default                 # -> runs/default/plots/*.png
    python tools/plot.py runs/default --x train_step --out /tmp/plots

metrics.csv is in long format (`wall_time,role,train_step,env_steps,key,value`), one row per
logged value, so the plots need no list of keys: `overview.png` puts the curves a run is
judged by side by side (score, win rate, reward terms, losses, samples per second, policy
lag), and one `<group>.png` per key prefix ("loss/...", "episode/...") shows every key. A run
with [eval] has its evaluation curve (eval/score, eval/win, eval/chests: the greedy policy on
fixed episodes, one point per evaluated checkpoint) in the same panels as the training one, and
eval/ratio (to the planner) in a panel of its own.
"""
from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from cli.run import EXIT_BAD_INPUT  # noqa: E402

X_AXES = ("env_steps", "train_step", "wall_time")
X_LABELS = {"env_steps": "env steps", "train_step": "train step", "wall_time": "minutes"}

# Overview panels: title and the key pattern (searched, case-insensitive). Keys that match
# several panels go to the first.
OVERVIEW_PANELS: tuple[tuple[str, str], ...] = (
    ("score", r"total_score|(^|/)score$"),
    ("evaluation / planner", r"^eval/ratio$"),
    ("win rate", r"^(?!.*reward).*win"),
    ("chests", r"^(?!.*reward).*(chest|treasure)"),
    ("reward terms", r"reward"),
    ("losses", r"loss"),
    ("entropy / KL / clip", r"entropy|kl|clip"),
    ("throughput", r"sps|per_s$|per_sec"),
    ("policy lag", r"lag"),
)


@dataclass
class Series:
    """All values logged under one key, in file order."""

    key: str
    wall_time: list[float] = field(default_factory=list)
    train_step: list[float] = field(default_factory=list)
    env_steps: list[float] = field(default_factory=list)
    value: list[float] = field(default_factory=list)

    def xy(self, x_axis: str) -> tuple[np.ndarray, np.ndarray]:
        """Points sorted by x; env_steps falls back to train_step for keys logged without it."""
        if x_axis == "env_steps" and not any(self.env_steps):
            x_axis = "train_step"
        x = np.asarray(getattr(self, x_axis), dtype=np.float64)
        if x_axis == "wall_time" and x.size:
            x = (x - x.min()) / 60.0
        y = np.asarray(self.value, dtype=np.float64)
        order = np.argsort(x, kind="stable")
        return x[order], y[order]


class MetricsError(ValueError):
    """A metrics file that is missing or not in the long format."""


HEADER = ("wall_time", "role", "train_step", "env_steps", "key", "value")


def load_metrics(path: str | Path) -> dict[str, Series]:
    path = Path(path)
    if not path.is_file():
        raise MetricsError(f"metrics file not found: {path}")
    series: dict[str, Series] = {}
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in HEADER if c not in (reader.fieldnames or [])]
        if missing:
            raise MetricsError(f"{path}: missing columns {missing}; expected header {','.join(HEADER)}")
        for row in reader:
            try:
                numbers = [float(row[c] or 0) for c in ("wall_time", "train_step", "env_steps", "value")]
            except ValueError:
                continue
            if not math.isfinite(numbers[3]):
                continue
            s = series.setdefault(row["key"], Series(row["key"]))
            s.wall_time.append(numbers[0])
            s.train_step.append(numbers[1])
            s.env_steps.append(numbers[2])
            s.value.append(numbers[3])
    return series


def smooth(y: np.ndarray, window: int) -> np.ndarray:
    """Trailing mean over `window` points (shorter at the start), so early points stay honest."""
    if window <= 1 or y.size < 3:
        return y
    c = np.cumsum(np.insert(y, 0, 0.0))
    idx = np.arange(1, y.size + 1)
    lo = np.maximum(0, idx - window)
    return (c[idx] - c[lo]) / (idx - lo)


def auto_window(n: int) -> int:
    return max(1, n // 20)


#: The run's evaluations ([eval]): one point per evaluated checkpoint, drawn as points, never smoothed,
#: in the same panels as the training episodes' curves (eval/score beside episode/total_score ...).
EVAL_PREFIX = "eval/"


def draw_series(ax, s: Series, x_axis: str, window: int | None, label: str | None = None) -> None:
    x, y = s.xy(x_axis)
    if s.key.startswith(EVAL_PREFIX):
        ax.plot(x, y, linewidth=1.2, marker="o", markersize=3.5, label=label or f"{s.key} (greedy, fixed episodes)")
        return
    w = auto_window(y.size) if window is None else window
    if w > 1:
        line = ax.plot(x, y, alpha=0.2, linewidth=0.8)[0]
        ax.plot(x, smooth(y, w), color=line.get_color(), linewidth=1.6, label=label or s.key)
    else:
        ax.plot(x, y, linewidth=1.4, marker="." if y.size < 30 else None, label=label or s.key)


def panel_keys(keys: list[str]) -> list[tuple[str, list[str]]]:
    """Overview panels with the keys each shows; empty panels are left out."""
    taken: set[str] = set()
    panels = []
    for title, pattern in OVERVIEW_PANELS:
        matched = [k for k in keys if k not in taken and re.search(pattern, k, re.IGNORECASE)]
        taken.update(matched)
        if matched:
            panels.append((title, matched))
    return panels


def group_of(key: str) -> str:
    return key.split("/", 1)[0] if "/" in key else "misc"


def figure_grid(n: int, ncols: int = 3):
    ncols = min(ncols, max(1, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.4 * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def save_figure(fig, path: Path, title: str) -> Path:
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_overview(series: dict[str, Series], out: Path, x_axis: str, window: int | None, title: str) -> Path | None:
    panels = panel_keys(sorted(series))
    if not panels:
        return None
    fig, axes = figure_grid(len(panels))
    for ax, (name, keys) in zip(axes, panels):
        for key in keys:
            draw_series(ax, series[key], x_axis, window)
        ax.set_title(name)
        ax.set_xlabel(X_LABELS[x_axis])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save_figure(fig, out / "overview.png", title)


def plot_groups(series: dict[str, Series], out: Path, x_axis: str, window: int | None, title: str) -> list[Path]:
    groups: dict[str, list[str]] = {}
    for key in sorted(series):
        groups.setdefault(group_of(key), []).append(key)
    written = []
    for group, keys in groups.items():
        fig, axes = figure_grid(len(keys), ncols=4)
        for ax, key in zip(axes, keys):
            draw_series(ax, series[key], x_axis, window)
            ax.set_title(key, fontsize=9)
            ax.set_xlabel(X_LABELS[x_axis])
            ax.grid(alpha=0.3)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", group)
        written.append(save_figure(fig, out / f"{safe}.png", f"{title} — {group}"))
    return written


def plot_run(run_dir: str | Path, out: str | Path | None = None, x_axis: str = "env_steps",
             window: int | None = None) -> list[Path]:
    """Every PNG for one run; returns the paths written (overview first)."""
    run_dir = Path(run_dir)
    series = load_metrics(run_dir / "metrics.csv" if run_dir.is_dir() else run_dir)
    if not series:
        raise MetricsError(f"{run_dir}: metrics.csv has no rows yet")
    out = Path(out) if out else (run_dir if run_dir.is_dir() else run_dir.parent) / "plots"
    title = run_dir.name if run_dir.is_dir() else run_dir.parent.name
    overview = plot_overview(series, out, x_axis, window, title)
    return ([overview] if overview else []) + plot_groups(series, out, x_axis, window, title)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="run directory (or a metrics.csv)")
    parser.add_argument("--out", type=Path, help="output directory (default RUN_DIR/plots)")
    parser.add_argument("--x", choices=X_AXES, default="env_steps", help="x axis (default env_steps)")
    parser.add_argument("--smooth", type=int, default=None,
                        help="trailing-mean window in points (default: 1/20 of the points; 1 = raw)")
    args = parser.parse_args(argv)
    try:
        paths = plot_run(args.run_dir, args.out, args.x, args.smooth)
    except MetricsError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
