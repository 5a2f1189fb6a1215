#!/usr/bin/env bash
# Sourced by ./train.sh and ./tests/run.sh: make sure .venv exists and matches
# requirements.txt. A stamp holding the requirements' hash makes a second run a no-op.
set -euo pipefail
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_venv="$_root/.venv"
_py="${REALM_PYTHON:-python3.11}"
command -v "$_py" >/dev/null 2>&1 || _py=python3
_want="$(sha256sum "$_root/requirements.txt" | cut -d' ' -f1)"
_have="$(cat "$_venv/.requirements.sha256" 2>/dev/null || true)"
if [[ "$_want" != "$_have" ]]; then
    _ver="$("$_py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    if [[ "$_ver" != "3.11" ]]; then
        echo "error: Python 3.11 is required (dm-reverb 0.14 and tensorflow-cpu 2.15 wheels); found $_py = $_ver." >&2
        echo "Set REALM_PYTHON to a Python 3.11 interpreter." >&2
        exit 2
    fi
    echo "[setup] creating $_venv and installing requirements.txt (first run only) ..." >&2
    [[ -x "$_venv/bin/python" ]] || "$_py" -m venv "$_venv"
    "$_venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$_root/requirements.txt" >&2
    echo "$_want" > "$_venv/.requirements.sha256"
    echo "[setup] done." >&2
fi
export PATH="$_venv/bin:$PATH"
export PYTHONPATH="$_root${PYTHONPATH:+:$PYTHONPATH}"
# TensorFlow (imported by dm-reverb) is chatty at import; keep real errors only.
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
REALM_VENV_PYTHON="$_venv/bin/python"
