"""A tool's command line run inside the test process: `run_tool("tools/evaluate.py", "--ckpt", ...)`
calls the script's own `main(argv)` and answers like `subprocess.run(..., capture_output=True,
text=True)` (returncode, stdout, stderr), from the repository root.

Why: a tool started as a process imports torch and the project again (about 3 CPU-s each, about
fifty times a suite on two cores), while the test process has them already. What a process alone
can show stays a process: tests/test_tools.py starts every tool's `--help` as one, the training
runs are real launchers, and a package's own code is imported in a fresh interpreter: a command
line with `--package` runs as a process (the package's modules and its platform's would otherwise
stay on this process's sys.path and in sys.modules for the tests after it).

An exception the tool does not turn into an exit code ends it as the interpreter would: its
traceback on stderr and returncode 1; `sys.exit(n)` (argparse's refusals among them) gives n.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any, Callable
from unittest import mock

REPO_ROOT = Path(__file__).resolve().parents[1]


_LOADED: dict[Path, Any] = {}


def tool_main(script: str) -> Callable[[list[str]], int] | None:
    """The `main` of `tools/x.py` or `tools/<game>/x.py`; None for anything else. Loaded from its
    file under a name of its own: a test may have put another `tools` package first on sys.path
    (a platform's), or a tool's folder itself."""
    path = (REPO_ROOT / script).resolve()
    if path.suffix != ".py" or not path.is_relative_to(REPO_ROOT / "tools") or not path.is_file():
        return None
    if path not in _LOADED:
        name = "tool_runs__" + "__".join(path.relative_to(REPO_ROOT).with_suffix("").parts)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look a module up by its name
        spec.loader.exec_module(module)
        _LOADED[path] = module
    return _LOADED[path].main


def run_tool(script: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python <script> <args>` from the repository root, in this process when the script is a tool."""
    main = tool_main(script)
    if main is None or "--package" in args:
        return subprocess.run([sys.executable, script, *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=300, env=env)
    out, err = io.StringIO(), io.StringIO()
    environ = mock.patch.dict(os.environ, env, clear=True) if env is not None else contextlib.nullcontext()
    with environ, contextlib.chdir(REPO_ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:
            code = e.code
        except Exception:  # noqa: BLE001 - the interpreter's own answer to an uncaught exception
            traceback.print_exc()
            code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): the message on stderr, status 1
        err.write(f"{code}\n")
        code = 1
    return subprocess.CompletedProcess([sys.executable, script, *args], code, out.getvalue(), err.getvalue())
