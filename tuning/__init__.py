"""Hyperparameter sweeps' library: a sweep file read and checked against the real config schema
(sweep_space). tools/sweep.py runs the sweep it describes on Optuna."""
