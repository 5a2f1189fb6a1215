"""One trial: its runs (one per seed, `seeds_at_once` side by side) trained, their median reported to
Optuna step by step, stopped when the pruner says so, and scored; the Outcome the study records."""
from __future__ import annotations

import json
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tuning.curves import curve, ready_steps, reduce, worst
from tuning.runs import Run, evaluate_final
from tuning.sweep_space import Sweep

POLL_S = 1.0


@dataclass
class Outcome:
    state: str  # "complete" | "pruned" | "fail" | "interrupted"
    value: float | None = None
    attrs: dict = field(default_factory=dict)


class TrialRunner:
    """The runs of one trial, `seeds_at_once` side by side (the next starts when one ends):
    reports, prunes, stops, and scores them."""

    def __init__(self, sweep: Sweep, out: Path, trial, stop: threading.Event, ray: str | None = None):
        self.sweep, self.out, self.trial, self.stop, self.ray = sweep, out, trial, stop, ray
        self.values = {p.key: p.suggest(trial) for p in sweep.params}
        self.overrides = [p.override(self.values[p.key]) for p in sweep.params]
        runs_dir = out / "runs"
        self.runs = [Run(seed, runs_dir / self.run_name(seed), out / "logs" / f"{self.run_name(seed)}.log")
                     for seed in range(sweep.seeds)]
        self.reported = float("-inf")
        self.started = time.monotonic()

    def run_name(self, seed: int) -> str:
        return f"trial-{self.trial.number:04d}-seed{seed}"

    def argv(self, run: Run) -> list[str]:
        where = [f"app.seed={run.seed}", f"app.run_dir={json.dumps(str(run.root.parent))}",
                 f"app.run_name={json.dumps(run.root.name)}"]
        return self.sweep.launcher_argv(self.overrides + where) + (["--ray", self.ray] if self.ray else [])

    def curves(self) -> list[list[tuple[float, float]]]:
        return [curve(r.evaluations(), self.sweep.objective["metric"], self.sweep.pruner["step"], r.final)
                for r in self.runs]

    def attrs(self, **more) -> dict:
        return {"runs": [str(r.root) for r in self.runs], "overrides": self.overrides,
                "minutes": round((time.monotonic() - self.started) / 60, 2), **more}

    def execute(self) -> Outcome:
        print(f"trial {self.trial.number}: {', '.join(self.overrides)}", flush=True)
        try:
            pruned = self.train()
        finally:
            for run in self.runs:
                run.stop()
            for run in self.runs:
                run.wait()
        if self.stop.is_set():
            return Outcome("interrupted", attrs=self.attrs(interrupted=True))
        if pruned is not None:
            return Outcome("pruned", pruned[1], self.attrs(pruned_at=pruned[0], seed_values=pruned[2]))
        return self.score()

    def start_waiting_runs(self) -> None:
        """Start runs in seed order while fewer than seeds_at_once are training."""
        training = sum(r.proc is not None and not r.poll() for r in self.runs)
        for run in self.runs:
            if training >= self.sweep.seeds_at_once:
                return
            if run.proc is None:
                run.start(self.argv(run))
                training += 1

    def train(self) -> tuple | None:
        """Watch the runs until they end; report each ready step. (step, median, per seed) if pruned."""
        while not self.stop.is_set():
            self.start_waiting_runs()
            ended = [r.poll() for r in self.runs]
            if any(r.code not in (None, 0) for r in self.runs):
                return None  # a failed run fails the trial (score says which)
            maximize = self.sweep.maximize
            for step, value, per_seed in ready_steps(self.curves(), ended, self.reported,
                                                     self.sweep.objective["reduce"], maximize):
                self.reported = step
                self.trial.report(value, int(step))
                if self.trial.should_prune():
                    print(f"trial {self.trial.number}: pruned at step {int(step)} "
                          f"({self.sweep.objective['metric']} {value:.4g})", flush=True)
                    return int(step), value, per_seed
            if all(ended):
                return None
            time.sleep(POLL_S)
        return None

    def score(self) -> Outcome:
        """Every run ended by itself: the median over seeds of each run's value (COMPLETE)."""
        failed = [r for r in self.runs if r.code != 0]
        if failed:
            r = failed[0]
            return Outcome("fail", attrs=self.attrs(
                error=f"seed {r.seed}: the launcher exited {r.code}; log {r.log}:\n{r.tail()}"))
        if self.sweep.final_eval:
            for run in self.runs:
                run.final = evaluate_final(run)
        metric, how = self.sweep.objective["metric"], self.sweep.objective["reduce"]
        values = [reduce(points, how, self.sweep.maximize) for points in self.curves()]
        missing = [r.seed for r, v in zip(self.runs, values) if v is None]
        if missing:
            return Outcome("fail", attrs=self.attrs(
                error=f"seed {missing[0]}: no evaluation with {metric} (the budget ended before the run's first "
                      "evaluation: a larger budget, or eval.every_train_steps smaller)"))
        median = statistics.median(values)
        return Outcome("complete", median, self.attrs(seed_values=values, worst=worst(values, self.sweep.maximize)))


def run_trial(sweep: Sweep, out: Path, trial, stop: threading.Event, ray: str | None) -> Outcome:
    try:
        return TrialRunner(sweep, out, trial, stop, ray).execute()
    except Exception as e:  # the sweep's own failure on one trial must not leave it RUNNING
        return Outcome("fail", attrs={"error": f"{type(e).__name__}: {e}"})
