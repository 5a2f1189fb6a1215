"""Hyperparameter sweeps' library, which tools/sweep.py runs on Optuna: sweep_space (a sweep file read
and checked against the real config schema), preflight (the checks and the lock before a sweep
starts), runs (one seed's launcher, its evaluations and final checkpoint), curves (the values
Optuna sees), trials (one trial's runs reported, pruned and scored), study (the Optuna study:
opened, resumed, asked and told) and results (trials.csv, best.toml, plots)."""
