"""Hyperparameter sweeps on Optuna: every trial real training runs, scored by their own evaluator.

    python tools/sweep.py conf/sweeps/smoke.toml                 # run (or resume) the sweep the file describes
    python tools/sweep.py conf/sweeps/smoke.toml --jobs 2        # two trials at a time on this machine
    python tools/sweep.py conf/sweeps/smoke.toml --trials 40     # more trials than the file says
    python tools/sweep.py conf/sweeps/smoke.toml --report        # write the results again, train nothing
    python tools/sweep.py conf/sweeps/smoke.toml --ray HEAD:6379 --jobs 4   # the runs' actors on a Ray cluster
    optuna-dashboard sweeps/smoke/study.db                       # the web view (pip install optuna-dashboard)

The sweep file's [sweep] (tuning/sweep_space.py documents every key) names the config to train,
the search space (any dotted config key), the objective (an eval/* metric of the run's own
evaluator, [eval]), the budget per run, the seeds, the pruner and the sampler.

Each trial trains `seeds` runs (`seeds_at_once` of them side by side) through the launcher ./train.sh runs
(`python -m workflow.launcher`, app.seed 0..seeds-1, each under sweeps/<name>/runs/), reads
their evaluations (<ckpt dir>/evaluations.json) as they train, and reports the median over seeds
to Optuna at each step (train step, env steps or the k-th evaluation) that every seed has passed;
when the pruner says so, every run of the trial is stopped cleanly (SIGTERM to its launcher's
process group) and the trial is recorded as pruned. A run that reaches its budget is ended by its
launcher; with final_eval its final checkpoint is played on the same episodes, so "last" is the
value at the budget. The trial's value is the median over seeds of each run's best (or last)
evaluation; the worst seed is recorded beside it.

With --ray ADDRESS (auto, or a head's HOST:PORT) every run is `./train.sh --ray ADDRESS`: its
learner and aisrv are actors on the cluster's nodes, while its launcher, its evaluator and its run
directory stay on this machine, beside the one study the sweep process asks and tells. --jobs
then says how many trials the cluster trains at a time; give the config a fixed app.aisrv_num
(runs of "auto" would each claim every realm_aisrv slot).

The study lives in sweeps/<name>/study.db (SQLite). Run the same command again to resume: a trial
left RUNNING by a killed sweep is marked FAIL (user attribute `interrupted`) and enqueued again
with the same parameters; interrupted trials do not count toward `trials`, and a run never counts
unless its trial finished. Ctrl-C or SIGTERM stops the running trials' runs cleanly, records them
the same way and exits 0. A second sweep of the same study is refused while one runs (exit 2).

Results (written at the end, and by --report): sweeps/<name>/trials.csv (every trial: state,
value, worst seed, each seed's value, parameters, minutes), best.toml (the best trial's overrides:
./train.sh --config sweeps/<name>/best.toml trains it), and plots/*.png (optimization history,
intermediate values, slices, and parameter importances with two or more parameters).

Exit codes: 0 done or stopped cleanly, 1 no trial completed (each failed), 2 a bad sweep file or
a sweep already running (named; nothing started).
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import fcntl
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import toml

from evaluation.worker import PLANNER
from tuning.sweep_space import Sweep, SweepError, load
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.evaluations import read_evaluations
from workflow.config import REPO_ROOT, apply_overrides, load_config
from workflow.supervision.ray_cluster import check_address
from workflow.supervision.supervisor import PARENT_GONE_SIGNAL

EXIT_OK, EXIT_FAILED, EXIT_BAD = 0, 1, 2
POLL_S = 1.0
STOP_WAIT_S = 180  # a run stopped by SIGTERM writes its final checkpoint; beyond this it is killed
LOCK_FILE = "sweep.lock"


# --- one run (one seed of a trial) ---------------------------------------------------------------

def _die_with_parent() -> None:
    """In the launcher's child: have the kernel signal it when the sweep dies, however (SIGKILL
    too), with the signal the launcher reads as a clean stop however often it comes: no orphan
    run goes on training once its sweep is gone, and none is killed before its final checkpoint."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, PARENT_GONE_SIGNAL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclass
