"""A fork server that outlives one launcher: many runs fork their processes from it.

Each launcher starts its own fork server (workflow/supervision/fork_server.py), which imports
torch, torch._dynamo, reverb and the roles' modules: about 3 CPU-seconds before a run's first
process. A program that starts many short runs one after another (the test suite, a script of
smoke runs) can start one warm fork server instead
(workflow.supervision.processes.start_warm_fork_server) and name the file it writes to the
launchers it starts in REALM_FORK_SERVER. A launcher forks from it only when its children would
come out as they would from its own server:

- the same Python executable and the same project checkout, with no project source file changed
  since the server imported it;
- the same environment variables that libraries read when they load (OpenMP, MKL, oneDNN,
  TensorFlow, CUDA, Python's own: prefixes IMPORT_TIME_ENV_PREFIXES);
- the same terminal session, so that its children can join the launcher's process group (a
  signal to the launcher's group reaches them as it reaches children of its own server).

Otherwise it says why, once, and starts its own server. A child forked from the warm server joins
the launcher's process group before the launcher's `start()` returns (and stops itself if that
group was stopped before it joined), then takes the launcher's environment and standard output and
error before its target runs (`WarmProcess.run`); its exit code reaches the launcher through the
server, as multiprocessing's own fork server reports it.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import select
import signal
import sys
from dataclasses import asdict, dataclass
from multiprocessing import forkserver, popen_forkserver, reduction, resource_tracker, spawn, util
from multiprocessing.context import ForkServerContext, ForkServerProcess, set_spawning_popen
from pathlib import Path

#: The environment variable that names a warm fork server's description file to a launcher.
ENV_VAR = "REALM_FORK_SERVER"
#: Variables that native libraries or Python read when they load (in the server, before any
#: launcher asks): a launcher whose values differ forks from a server of its own.
IMPORT_TIME_ENV_PREFIXES = ("OMP_", "GOMP_", "KMP_", "MKL_", "ONEDNN_", "DNNL_", "OPENBLAS_", "TF_", "CUDA_",
                            "TORCH_", "PYTHON", "LD_", "MALLOC_", "GRPC_")
#: Of those, read each time they are used (Ray's driver sets PYTHONBREAKPOINT in its process).
READ_WHEN_USED = {"PYTHONBREAKPOINT"}
DESCRIPTION_FILE = "fork_server.json"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: Top-level folders of the project never imported by a run's processes.
NOT_RUN_CODE = {"tests", "docs", "conf", "runs", "out", "deploy"}
#: How long a child's `start()` waits for it to join the launcher's process group (it unpickles its
#: process object first: milliseconds, more on a loaded machine).
JOIN_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ServerDescription:
    """What a launcher needs to decide whether it may fork from the server, and to reach it."""

    address: str  # the server's unix socket
    pid: int
    session: int  # the server's terminal session (os.getsid)
    python: str  # realpath of the interpreter
    project_root: str
    code_stamp: str  # source_stamp(project_root) when the server started
    import_env: dict[str, str]

    @classmethod
    def read(cls, path: Path) -> "ServerDescription":
        return cls(**json.loads(path.read_text()))


def import_time_env(environ=os.environ) -> dict[str, str]:
    return {k: v for k, v in sorted(environ.items())
            if k.startswith(IMPORT_TIME_ENV_PREFIXES) and k != ENV_VAR and k not in READ_WHEN_USED}


def source_stamp(root: Path = PROJECT_ROOT) -> str:
    """A digest of the path, size and modification time of every project .py file a run's
    processes may import: it changes when any of them is edited."""
    digest = hashlib.sha256()
    for top in sorted(root.iterdir()):
        if not top.is_dir() or top.name.startswith(".") or top.name in NOT_RUN_CODE:
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith(".py"):
                    stat = os.stat(os.path.join(dirpath, name))
                    digest.update(f"{dirpath}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class WarmForkServer:
    """A fork server started here that imports `preload` (as a launcher's own does: see
    workflow.supervision.processes.start_warm_fork_server), which launchers started from here can
    fork from when REALM_FORK_SERVER names its `path`. It ends when this object is closed or this
    process ends."""

    def __init__(self, directory: Path, preload: list[str]):
        directory.mkdir(parents=True, exist_ok=True)
        stamp = source_stamp()
        self._server = forkserver.ForkServer()
        self._server.set_forkserver_preload(preload)
        self._server.ensure_running()  # spawns it; its imports run while we go on
        self.description = ServerDescription(
            address=self._server._forkserver_address, pid=self._server._forkserver_pid, session=os.getsid(0),
            python=os.path.realpath(sys.executable), project_root=str(PROJECT_ROOT), code_stamp=stamp,
            import_env=import_time_env())
        self.path = directory / DESCRIPTION_FILE
        self.path.write_text(json.dumps(asdict(self.description), indent=1))

    def close(self) -> None:
        self._server._stop()
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> "WarmForkServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def why_not(description: ServerDescription, environ=os.environ) -> str | None:
    """None when this process may fork from the described server, else the reason it may not."""
    try:
        os.kill(description.pid, 0)
    except OSError:
        return f"its process {description.pid} is gone"
    if not os.path.exists(description.address):
        return f"its socket {description.address} is gone"
    if description.python != os.path.realpath(sys.executable):
        return f"it runs {description.python}, this launcher {os.path.realpath(sys.executable)}"
    if description.project_root != str(PROJECT_ROOT):
        return f"it imported the project at {description.project_root}, this launcher is at {PROJECT_ROOT}"
    if description.session != os.getsid(0):
        return "this launcher runs in another terminal session (its children could not join its process group)"
    here = import_time_env(environ)
    if description.import_env != here:
        keys = sorted(k for k in set(here) | set(description.import_env) if here.get(k) != description.import_env.get(k))
        return f"these environment variables differ from the server's: {', '.join(keys)}"
    if description.code_stamp != source_stamp(Path(description.project_root)):
        return "a project source file changed since it started"
    return None


def offered_server(environ=os.environ) -> tuple[ServerDescription | None, str | None]:
    """(the warm server this process may fork from, None) when REALM_FORK_SERVER names a usable
    one; (None, why not) when it names one that is not; (None, None) when it names none."""
    value = environ.get(ENV_VAR, "")
    if not value:
        return None, None
    path = Path(value)
    try:
        description = ServerDescription.read(path)
    except (OSError, ValueError, TypeError) as e:
        return None, f"{ENV_VAR}={value}: cannot read the server's description ({type(e).__name__}: {e})"
    reason = why_not(description, environ)
    return (None, f"{ENV_VAR}={value}: not used, {reason}") if reason else (description, None)


class _Client(forkserver.ForkServer):
    """multiprocessing's fork server client, pointed at a server this process did not start."""

    def __init__(self, description: ServerDescription):
        super().__init__()
        self._description = description
        self._forkserver_address = description.address
        # Sent to each child as its own fork server's "alive" end (for a child that starts
        # processes of its own): the write end of a pipe this process holds.
        unused_read_end, self._forkserver_alive_fd = os.pipe()
        os.close(unused_read_end)

    def ensure_running(self) -> None:
        resource_tracker.ensure_running()
        try:
            os.kill(self._description.pid, 0)
        except OSError:
            raise RuntimeError(f"the warm fork server (pid {self._description.pid}, {ENV_VAR}) has ended; "
                               f"unset {ENV_VAR} to let the launcher start its own") from None


