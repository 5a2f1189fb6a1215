"""What the aisrv report to the learner, checked before it counts.

Signing (workflow.transport.signing) proves who sent a record, not that it is sane: `number` and
`count` hold each value to what a record may hold, and a record that fails is counted
(`RefusalLog`) and dropped whole. `AisrvReports` turns the records that pass into the run's
counters (`RunCounters`), the recent episodes' scores and wins, and the aisrv rows of the
metrics; `StatsWindow` averages the learner's own statistics between metric rows.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np
from loguru import logger

from workflow import metrics_keys as K

RECENT_EPISODES = 100
WARN_EVERY_S = 30.0  # repeated warnings (refused items, non-finite steps) at most this often


@dataclass
class RunCounters:
    """Run-wide counters, saved in every checkpoint and restored by --resume."""

    env_steps: int = 0  # produced by all aisrv
    episodes: int = 0
    env_errors: int = 0
    consumed_rows: int = 0  # sample rows the learner trained on

    @classmethod
    def from_dict(cls, data: dict) -> "RunCounters":
        return cls(**{k: int(v) for k, v in data.items() if k in cls.__dataclass_fields__})


#: Signing proves who sent a record, not that it is sane: what a record may hold.
METRIC_LIMIT = float(np.finfo(np.float32).max)  # TensorBoard keeps scalars as float32
MAX_RECORD_COUNT = 10**9  # env steps or errors in one progress record (an aisrv reports about once a second)
MAX_RUN_COUNT = 2**53  # a run counter's ceiling: exact as a float and in JSON, a valid TensorBoard step


def number(value) -> float:
    """A telemetry value as a finite float the metric writers hold; anything else is refused (ValueError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{value!r} is not finite")
    if abs(value) > METRIC_LIMIT:
        raise ValueError(f"{value!r} is out of range (|value| <= {METRIC_LIMIT:.4g})")
    return value


def count(values: dict[str, float], key: str, total: int) -> int:
    """A counter's increment in a record: an integer in 0..MAX_RECORD_COUNT that keeps the run's
    `total` within MAX_RUN_COUNT; anything else is refused (ValueError)."""
    value, most = values.get(key, 0.0), min(MAX_RECORD_COUNT, MAX_RUN_COUNT - total)
    if not (0 <= value <= most and value.is_integer()):
        raise ValueError(f"{key} = {value!r}: a count must be an integer in 0..{most}")
    return int(value)


class RefusalLog:
    """Replay items and telemetry records the learner refused: counted per kind (metrics
    `refused/replay`, `refused/telemetry`) and warned about at most once per WARN_EVERY_S."""

    WARN_EVERY_S = WARN_EVERY_S

    def __init__(self):
        self.counts = {"replay": 0, "telemetry": 0}
        self._last_warning = -float("inf")

    def add(self, kind: str, reason: str, source: str | None, count: int = 1) -> None:
        self.counts[kind] += count
        if time.monotonic() - self._last_warning >= self.WARN_EVERY_S:
            self._last_warning = time.monotonic()
            logger.warning(f"refused {count} {kind} item(s) ({reason})" + (f" from {source}" if source else "")
                           + f"; {self.counts[kind]} so far")

    def totals(self) -> dict[str, float]:
        return {K.REFUSED_PREFIX + kind: float(n) for kind, n in self.counts.items()}


class StatsWindow:
    """Learner statistics averaged over `metrics_interval_seconds`, then written as one row per key."""

    def __init__(self):
        self.sums: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.lag_max = 0

    def add(self, values: dict[str, float]) -> None:
        for key, value in values.items():
            value = float(value)
            if np.isfinite(value):
                self.sums[key] = self.sums.get(key, 0.0) + value
                self.counts[key] = self.counts.get(key, 0) + 1

    def means(self) -> dict[str, float]:
        return {key: self.sums[key] / self.counts[key] for key in self.sums}


class AisrvReports:
    """The aisrv's telemetry records as the run's counters, recent episodes and metric rows.
    `train_step()` stamps the rows; `on_save_model(source)` is an aisrv agent's save_model."""

    def __init__(self, counters: RunCounters, writer, train_step: Callable[[], int],
                 on_save_model: Callable[[str | None], None]):
        self.counters = counters
        self.writer = writer
        self.train_step = train_step
        self.on_save_model = on_save_model
        self.refused = RefusalLog()
        self.recent_scores: deque[float] = deque(maxlen=RECENT_EPISODES)
        self.recent_wins: deque[float] = deque(maxlen=RECENT_EPISODES)

    def handle(self, record) -> None:
        """One telemetry record; one that does not hold what its kind needs is counted and dropped."""
        try:
            self.handle_record(record)
        except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as e:
            source = record.get("source") if isinstance(record, dict) else None
            self.refused.add("telemetry", f"{type(e).__name__}: {e}", source)

    def handle_record(self, record: dict) -> None:
        """Numbers are checked before anything changes, so a bad record leaves no trace but its count."""
        kind, values = record.get("kind"), record.get("values") or {}
        if not isinstance(values, dict):
            raise TypeError(f"values is a {type(values).__name__}")
        when = number(record.get("time", time.time()))
        if kind in ("progress", "episode", "model", "monitor"):
            values = {str(key): number(value) for key, value in values.items()}
        if kind == "progress":
            steps = count(values, "env_steps", self.counters.env_steps)
            errors = count(values, "env_errors", self.counters.env_errors)
            self.counters.env_steps += steps
            self.counters.env_errors += errors
            if errors:
                self.write_aisrv({K.ENV_ERRORS: errors}, when)
            if values.get("send_wait_s"):
                self.write_aisrv({K.AISRV_SEND_WAIT: values["send_wait_s"]}, when)
        elif kind == "episode":
            self.counters.episodes += 1  # one record per finished episode: the counter and the CSV agree
            if K.EPISODE_SCORE in values:
                self.recent_scores.append(values[K.EPISODE_SCORE])
            if K.EPISODE_WIN in values:
                self.recent_wins.append(values[K.EPISODE_WIN])
            self.write_aisrv({K.EPISODE_PREFIX + key: value for key, value in values.items()}, when)
        elif kind == "model":
            self.write_aisrv({K.MODEL_PICKUP_LATENCY: values.get("pickup_latency_s", float("nan")),
                              K.AISRV_MODEL_VERSION: values.get("version", float("nan"))}, when)
        elif kind == "save_model":
            self.on_save_model(record.get("source"))
        elif kind == "monitor":
            self.write_aisrv({f"monitor/{key}": value for key, value in values.items()}, when)
        else:
            raise ValueError(f"unknown record kind {kind!r}")

    def write_aisrv(self, values: dict, when: float) -> None:
        self.writer.write("aisrv", self.train_step(), self.counters.env_steps, values, wall_time=when)

    def mean_recent_score(self) -> float | None:
        return float(np.mean(self.recent_scores)) if self.recent_scores else None