class Run:
    seed: int
    root: Path
    log: Path
    proc: subprocess.Popen | None = None
    code: int | None = None
    stopped: bool = False
    final: dict | None = None  # the final checkpoint's evaluation (final_eval)

    def start(self, argv: list[str]) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("w") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "workflow.launcher", *argv], cwd=REPO_ROOT,
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=_die_with_parent)

    def poll(self) -> bool:
        """True once the launcher has ended."""
        if self.code is None and self.proc is not None:
            self.code = self.proc.poll()
        return self.code is not None

    def stop(self) -> None:
        """SIGTERM the launcher's process group once: the run stops cleanly, as Ctrl-C does (a
        run that never started is only marked stopped)."""
        if self.proc is None:
            self.stopped = True
        elif not self.poll() and not self.stopped:
            self.stopped = True
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def wait(self) -> None:
        if self.proc is None:
            return
        try:
            self.code = self.proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.code = self.proc.wait()

    def ckpt_dir(self) -> Path | None:
        dirs = [d for d in (self.root / "ckpt").glob("*") if d.is_dir() and d.name != "user"]
        return dirs[0] if dirs else None

    def evaluations(self):
        ckpt_dir = self.ckpt_dir()
        return read_evaluations(ckpt_dir) if ckpt_dir is not None else None

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


# --- curves and the values Optuna sees -------------------------------------------------------------

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


# --- the final checkpoint at the budget ------------------------------------------------------------

def evaluate_final(run: Run) -> dict | None:
    """Play the run's final checkpoint on the episodes its evaluator played (its [eval]) when the
    evaluator did not get to it: the entry evaluations.json would hold, with its train step."""
    from evaluation.evaluator import EvalWorker, Setting, summary  # here: it brings torch

    ckpt_dir, found = run.ckpt_dir(), run.evaluations()
    newest = ckpt_files.latest_checkpoint(ckpt_dir) if ckpt_dir is not None else None
    if newest is None or (found is not None and newest.id in found.checkpoints):
        return None
    config = run.root / "log" / "effective_config.toml"
    setting = Setting(load_config(config), config)
    worker = EvalWorker(setting.env_kwargs, setting.config_file, "greedy", setting.package_dir)
    entry = summary([worker.play(str(newest.path), e) for e in setting.episodes])
    planner = (found.planner or {}).get("score") if found is not None and found.settings == setting.description else None
    if planner is None:
        planner = summary([worker.play(PLANNER, e) for e in setting.episodes])["score"]
    entry.update(ratio=entry["score"] / planner if planner > 0 else None, train_step=newest.id, final=True)
    return entry


# --- one trial -------------------------------------------------------------------------------------

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


# --- the study ----------------------------------------------------------------------------------

def make_sampler(sweep: Sweep, offset: int):
    """TPE (or random), seeded with the sampler seed plus the trials already in the study, so a
    resumed sweep draws new points and a sweep is reproducible from its history."""
    import optuna

    seed = sweep.sampler["seed"] + offset
    if sweep.sampler["type"] == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=sweep.sampler["n_startup_trials"])


def make_pruner(sweep: Sweep):
    import optuna

    p = sweep.pruner
    if p["type"] == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=p["n_startup_trials"], n_warmup_steps=p["n_warmup_steps"],
                                           interval_steps=p["interval_steps"])
    if p["type"] == "successive_halving":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=p["min_resource"],
                                                      reduction_factor=p["reduction_factor"],
                                                      min_early_stopping_rate=p["min_early_stopping_rate"],
                                                      bootstrap_count=p["bootstrap_count"])
    return optuna.pruners.NopPruner()


def storage_url(out: Path) -> str:
    return f"sqlite:///{out / 'study.db'}"


