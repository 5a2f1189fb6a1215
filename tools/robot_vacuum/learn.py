"""Train the robot_vacuum cleaning task (tasks/robot_vacuum.py) over seeds: one line a seed, what it learned.

    python tools/robot_vacuum/learn.py                            # seeds 0 1 2, the task's budget of env steps
    python tools/robot_vacuum/learn.py --seeds 3 4 --budget 6000
"""
from __future__ import annotations

from cli.run import run_over_seeds
from tasks import robot_vacuum as vacuum_cleaning


def main(argv: list[str] | None = None) -> None:
    run_over_seeds(vacuum_cleaning.__doc__, vacuum_cleaning.BUDGET_ENV_STEPS, vacuum_cleaning.seed_account, argv)


if __name__ == "__main__":
    main()
