#!/usr/bin/env bash
# Run the test suite: ./tests/run.sh [pytest args]. First use creates .venv.
# Exit 0 only when tests ran and passed (pytest's "no tests collected", exit 5, is a failure).
set -uo pipefail
cd "$(dirname "$0")/.."
export REALM_WITH_RAY=1  # the suite covers the optional Ray path too (tests/test_ray_cluster.py)
source tools/venv.sh || exit $?
"$REALM_VENV_PYTHON" -m pytest "$@"
rc=$?
if [[ $rc -eq 5 ]]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit $rc
