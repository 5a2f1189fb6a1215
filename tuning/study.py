"""The sweep's Optuna study in sweeps/<name>/study.db: its sampler and pruner, opened or resumed
(a trial a killed sweep left RUNNING failed and enqueued again, never counted), and trials asked,
run `jobs` at a time and told until `trials` count or a signal stops them cleanly."""
from __future__ import annotations

import signal
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from tuning.sweep_space import Sweep, SweepError
from tuning.trials import POLL_S, Outcome, run_trial


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


def train(study, sweep: Sweep, out: Path, jobs: int, ray: str | None = None) -> None:
    """The sweep itself: trials a killed sweep left running enqueued again, then trials run until
    `trials` count; Ctrl-C or SIGTERM stops the running trials' runs cleanly and enqueues them again."""
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
