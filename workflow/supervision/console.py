"""What the person at the terminal sees of a run: one progress line (env steps, SPS, episodes,
score, model version, buffer fill, the evaluation curve's newest and best point) kept clear of
the messages, or a plain status line every so often without a terminal."""
from __future__ import annotations

import shutil
import sys
import time
from collections import deque

from loguru import logger
from tqdm import tqdm

PLAIN_STATUS_EVERY_S = 30.0  # without a terminal: one status line (stderr and launcher.log) this often


class Progress:
    """One line: env steps, SPS, episodes, mean score, model version, buffer fill."""

    def __init__(self, total: int | None):
        bar_format = ("{desc}{percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt} env steps [{elapsed}<{remaining}]{postfix}"
                      if total else "{desc}{n_fmt} env steps [{elapsed}]{postfix}")
        width = shutil.get_terminal_size(fallback=(120, 24)).columns
        self.bar = tqdm(total=total or None, unit_scale=True, bar_format=bar_format, ncols=width if width > 0 else 120,
                        disable=not sys.stderr.isatty())
        self.history: deque[tuple[float, int]] = deque(maxlen=64)
        self.last_plain = 0.0

    def sps(self, env_steps: int) -> float:
        now = time.monotonic()
        self.history.append((now, env_steps))
        while len(self.history) > 2 and now - self.history[0][0] > 10.0:
            self.history.popleft()
        (t0, s0), (t1, s1) = self.history[0], self.history[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0

    def update(self, env_steps: int, fields: dict) -> None:
        sps = self.sps(env_steps)
        text = f"{sps:,.0f} sps " + " ".join(f"{k} {v}" for k, v in fields.items())
        if not self.bar.disable:
            self.bar.n = env_steps
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.refresh()
        elif time.monotonic() - self.last_plain >= PLAIN_STATUS_EVERY_S:
            self.last_plain = time.monotonic()
            line = f"progress: {env_steps} env steps, {text}"
            logger.info(line)
            print(line, file=sys.stderr, flush=True)  # no terminal (a pipe, CI, nohup): a line every so often

    def close(self) -> None:
        self.bar.close()


def status_fields(learner: dict | None, aisrv: list[tuple[dict, bool]], evaluator: dict | None,
                  buffer_capacity: int) -> dict:
    """The progress line's fields (env_steps first) from the learner's status, or, before it
    reports, from the aisrv's ((status, alive) each), with the evaluator's point."""
    if learner is not None:
        score = learner.get("mean_score")
        return {"env_steps": int(learner.get("env_steps", 0)),
                "ep": learner.get("episodes", 0),
                "score": f"{score:.1f}" if score is not None else "-",
                "ver": learner.get("model_version", 0),
                "buf": f"{learner.get('buffer_size', 0)}/{learner.get('buffer_capacity', buffer_capacity)}",
                "step": learner.get("train_step", 0),
                **evaluation_fields(evaluator)}
    return {"env_steps": sum(int(s.get("env_steps", 0)) for s, _ in aisrv),
            "ep": sum(int(s.get("episodes", 0)) for s, _ in aisrv),
            "ver": max((int(s.get("model_version", 0)) for s, _ in aisrv), default=0),
            "aisrv": sum(1 for _, alive in aisrv if alive)}


def evaluation_fields(status: dict | None) -> dict:
    """The evaluation curve's newest point and its best, beside the training score:
    `eval 0.912@40 best 0.950@30` (ratio to the planner, else the score, at a train step)."""
    if status is None:
        return {}
    if "train_step" not in status:
        return {"eval": "-"}

    def point(value, score, step) -> str:
        return f"{value:.3f}@{step}" if value is not None else f"{score:.1f}@{step}"
    return {"eval": point(status.get("ratio"), status["score"], status["train_step"]),
            "best": point(status.get("best_ratio"), status["best_score"], status["best"])}


def console(message: str, error: bool = False) -> None:
    """A line for the person at the terminal (kept clear of the progress bar), also logged.
    Errors reach the terminal through the launcher's warning sink."""
    if error:
        logger.error(message)
    else:
        logger.info(message)
        tqdm.write(message, file=sys.stderr)
