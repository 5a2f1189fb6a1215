"""A sweep's results, from its study alone (at the end of a sweep, or again without training):
trials.csv, best.toml (the best trial as a config ./train.sh --config trains) and plots/*.png."""
from __future__ import annotations

import csv
import os
import warnings
from pathlib import Path

import toml

from tuning.sweep_space import Sweep
from workflow.config import REPO_ROOT, apply_overrides

EXIT_OK, EXIT_FAILED = 0, 1  # report(): the sweep's exit code, 1 when no trial completed and one failed


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
