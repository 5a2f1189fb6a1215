#!/usr/bin/env bash
# Sourced by ./train.sh and ./tests/run.sh (and by hand: `source tools/venv.sh`): make sure
# .venv exists and matches requirements.txt and pyproject.toml (the project installed editable),
# then put it on PATH. A stamp holding their hash makes a second run a no-op. The caller's shell options are left as they were.
# REALM_WITH_RAY=1 (./train.sh --ray, ./tests/run.sh) also installs the optional requirements-ray.txt,
# resolved together with requirements.txt, under a stamp of its own.
# pip compiles every installed module's bytecode on one core (about 30 s of the first setup);
# compiling them afterwards on all cores takes about 19 s on two. Files that do not compile are
# skipped, as pip skips them, and so are the packages' own test folders (tests/, test/: about
# 1,500 of the 16,000 files, never imported by a run).
_realm_pip_install() {
    local venv="$1"
    shift
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile "$@" >&2 || return 1
    "$venv/bin/python" -m compileall -q -j 0 -x '/tests?/' \
        "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null 2>&1 || true
}

# The project's own modules, compiled ahead into their __pycache__: where PYTHONDONTWRITEBYTECODE
# is set (container images often set it) nothing imported would ever be cached, and every process
# of a run (the launcher, its fork server, each tool) would compile each module it imports again.
# The files are the checkout's tracked Python outside tests/ (pytest compiles those its own way);
# up to date, this only compares each file's time with its compiled copy's. Without git, nothing.
_realm_compile_project() {
    local root="$1"
    git -C "$root" ls-files -- '*.py' ':!tests' 2>/dev/null | (cd "$root" && "$root/.venv/bin/python" -m compileall \
        -q -j 0 -i - >/dev/null 2>&1) || true
}

_realm_venv_setup() {
    local root venv py want have ver
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    venv="$root/.venv"
    py="${REALM_PYTHON:-python3.11}"
    command -v "$py" >/dev/null 2>&1 || py=python3
    want="$(cat "$root/requirements.txt" "$root/pyproject.toml" | sha256sum | cut -d' ' -f1)"
    have="$(cat "$venv/.requirements.sha256" 2>/dev/null || true)"
    if [[ "$want" != "$have" ]]; then
        ver="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
        if [[ "$ver" != "3.11" ]]; then
            echo "error: Python 3.11 is required (dm-reverb 0.14 and tensorflow-cpu 2.15 wheels); found $py = $ver." >&2
            echo "Set REALM_PYTHON to a Python 3.11 interpreter." >&2
            return 2
        fi
        echo "[setup] creating $venv and installing requirements.txt (first run only) ..." >&2
        if [[ ! -x "$venv/bin/python" ]]; then
            "$py" -m venv "$venv" || return 1
        fi
        # The pip a new venv brings (23.2 with Python 3.11) spends ~22 CPU-s resolving the
        # requirements against the indexes; pip 26.3 resolves the same pins, to the same
        # packages, in ~8.
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pip==26.3" >&2 || return 1
        local extra=()
        if [[ "${REALM_WITH_RAY:-0}" == "1" ]]; then
            extra=(-r "$root/requirements-ray.txt")  # resolved with the rest in one pass
        fi
        _realm_pip_install "$venv" -r "$root/requirements.txt" "${extra[@]}" || return 1
        if [[ "${REALM_WITH_RAY:-0}" == "1" ]]; then
            cat "$root/requirements.txt" "$root/requirements-ray.txt" | sha256sum | cut -d' ' -f1 \
                > "$venv/.requirements-ray.sha256"
        fi
        # The project itself, editable: its packages import from anywhere with .venv/bin/python.
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
            -e "$root" >&2 || return 1
        echo "$want" > "$venv/.requirements.sha256"
        echo "[setup] done." >&2
    fi
    if [[ "${REALM_WITH_RAY:-0}" == "1" ]]; then
        want="$(cat "$root/requirements.txt" "$root/requirements-ray.txt" | sha256sum | cut -d' ' -f1)"
        have="$(cat "$venv/.requirements-ray.sha256" 2>/dev/null || true)"
        if [[ "$want" != "$have" ]]; then
            echo "[setup] installing requirements-ray.txt (Ray, first use only) ..." >&2
            _realm_pip_install "$venv" -r "$root/requirements.txt" -r "$root/requirements-ray.txt" || return 1
            echo "$want" > "$venv/.requirements-ray.sha256"
        fi
    fi
    _realm_compile_project "$root"
    export PATH="$venv/bin:$PATH"
    # TensorFlow (imported by dm-reverb) is chatty at import; keep real errors only.
    export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
    REALM_VENV_PYTHON="$venv/bin/python"
}
_realm_venv_setup
