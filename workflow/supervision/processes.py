"""What the launcher and its child processes share: the child's context (heartbeat, stop flag,
event queue) and the child's entry point.

Children are forked from the launcher's fork server (multiprocessing's "forkserver" method; see
workflow/supervision/fork_server.py), a clean process that imported the roles' modules, and
receive a `ChildContext`. The entry point `run_child` imports the role's module (already loaded
there), so the launcher itself never imports reverb or TensorFlow. A child beats its heartbeat
(a shared double holding wall time) from its main loop; the launcher treats a stale heartbeat
as a hung process.

Nothing here takes a lock shared between processes (the heartbeat and stop flags are lock-free
shared values, each child has its own event queue): a child killed at any instant cannot leave
a lock held that would freeze the others.
"""
from __future__ import annotations

import functools
import importlib
import multiprocessing as mp
import os
import queue
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from workflow.config import AppConfig
from workflow.checkpoints.runs import RunPaths
from workflow.supervision import warm_fork_server

#: Each role's module, imported by name inside its own process (its `main(ctx)` runs there). The
#: evaluator's stands on the evaluation floor, above the training system (tests/test_layering.py):
#: it imports the training system, which names it here and never imports it.
ROLE_MODULES = {"learner": "workflow.learner", "aisrv": "workflow.aisrv", "evaluator": "evaluation.evaluator"}
#: What the launcher's fork server imports before it forks a child: its signals, then every
#: role's module (a failing one is left to the child, which reports it like any other error).
FORK_SERVER_PRELOAD = ["workflow.supervision.fork_server"]
#: Roles that are one process per run, named by their role (the aisrv are aisrv-<i>).
SINGLE_ROLES = ("learner", "evaluator")
STATUS_INTERVAL_S = 1.0
LEARNER_PORT_POLL_S = 0.05


@dataclass
class ChildContext:
    role: str  # "learner", "aisrv" or "evaluator"
    index: int  # aisrv slot (0 for the learner and the evaluator)
    config: AppConfig
    paths: RunPaths
    heartbeat: Any  # shared double (no lock): wall time of the last beat
    stop: Any  # shared byte (no lock): 1 = finish cleanly
    events: Any  # this child's own multiprocessing Queue of (kind, name, payload) for the launcher
    parent_pid: int
    learner_address: str | None = None  # aisrv: where the replay server listens (None: see learner_port)
    # aisrv started while the learner starts (their imports overlap): a shared int, the replay
    # server's port on learner_host once the learner is ready, 0 until then
    learner_port: Any = None
    learner_host: str = "127.0.0.1"
    resume: bool = False  # learner: continue from the newest checkpoint
    generation: int = 0  # aisrv: restarts of this slot so far (varies its seeds)
    session: int = 0  # this run's sessions before this one (--resume count; varies the aisrv's seeds)
    secret: str | None = None  # the run's signing key (workflow.transport.signing); None: unsigned

    @property
    def name(self) -> str:
        return self.role if self.role in SINGLE_ROLES else f"aisrv-{self.index}"

    def beat(self) -> None:
        self.heartbeat.value = time.time()

    def should_stop(self) -> bool:
        """Asked to stop, or orphaned (the launcher died without telling us)."""
        return bool(self.stop.value) or self.launcher_gone()

    def launcher_gone(self) -> bool:
        parent = mp.parent_process()
        if parent is not None:  # a child of the launcher's fork server: its pipe from the launcher closed
            return not parent.is_alive()
        return os.getppid() != self.parent_pid  # a Ray actor: its worker process's parent

    def wait_for_learner(self) -> str | None:
        """The replay server's address, waiting (heartbeat alive) for the learner's port when
        this aisrv was started before the learner was ready; None if asked to stop first."""
        while self.learner_address is None:
            port = self.learner_port.value if self.learner_port is not None else 0
            if port:
                self.learner_address = f"{self.learner_host}:{port}"
                break
            self.beat()
            if self.should_stop():
                return None
            time.sleep(LEARNER_PORT_POLL_S)
        return self.learner_address

    def post(self, kind: str, payload: dict) -> None:
        try:
            self.events.put_nowait((kind, self.name, payload))
        except queue.Full:
            pass