def open_study(sweep: Sweep, out: Path):
    """The sweep's study (created, or loaded to resume); SweepError when its direction differs."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = storage_url(out)
    existing = {s.study_name: s for s in optuna.get_all_study_summaries(url)} if (out / "study.db").exists() else {}
    offset = existing[sweep.name].n_trials if sweep.name in existing else 0
    direction = sweep.objective["direction"]
    if sweep.name in existing and existing[sweep.name].direction.name.lower() != direction:
        raise SweepError(f"[sweep.objective] direction = {direction!r}: the study in {out / 'study.db'} "
                         f"{existing[sweep.name].direction.name.lower()}s; a new direction needs a new [sweep] name")
    study = optuna.create_study(storage=url, study_name=sweep.name, direction=direction, load_if_exists=True,
                                sampler=make_sampler(sweep, offset), pruner=make_pruner(sweep))
    if sweep.name not in existing:
        for point in sweep.enqueue:
            study.enqueue_trial(point)
    return study


def recover(study) -> list[int]:
    """Trials a killed sweep left RUNNING: marked FAIL (interrupted) and enqueued again with the
    same parameters. Their numbers."""
    from optuna.trial import TrialState

    found = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    for t in found:
        study._storage.set_trial_user_attr(t._trial_id, "interrupted", True)
        study._storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
        study.enqueue_trial(t.params, user_attrs={"retry_of": t.number})
    return [t.number for t in found]


def counted(study) -> int:
    """Finished trials that count toward `trials`: complete, pruned, or failed by themselves."""
    from optuna.trial import TrialState

    return sum(1 for t in study.get_trials(deepcopy=False)
               if t.state in (TrialState.COMPLETE, TrialState.PRUNED)
               or (t.state == TrialState.FAIL and not t.user_attrs.get("interrupted")))


def record(study, trial, outcome: Outcome) -> None:
    from optuna.trial import TrialState

    for key, value in outcome.attrs.items():
        trial.set_user_attr(key, value)
    if outcome.state == "complete":
        study.tell(trial, outcome.value)
    elif outcome.state == "pruned":
        study.tell(trial, state=TrialState.PRUNED)
    else:
        study.tell(trial, state=TrialState.FAIL)
        if outcome.state == "interrupted":
            study.enqueue_trial(trial.params, user_attrs={"retry_of": trial.number})
    value = f" {outcome.value:.4g}" if outcome.value is not None else ""
    worst_seed = f" (worst seed {outcome.attrs['worst']:.4g})" if "worst" in outcome.attrs else ""
    print(f"trial {trial.number}: {outcome.state}{value}{worst_seed}, {outcome.attrs.get('minutes', 0):.1f} min"
          + (f"\n{outcome.attrs['error']}" if "error" in outcome.attrs else ""), flush=True)


def run_trial(sweep: Sweep, out: Path, trial, stop: threading.Event, ray: str | None) -> Outcome:
    try:
        return TrialRunner(sweep, out, trial, stop, ray).execute()
    except Exception as e:  # the sweep's own failure on one trial must not leave it RUNNING
        return Outcome("fail", attrs={"error": f"{type(e).__name__}: {e}"})


def optimize(study, sweep: Sweep, out: Path, jobs: int, stop: threading.Event, ray: str | None = None) -> None:
    """Ask, run and tell trials, `jobs` at a time, until `trials` count or a stop."""
    in_flight: dict = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while True:
            while not stop.is_set() and len(in_flight) < jobs and counted(study) + len(in_flight) < sweep.trials:
                trial = study.ask()
                in_flight[pool.submit(run_trial, sweep, out, trial, stop, ray)] = trial
            if not in_flight:
                return
            done, _ = wait(in_flight, timeout=POLL_S, return_when=FIRST_COMPLETED)
            for future in done:
                record(study, in_flight.pop(future), future.result())


# --- results ------------------------------------------------------------------------------------

def write_csv(study, sweep: Sweep, path: Path) -> Path:
    """Every trial: state, value, worst seed, each seed's value, parameters, minutes, runs."""
    keys = [p.key for p in sweep.params]
    header = (["number", "state", "value", "worst"] + [f"seed{s}" for s in range(sweep.seeds)] + keys
              + ["minutes", "pruned_at", "interrupted", "retry_of", "error", "runs"])
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for t in study.get_trials(deepcopy=False):
            a = t.user_attrs
            seeds = list(a.get("seed_values", [])) + [""] * sweep.seeds
            writer.writerow([t.number, t.state.name, "" if t.value is None else t.value, a.get("worst", "")]
                            + seeds[:sweep.seeds] + [t.params.get(k, "") for k in keys]
                            + [a.get("minutes", ""), a.get("pruned_at", ""), a.get("interrupted", ""),
                               a.get("retry_of", ""), (a.get("error") or "").splitlines()[0] if a.get("error") else "",
                               " ".join(a.get("runs", []))])
    return path


