"""The values Optuna sees, from the runs' evaluations: each run's curve of the objective, its value
(best or last), and the median over seeds at the steps every run has passed, so that no later
evaluation changes a reported value."""
from __future__ import annotations

import statistics


def curve(evaluations, metric: str, step_kind: str, final: dict | None = None) -> list[tuple[float, float]]:
    """(step, metric value) of a run's evaluations in train-step order; the final checkpoint's last."""
    key = metric.removeprefix("eval/")
    entries = sorted((evaluations.checkpoints if evaluations is not None else {}).items())
    if final is not None:
        entries.append((final["train_step"], final))
    points = []
    for index, (train_step, entry) in enumerate(entries, 1):
        step = {"train_step": train_step, "env_steps": entry.get("env_steps"), "evaluation": index}[step_kind]
        value = entry.get(key)
        if step is not None and isinstance(value, (int, float)):
            points.append((float(step), float(value)))
    return points


def reduce(points: list[tuple[float, float]], how: str, maximize: bool) -> float | None:
    """A run's value: its best evaluation so far, or its last."""
    if not points:
        return None
    if how == "last":
        return points[-1][1]
    values = [v for _, v in points]
    return max(values) if maximize else min(values)


def ready_steps(curves: list[list[tuple[float, float]]], ended: list[bool], after: float, how: str,
                maximize: bool) -> list[tuple[float, float, list[float]]]:
    """(step, median over seeds, per-seed values) for each step past `after` that every run has
    passed (an evaluation at or beyond it, or the run ended): no later evaluation changes it.
    A step some run has no value at yet (its first evaluation came later) is passed over."""
    steps = sorted({s for points in curves for s, _ in points if s > after})
    out = []
    for step in steps:
        if not all(done or any(s >= step for s, _ in points) for points, done in zip(curves, ended)):
            break
        values = [reduce([p for p in points if p[0] <= step], how, maximize) for points in curves]
        if all(v is not None for v in values):
            out.append((step, statistics.median(values), values))
    return out


def worst(values: list[float], maximize: bool) -> float:
    return min(values) if maximize else max(values)