class _Popen(popen_forkserver.Popen):
    """multiprocessing's forkserver Popen, asking `client`'s server instead of this process's own."""

    def __init__(self, process_obj, client: _Client):
        self._client = client
        super().__init__(process_obj)

    def _launch(self, process_obj):
        # The child says when it has joined this process's group (WarmProcess.run): until then a
        # signal to the group would miss it, so `start()` returns only after.
        joined_r, process_obj._joined_w = os.pipe()
        try:
            prep_data = spawn.get_preparation_data(process_obj._name)
            buf = io.BytesIO()
            set_spawning_popen(self)
            try:
                reduction.dump(prep_data, buf)
                reduction.dump(process_obj, buf)
            finally:
                set_spawning_popen(None)
            self.sentinel, w = self._client.connect_to_new_process(self._fds)
            _parent_w = os.dup(w)
            self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
            with open(w, "wb", closefd=True) as f:
                f.write(buf.getbuffer())
            self.pid = forkserver.read_signed(self.sentinel)
        finally:
            os.close(process_obj.__dict__.pop("_joined_w"))
        try:  # a byte once it has joined; end of file if it died first
            select.select([joined_r], [], [], JOIN_TIMEOUT_S)
        finally:
            os.close(joined_r)


class WarmProcess(ForkServerProcess):
    """A child forked from a warm server, which first takes the launcher's environment, process
    group and standard streams (its own server's children inherit them)."""

    _client: _Client | None = None

    def __init__(self, client: _Client, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._client = client
        self._launcher_env = dict(os.environ)
        self._launcher_group = os.getpgrp()
        self._launcher_pid = os.getpid()

    def _Popen(self, process_obj):  # noqa: N802 (multiprocessing's name)
        return _Popen(process_obj, self._client)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_client", None)
        state["_launcher_streams"] = [(fd, reduction.DupFd(fd)) for fd in (1, 2) if _is_open(fd)]
        state["_joined"] = reduction.DupFd(state.pop("_joined_w"))
        return state

    def run(self):
        if os.getpgrp() != self._launcher_group:
            os.setpgid(0, self._launcher_group)
            if _stopped(self._launcher_pid):  # the group was stopped (SIGSTOP, SIGTSTP) before we joined it
                os.kill(os.getpid(), signal.SIGSTOP)
        joined = self._joined.detach()
        os.write(joined, b"j")
        os.close(joined)
        os.environ.clear()
        os.environ.update(self._launcher_env)
        for target, stream in self._launcher_streams:
            fd = stream.detach()
            os.dup2(fd, target)
            os.close(fd)
        super().run()


def _stopped(pid: int) -> bool:
    """Whether process `pid` is stopped by a signal (Linux's /proc state T)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


class WarmContext(ForkServerContext):
    """multiprocessing's "forkserver" context whose processes come from a warm server."""

    def __init__(self, description: ServerDescription):
        super().__init__()
        self.description = description
        self._client = _Client(description)

    def Process(self, *args, **kwargs):  # noqa: N802 (multiprocessing's name)
        return WarmProcess(self._client, *args, **kwargs)