def write_best(study, sweep: Sweep, path: Path) -> Path | None:
    """The best trial's config as a file ./train.sh --config takes: the swept config included, the
    sweep's fixed overrides, the best parameters and the budget (app.seed and names stay the config's)."""
    from optuna.trial import TrialState

    if not study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        return None
    best = study.best_trial
    overrides = sweep.fixed + best.user_attrs["overrides"] + sweep.budget_overrides()
    data = apply_overrides({}, overrides)
    head = [f"# The best trial of sweep {sweep.name}: trial {best.number}, {sweep.objective['metric']} "
            f"{best.value:.6g} ({sweep.objective['reduce']}, median of {sweep.seeds} seeds; worst "
            f"{best.user_attrs.get('worst', float('nan')):.6g}).",
            f"# ./train.sh {'--package ' + str(sweep.package) + ' ' if sweep.package else ''}--config {path}"]
    include = [include_path(sweep.config, path.parent)] if sweep.config is not None else []
    body = toml.dumps({"include": include}) if include else ""
    path.write_text("\n".join(head) + "\n" + body + "\n" + toml.dumps(data))
    return path


def include_path(config: Path, folder: Path) -> str:
    """The config as best.toml includes it: relative within the repository, else absolute."""
    inside = all(p.resolve().is_relative_to(REPO_ROOT) for p in (config, folder))
    return os.path.relpath(config, folder) if inside else str(config)


