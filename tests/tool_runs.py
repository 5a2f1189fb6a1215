"""A tool's command line run inside the test process: `run_tool("tools/evaluate.py", "--ckpt", ...)`
calls the script's own `main(argv)` and answers like `subprocess.run(..., capture_output=True,
text=True)` (returncode, stdout, stderr), from the repository root.

Why: a tool started as a process imports torch and the project again (about 3 CPU-s each, about
fifty times a suite on two cores), while the test process has them already. What a process alone
can show stays a process: tests/test_tools.py starts every tool's `--help` as one, the training
runs are real launchers, and a `-c` check (which often asks what a fresh interpreter imports) is a
`python` process.

A package's own code is never imported here (its modules and its platform's would stay on this
process's sys.path and in sys.modules for the tests after it): a tool's command line with
`--package`, and `forked_run`'s, run in a process forked from the test process's warm fork server
(tests/conftest.py), which imported torch and the training system once and nothing of a package.
Its sys.path is a fresh interpreter's for that command line. Where no warm server serves this
process (turned off, or `env` changes a variable libraries read when they load), it is a `python`
process.

An exception the tool does not turn into an exit code ends it as the interpreter would: its
traceback on stderr and returncode 1; `sys.exit(n)` (argparse's refusals among them) gives n.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import io
import json
import os
import runpy
import subprocess
import sys
import tempfile
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
    if main is None:  # `-c` checks, which often ask what a fresh interpreter imports
        return subprocess.run([sys.executable, script, *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=300, env=env)
    if "--package" in args:
        return forked_run([script, *args], env=env)
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
    return subprocess.CompletedProcess([sys.executable, script, *args], _exit_status(code, err), out.getvalue(),
                                       err.getvalue())


def _exit_status(code, err) -> int:
    """The interpreter's exit status for SystemExit's `code`: sys.exit("message") writes the
    message to `err` and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    err.write(f"{code}\n")
    return 1


def forked_run(argv: list[str], env: dict[str, str] | None = None, timeout_s: float = 300) -> subprocess.CompletedProcess:
    """`python <argv>` (a script and its arguments, or "-c", code and its arguments) from the
    repository root, as a process forked from the warm fork server when one serves this process
    with `env`; else started as a `python` process."""
    from workflow.supervision import warm_fork_server as warm
    from workflow.supervision.processes import fork_context

    command = [sys.executable, *argv]
    context = fork_context()
    if not isinstance(context, warm.WarmContext) or (
            env is not None and warm.import_time_env(env) != warm.import_time_env(os.environ)):
        return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout_s, env=env)
    with tempfile.TemporaryDirectory(prefix="forked_run_") as folder:
        out, err = Path(folder) / "out", Path(folder) / "err"
        child = context.Process(target=_run_command_line, args=(argv, env, _fresh_sys_path(), out, err),
                                name="forked_run")  # not a daemon: a tool may start processes of its own
        with contextlib.chdir(REPO_ROOT):
            child.start()
        child.join(timeout_s)
        if child.exitcode is None:
            child.kill()
            child.join()
            raise subprocess.TimeoutExpired(command, timeout_s, out.read_text(), err.read_text())
        return subprocess.CompletedProcess(command, child.exitcode, out.read_text(), err.read_text())


@functools.lru_cache(maxsize=None)
def _fresh_sys_path() -> tuple[str, ...]:
    """A fresh `python -c` interpreter's sys.path here (its first entry, "", is the command line's own)."""
    done = subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps(sys.path))"], cwd=REPO_ROOT,
                          capture_output=True, text=True, check=True)
    return tuple(json.loads(done.stdout))


def _run_command_line(argv: list[str], env: dict[str, str] | None, fresh_path: tuple[str, ...], out: Path,
                      err: Path) -> None:
    """In the forked process: what the interpreter does with `argv`, then exit with its code."""
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    for fd, path in ((1, out), (2, err)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), write_through=True)
    code = 0
    try:
        if argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path[:] = list(fresh_path)
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        else:
            script = str(Path(argv[0]).resolve())
            sys.argv = [argv[0], *argv[1:]]
            sys.path[:] = [str(Path(script).parent), *fresh_path[1:]]
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code
    except BaseException:  # noqa: BLE001 - the interpreter's own answer to an uncaught exception
        traceback.print_exc()
        code = 1
    code = _exit_status(code, sys.stderr)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
