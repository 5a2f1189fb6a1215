#!/usr/bin/env bash
# Run the test suite: ./tests/run.sh [pytest args]. First use creates .venv.
# Exit 0 only when tests ran and passed (pytest's "no tests collected", exit 5, is a failure).
# The suite runs on REALM_TEST_WORKERS pytest-xdist processes (default 3; 0 runs it in this
# process), a test module to a worker: a module's fixtures are built once, and the end-to-end
# tests, which wait on their launcher's processes much of the time, overlap on two cores (three
# workers ran 7 % faster than two back to back, and level with them in a faster hour: docs/BENCHMARKS.md
# section 9). Modules
# go out in tests/conftest.py's order (the long end-to-end ones first, the quick ones last to even
# out the end): xdist's own reordering, by test count, would start the longest modules last.
# Each worker starts a warm fork server that the runs its tests launch fork their processes from
# (tests/conftest.py; REALM_TEST_FORK_SERVER=0 turns it off, and each run starts its own).
set -uo pipefail
cd "$(dirname "$0")/.."
export REALM_WITH_RAY=1  # the suite covers the optional Ray path too (tests/test_ray_cluster.py)
source tools/venv.sh || exit $?
workers="${REALM_TEST_WORKERS:-3}"
if ! [[ "$workers" =~ ^[0-9]+$ ]]; then
    echo "error: REALM_TEST_WORKERS must be a whole number of processes (0: none), got '$workers'" >&2
    exit 2
fi
parallel=()
if [[ "$workers" -gt 0 ]]; then
    parallel=(-n "$workers" --dist loadscope --no-loadscope-reorder)
fi
"$REALM_VENV_PYTHON" -m pytest "${parallel[@]}" "$@"
rc=$?
if [[ $rc -eq 5 ]]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit $rc
