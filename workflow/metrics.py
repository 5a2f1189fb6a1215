"""Where a run's numbers and messages go.

- `setup_logging(role, log_dir)`: loguru to `<run>/log/<role>.log`, rotated.
- `MetricsWriter`: every value to `<run>/metrics.csv` in long format
  (`wall_time,role,train_step,env_steps,key,value`, one value per row, so new keys never
  change the header and tools can filter by key) and to TensorBoard under `<run>/tb/`
  (x axis: env steps). One writer per run, owned by the learner.
"""
from __future__ import annotations

import csv
import math
import sys
import time
import types
from pathlib import Path

from loguru import logger

CSV_HEADER = ("wall_time", "role", "train_step", "env_steps", "key", "value")
LOG_ROTATION = "50 MB"
LOG_RETENTION = 5


def _tensorboard_without_tensorflow() -> None:
    """TensorBoard's documented no-TensorFlow mode (a module `tensorboard.compat.notf`): its event
    writer then uses its own file layer, and the learner skips TensorFlow's import (~2.5 CPU-s).
    The event files are the same."""
    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))


def setup_logging(role: str, log_dir: str | Path, level: str = "INFO", console=None):
    """Send this process's loguru output to `<log_dir>/<role>.log`; warnings and errors also to
    `console` (a callable taking the formatted line) when given."""
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    logger.remove()
    logger.configure(extra={"role": role})
    logger.add(log_dir / f"{role}.log", level=level, rotation=LOG_ROTATION, retention=LOG_RETENTION,
               format="{time:YYYY-MM-DD HH:mm:ss.SSS} | {level:<7} | {extra[role]} | {message}", enqueue=False)
    if console is not None:
        logger.add(console, level="WARNING", format="{level}: {message}")
    return logger


class MetricsWriter:
    def __init__(self, csv_path: str | Path, tb_dir: str | Path, flush_every_s: float = 2.0):
        self.csv_path = Path(csv_path)
        self.csv_path.parent.mkdir(parents=True, exist_ok=True)
        new_file = not self.csv_path.exists() or self.csv_path.stat().st_size == 0
        self._csv_file = self.csv_path.open("a", newline="")
        self._csv = csv.writer(self._csv_file)
        if new_file:
            self._csv.writerow(CSV_HEADER)
        _tensorboard_without_tensorflow()
        from torch.utils.tensorboard import SummaryWriter  # heavy import, only where metrics are written
        self._tb = SummaryWriter(log_dir=str(tb_dir), flush_secs=int(max(1, flush_every_s)))
        self._flush_every_s = flush_every_s
        self._last_flush = time.monotonic()

    def write(self, role: str, train_step: int, env_steps: int, values: dict[str, float],
              wall_time: float | None = None) -> None:
        wall_time = time.time() if wall_time is None else wall_time
        for key, value in values.items():
            try:
                value = float(value)
            except (TypeError, ValueError):
                continue
            if not math.isfinite(value):
                continue
            self._csv.writerow((f"{wall_time:.3f}", role, int(train_step), int(env_steps), key, repr(value)))
            self._tb.add_scalar(key, value, global_step=int(env_steps), walltime=wall_time)
        if time.monotonic() - self._last_flush >= self._flush_every_s:
            self.flush()

    def flush(self) -> None:
        self._csv_file.flush()
        self._tb.flush()
        self._last_flush = time.monotonic()

    def close(self) -> None:
        self.flush()
        self._csv_file.close()
        self._tb.close()