def write_plots(study, sweep: Sweep, folder: Path) -> list[Path]:
    """optuna.visualization.matplotlib's history, intermediate values, slices and importances."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import optuna
    from optuna.trial import TrialState

    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    vis = optuna.visualization.matplotlib
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    plots = {"history": vis.plot_optimization_history, "slice": vis.plot_slice}
    if any(t.intermediate_values for t in study.get_trials(deepcopy=False)):  # none without an evaluator beside the runs
        plots["intermediate"] = vis.plot_intermediate_values
    if len(sweep.params) >= 2 and len(complete) >= 2:
        evaluator = importance_evaluator()
        plots["importance"] = lambda s: vis.plot_param_importances(s, evaluator=evaluator)
    folder.mkdir(exist_ok=True)
    written = []
    for name, draw in plots.items():
        if not complete and name != "intermediate":
            continue
        try:
            with warnings.catch_warnings():  # few trials: degenerate axes and equal importances are expected
                warnings.simplefilter("ignore")
                axes = draw(study)
        except (ValueError, RuntimeError, ZeroDivisionError) as e:
            print(f"plot {name} skipped: {e}")
            continue
        figure = (axes.flat[0] if hasattr(axes, "flat") else axes).figure
        figure.savefig(folder / f"{name}.png", dpi=90, bbox_inches="tight")
        plt.close(figure)
        written.append(folder / f"{name}.png")
    return written


def importance_evaluator():
    """fANOVA where scikit-learn is installed, else PED-ANOVA (no extra dependency)."""
    import optuna

    try:
        import sklearn  # noqa: F401
        return optuna.importance.FanovaImportanceEvaluator(seed=0)
    except ImportError:
        return optuna.importance.PedAnovaImportanceEvaluator()


def report(study, sweep: Sweep, out: Path) -> int:
    """Write the results and print the best trial; the exit code (1 when none completed)."""
    from optuna.trial import TrialState

    print(f"wrote {write_csv(study, sweep, out / 'trials.csv')}")
    best = write_best(study, sweep, out / "best.toml")
    plots = write_plots(study, sweep, out / "plots")
    if plots:
        print(f"wrote {', '.join(str(p) for p in plots)}")
    states = [t.state for t in study.get_trials(deepcopy=False)]
    print(f"{states.count(TrialState.COMPLETE)} complete, {states.count(TrialState.PRUNED)} pruned, "
          f"{states.count(TrialState.FAIL)} failed; web view: optuna-dashboard {out / 'study.db'}")
    if best is None:
        print("no trial completed: no best.toml")
        return EXIT_FAILED if TrialState.FAIL in states else EXIT_OK
    t = study.best_trial
    print(f"best: trial {t.number}, {sweep.objective['metric']} {t.value:.4g} (worst seed "
          f"{t.user_attrs.get('worst', float('nan')):.4g}): {', '.join(t.user_attrs['overrides'])}")
    print(f"wrote {best}: ./train.sh --config {best}")
    return EXIT_OK


# --- the command ---------------------------------------------------------------------------------

def hold(out: Path):
    """One sweep process per study: an flock on sweeps/<name>/sweep.lock (released however it ends)."""
    fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode().strip()
        os.close(fd)
        raise SweepError(f"sweep {out.name} is in use by another sweep process (pid {holder}); wait for it or "
                         f"stop it (kill -TERM {holder}), then run this again to resume") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def check_out(out: Path, report_only: bool) -> None:
    if report_only and not (out / "study.db").exists():
        raise SweepError(f"--report: no study at {out / 'study.db'}")
    if not (out / "study.db").exists() and (out / "runs").exists():
        raise SweepError(f"{out / 'runs'} exists without {out / 'study.db'}: remove {out} or choose another [sweep] name")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", type=Path, help="the sweep file ([sweep]; tuning/sweep_space.py lists its keys)")
    parser.add_argument("--jobs", type=int, default=1, help="trials at a time on this machine (default 1)")
    parser.add_argument("--trials", type=int, default=None, help="finished trials wanted (default: [sweep] trials)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "sweeps",
                        help="where sweeps/<name>/ goes (default the repository's sweeps/)")
    parser.add_argument("--report", action="store_true", help="write the results of the study; train nothing")
    parser.add_argument("--ray", default=None, metavar="auto|HOST:PORT",
                        help="every run's learner and aisrv on this Ray cluster (./train.sh --ray); the study, the "
                             "launchers and the run directories stay here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.jobs < 1:
            raise SweepError(f"--jobs {args.jobs}: at least 1")
        if args.ray is not None:
            check_ray(args.ray)
        sweep = load(args.sweep, args.trials)
        out = args.out.resolve() / sweep.name
        check_out(out, args.report)
        out.mkdir(parents=True, exist_ok=True)
        lock = hold(out)
        study = open_study(sweep, out)
    except SweepError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD
    try:
        if not args.report:
            train(study, sweep, out, args.jobs, args.ray)
        return report(study, sweep, out)
    finally:
        os.close(lock)


def check_ray(address: str) -> None:
    """A cluster every run can join: "local" would start one Ray instance per run (use --jobs)."""
    if address == "local":
        raise SweepError("--ray local would start a Ray instance per run: on one machine use --jobs; for a "
                         "cluster give auto or the head's HOST:PORT (ray start --head)")
    try:
        check_address(address)
    except ValueError as e:
        raise SweepError(str(e)) from None


def train(study, sweep: Sweep, out: Path, jobs: int, ray: str | None = None) -> None:
    import torch

    torch.set_num_threads(1)  # the final evaluations: batch-1 inference
    stop = threading.Event()

    def on_signal(signum, frame):
        print(f"stopping the sweep (signal {signum}): the running trials' runs stop cleanly and are "
              "enqueued again; run the same command to resume", file=sys.stderr, flush=True)
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    again = recover(study)
    if again:
        print(f"resuming: trial(s) {', '.join(map(str, again))} were interrupted; enqueued again with the same "
              "parameters", flush=True)
    where = f"; the runs' actors on the Ray cluster at {ray}" if ray else ""
    print(f"{sweep.describe()}; {counted(study)} of {sweep.trials} finished so far; study {out / 'study.db'}{where}",
          flush=True)
    optimize(study, sweep, out, jobs, stop, ray)


if __name__ == "__main__":
    sys.exit(main())
