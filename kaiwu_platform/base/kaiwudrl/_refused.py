"""Modules of the platform's own process tooling that this toolkit replaces rather than provides."""
from __future__ import annotations


def refuse(module: str):
    raise ImportError(
        f"{module} drives the Kaiwu platform's own processes and container scripts and is not provided here. "
        "This toolkit trains a code package with `./train.sh --package DIR`; the platform's train_test.py check "
        "is `./train.sh --package DIR --train-test` (train until the learner has trained once, then stop).")
