"""Train the gorge_chase survival task (tasks/gorge_chase.py) over seeds: one line a seed, what it learned.

    python tools/gorge_chase/survival.py                          # seeds 0 1 2, the task's budget of env steps
    python tools/gorge_chase/survival.py --seeds 3 4 --budget 20000
"""
from __future__ import annotations

from cli.run import run_over_seeds
from tasks import gorge_chase as gorge_survival


def main(argv: list[str] | None = None) -> None:
    run_over_seeds(gorge_survival.__doc__, gorge_survival.BUDGET_ENV_STEPS, gorge_survival.seed_account, argv)


if __name__ == "__main__":
    main()
