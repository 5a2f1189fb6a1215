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
import os
import sys
from pathlib import Path

from tuning.preflight import check_out, check_ray, hold
from tuning.results import report
from tuning.study import open_study, train
from tuning.sweep_space import SweepError, load
from workflow.config import REPO_ROOT

EXIT_BAD = 2  # a bad sweep file or a sweep already running; report() gives 0 (done) or 1 (no trial completed)


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


if __name__ == "__main__":
    sys.exit(main())
