"""Train the v2 near-end task (tasks/back_to_the_realm_v2.py) over seeds: one line a seed, what it learned.

    python tools/back_to_the_realm_v2/near_end.py                          # seeds 0 1 2, the task's budget of env steps
    python tools/back_to_the_realm_v2/near_end.py --seeds 3 4 --budget 20000
"""
from __future__ import annotations

from cli.run import run_over_seeds
from tasks import back_to_the_realm_v2 as near_end_v2


def main(argv: list[str] | None = None) -> None:
    run_over_seeds(near_end_v2.__doc__, near_end_v2.BUDGET_ENV_STEPS, near_end_v2.seed_account, argv)


if __name__ == "__main__":
    main()
