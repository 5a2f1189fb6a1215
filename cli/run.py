"""How a tool runs and ends: one torch thread (batch-1 inference is several times faster on one
than on many), and a refused input (evaluation.inputs.InputError, the services' one refusal)
ending it with its message on stderr and exit code 2."""
from __future__ import annotations

import argparse
import sys
from typing import Callable

EXIT_BAD_INPUT = 2


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_tool(action: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """A tool's body with one torch thread; a refused input becomes exit code 2."""
    import torch  # here, not at the top: tools that never run a network start without it

    from evaluation.inputs import InputError

    torch.set_num_threads(1)
    try:
        return action(args)
    except InputError as e:
        return fail(str(e))


def run_over_seeds(doc: str, budget: int, train_seed: Callable[[int, int], str], argv: list[str] | None = None) -> None:
    """A small learning task's command line (tasks/): --seeds (default 0 1 2) and --budget (env
    steps); one line a seed, `train_seed(seed, budget)`'s account of it."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--budget", type=int, default=budget, help="env steps a seed trains at most")
    args = parser.parse_args(argv)
    for seed in args.seeds:
        print(f"seed {seed}: {train_seed(seed, args.budget)}", flush=True)
