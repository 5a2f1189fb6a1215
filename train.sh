#!/usr/bin/env bash
# Train one of the project's agents (PPO, dqn_plus) or a Kaiwu code package: ./train.sh [--config conf/configure_app.toml] [--set section.key=value ...] [--resume]
#                               [--role all|learner|aisrv] [--learner HOST:PORT] [--ray local|auto|HOST:PORT]
# See docs/TRAINING.md. Exit codes: 0 done or stopped cleanly, 1 a process failed, 2 bad config.
# First use creates .venv and installs requirements.txt.
set -euo pipefail
cd "$(dirname "$0")"
for arg in "$@"; do
    if [[ "$arg" == "--ray" || "$arg" == --ray=* ]]; then
        export REALM_WITH_RAY=1  # the optional Ray extra, installed on first use
    fi
done
source tools/venv.sh
exec "$REALM_VENV_PYTHON" -m workflow.launcher "$@"