def fork_context():
    """The launcher's multiprocessing context: its children fork from one fork server (per
    launcher) that imported their modules (FORK_SERVER_PRELOAD) before the first of them, or
    from a warm one that REALM_FORK_SERVER names, when they would come out the same
    (workflow/supervision/warm_fork_server.py)."""
    warm = _warm_context(os.environ.get(warm_fork_server.ENV_VAR, ""))
    if warm is not None:
        return warm
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(FORK_SERVER_PRELOAD)
    return context


def start_warm_fork_server(directory) -> warm_fork_server.WarmForkServer:
    """A warm fork server that imports what a launcher's own would (FORK_SERVER_PRELOAD), for the
    launchers this process starts with REALM_FORK_SERVER set to its `path`."""
    return warm_fork_server.WarmForkServer(Path(directory), list(FORK_SERVER_PRELOAD))


@functools.lru_cache(maxsize=None)
def _warm_context(named: str):
    """The warm server's context, decided once per process (for the value REALM_FORK_SERVER had)."""
    description, why_not = warm_fork_server.offered_server()
    if why_not:
        logger.info(f"{why_not}; this run starts its own fork server")
    return warm_fork_server.WarmContext(description) if description else None


class ForkedCallError(RuntimeError):
    """A call_in_fork child that ended without an answer (a package that exits or crashes on import)."""


def call_in_fork(function, *args):
    """`function(*args)` in a short-lived child forked from the launcher's fork server: its
    result, or its exception raised here. A check that imports what the children will import
    (torch, a package) costs the launcher none of those imports, and starts the fork server the
    run's children come from."""
    context = fork_context()
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_call_and_send, args=(send, function, args), name="check", daemon=True)
    process.start()
    send.close()
    try:
        kind, value = receive.recv()
    except EOFError:
        process.join()
        raise ForkedCallError(f"{getattr(function, '__qualname__', function)} ended its process "
                              f"(exit code {process.exitcode}) without an answer") from None
    finally:
        receive.close()
    process.join()
    if kind == "raised":
        raise value
    return value


def _call_and_send(send, function, args) -> None:
    try:
        answer = ("returned", function(*args))
    except Exception as e:
        answer = ("raised", e)
    try:
        send.send(answer)
    except Exception as e:  # an answer that does not pickle: said as text
        send.send(("raised", RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}" if answer[0] == "raised"
                                          else f"the answer does not pickle: {e}")))
    send.close()


def _redirect_std_streams(path) -> None:
    """Native libraries (reverb, TensorFlow) print to fds 1 and 2; keep that in the run's log dir
    instead of on top of the launcher's progress bar."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)


def run_child(ctx: ChildContext) -> None:
    """Entry point of every child process (multiprocessing target)."""
    # Ctrl-C, and SIGTERM sent to the whole group (systemd, kill -TERM -- -PGID), reach every
    # process: the launcher alone decides, stopping the aisrv first and the learner last.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _exit(ctx, run_role(ctx, ctx.paths.log))


def run_role(ctx: ChildContext, log_dir) -> int:
    """The role's `main(ctx)` with its log in `log_dir`; the exit code (1: it raised, logged and
    posted as an "error" event). Shared by child processes and Ray actors (workflow.supervision.ray_roles)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    _redirect_std_streams(log_dir / f"{ctx.name}.out")
    from workflow.metrics import setup_logging

    log = setup_logging(ctx.name, log_dir, ctx.config.app.log_level)
    ctx.beat()
    try:
        module = importlib.import_module(ROLE_MODULES[ctx.role])
        ctx.post("started", {})  # past the slow imports: the launcher's heartbeat timeout applies from now
        module.main(ctx)
    except Exception as e:
        log.exception(f"{ctx.name} failed: {type(e).__name__}: {e}")
        ctx.post("error", {"message": f"{type(e).__name__}: {e}"})
        return 1
    return 0


def _exit(ctx: ChildContext, code: int) -> None:
    """Deliver queued events, then leave without interpreter shutdown: native threads (reverb's
    gRPC, TensorFlow) can hold it up, and all the work is already on disk."""
    ctx.events.close()
    if not ctx.launcher_gone():
        ctx.events.join_thread()
    else:
        ctx.events.cancel_join_thread()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
