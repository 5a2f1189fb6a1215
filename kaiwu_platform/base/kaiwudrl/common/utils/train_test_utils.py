"""`run_train_test(algorithm_name, algorithm_name_list, env_vars)`: what a 15.0.1 package's
`train_test.py` calls. The platform starts its own processes with a tiny replay; here the same
check is `./train.sh --package <the package> --train-test`, which this runs (its own tiny
settings stand in for `env_vars`: capacity 10, batch 2, a checkpoint per train step)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


def package_dir() -> Path:
    """The package whose train_test.py runs: the folder of the script, else the working directory."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.is_file() and (script.resolve().parent / "conf").is_dir():
        return script.resolve().parent
    return Path.cwd()


def run_train_test(algorithm_name, algorithm_name_list=None, env_vars=None):
    """Run the toolkit's train test of `algorithm_name` on this package; exits with its code."""
    if algorithm_name_list is not None and algorithm_name not in algorithm_name_list:
        raise ValueError(f"algorithm_name = {algorithm_name!r}: allowed {', '.join(map(str, algorithm_name_list))} "
                         "(train_test.py's algorithm_name_list)")
    if env_vars:
        print(f"train test: ./train.sh --train-test's own small replay settings stand in for "
              f"{', '.join(sorted(env_vars))}", file=sys.stderr)
    command = [str(REPO_ROOT / "train.sh"), "--package", str(package_dir()), "--train-test",
               "--set", f"app.algo={json.dumps(str(algorithm_name))}"]
    sys.exit(subprocess.call(command, cwd=REPO_ROOT))
