"""The learner and the aisrv as Ray actors (`./train.sh --ray`): one actor process runs one
role's `main(ctx)`, the same code a local child process runs (workflow.supervision.processes.run_role).

The role runs in one of the actor's threads; the driver (workflow.supervision.ray_supervisor) calls `poll`
about five times a second from another, for what a local child shares through multiprocessing:
the heartbeat's age (an age, not a time: the nodes' clocks may differ), the role's events, new
lines of its log files (so every node's logs reach the run directory on the driver), where it
runs and what it uses. `stop` asks the role to finish cleanly, as the stop flag does locally.

An aisrv writes nothing to the run directory: its logs and its copy of the model pool live
under a node-local scratch directory. The learner writes checkpoints and metrics into the run
directory itself, and the evaluator ([eval]) reads the checkpoints and writes the evaluations
beside them, so both must run where that directory is (the driver's node, or storage both
read): each checks a token the driver wrote there before it starts.
"""
from __future__ import annotations

import dataclasses
import os
import queue
import shutil
import tempfile
import time
from pathlib import Path

import ray

from workflow.config import AppConfig
from workflow.supervision.processes import ChildContext, run_role
from workflow.supervision.ray_cluster import normal_priority
from workflow.checkpoints.runs import RunPaths
from workflow.transport.signing import SECRET_ENV

RUN_TOKEN_FILE = "ray_run_token"
SHIPPED_LOGS = (".log", ".out")
MAX_SHIPPED_BYTES = 1 << 20  # per file and poll: a burst of log lines arrives over a few polls
EXIT_RUN_DIR_UNREACHABLE = 3
#: Roles that work in the run directory itself (the others under a node-local scratch directory).
RUN_DIR_ROLES = ("learner", "evaluator")


class Cell:
    """A plain attribute holder standing in for a multiprocessing.Value inside one process."""

    def __init__(self, value):
        self.value = value


class RunDirUnreachable(RuntimeError):
    pass


def node_scratch(run_name: str, token: str) -> Path:
    """This node's directory for one run's actors (logs, model pool copies)."""
    return Path(tempfile.gettempdir()) / "realm-ray" / f"{run_name}-{token[:12]}"


def scratch_paths(paths: RunPaths, scratch: Path) -> RunPaths:
    """The run's paths moved under this node's scratch directory (for an aisrv)."""
    root = scratch / "run"
    return dataclasses.replace(paths, root=root, log=scratch / "log", ckpt_root=root / "ckpt", tb=root / "tb",
                               metrics_csv=root / "metrics.csv", replay_ckpt=root / "replay_ckpt")


class LogShipper:
    """New bytes of an actor's log files since the last call (a rotated file starts over)."""

    def __init__(self, log_dir: Path, name: str):
        self._files = [log_dir / f"{name}{suffix}" for suffix in SHIPPED_LOGS]
        self._offsets = {path: 0 for path in self._files}

    def new_bytes(self) -> dict[str, bytes]:
        shipped = {}
        for path in self._files:
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                continue
            if size < self._offsets[path]:
                self._offsets[path] = 0
            if size == self._offsets[path]:
                continue
            with open(path, "rb") as f:
                f.seek(self._offsets[path])
                data = f.read(MAX_SHIPPED_BYTES)
            self._offsets[path] += len(data)
            shipped[path.name] = data
        return shipped


@ray.remote(max_concurrency=4)
class RoleActor:
    """One learner, aisrv or evaluator (see the module docstring)."""

    def __init__(self, role: str, index: int, config: AppConfig, paths: RunPaths, session: int, token: str,
                 cwd: str):
        if os.path.isdir(cwd):  # relative paths in the config (a map file, a package) mean what they mean on the driver
            os.chdir(cwd)
        normal_priority()
        self.role, self.index, self.config, self.session, self.token = role, index, config, session, token
        self.run_paths = paths
        self.scratch = node_scratch(paths.name, token)
        self.paths = paths if role in RUN_DIR_ROLES else scratch_paths(paths, self.scratch)
        self.log_dir = self.paths.log
        self.ctx: ChildContext | None = None
        self.shipper: LogShipper | None = None
        self.started = time.time()

    def run(self, generation: int = 0, learner_address: str | None = None, resume: bool = False) -> int:
        """The role's main loop, to its end; the exit code (3: the run directory is not here)."""
        ctx = ChildContext(role=self.role, index=self.index, config=self.config, paths=self.paths,
                           heartbeat=Cell(time.time()), stop=Cell(0), events=queue.Queue(), parent_pid=os.getppid(),
                           learner_address=learner_address, resume=resume, generation=generation,
                           session=self.session, secret=os.environ.get(SECRET_ENV) or None)
        self.ctx = ctx
        self.shipper = LogShipper(self.log_dir, ctx.name)
        if self.role in RUN_DIR_ROLES:
            try:
                self.check_run_dir()
            except RunDirUnreachable as e:
                ctx.post("error", {"message": str(e)})
                return EXIT_RUN_DIR_UNREACHABLE
        return run_role(ctx, self.log_dir)

    def check_run_dir(self) -> None:
        token_file = self.run_paths.root / RUN_TOKEN_FILE
        try:
            found = token_file.read_text().strip()
        except OSError:
            found = ""
        if found != self.token:
            raise RunDirUnreachable(
                f"the {self.role}'s node ({ray.util.get_node_ip_address()}) does not see the run directory "
                f"{self.run_paths.root} (no {RUN_TOKEN_FILE} of this run there): give the driver's node the "
                f"realm_learner resource, or keep app.run_dir on storage every node reads")

    def poll(self) -> dict:
        """What the driver needs to supervise this role (see the module docstring)."""
        import psutil

        ctx = self.ctx
        events = []
        if ctx is not None:
            while True:
                try:
                    events.append(ctx.events.get_nowait())
                except queue.Empty:
                    break
        proc = psutil.Process()
        times = proc.cpu_times()
        return {"beat_age": time.time() - (ctx.heartbeat.value if ctx else self.started),
                "events": events,
                "logs": self.shipper.new_bytes() if self.shipper and self.role not in RUN_DIR_ROLES else {},
                "node_id": ray.get_runtime_context().get_node_id(),
                "ip": ray.util.get_node_ip_address(),
                "pid": os.getpid(), "rss": proc.memory_info().rss, "cpu": times.user + times.system}

    def cleanup(self) -> None:
        """Remove this node's scratch directory of the run (an aisrv's logs already shipped)."""
        if self.role not in RUN_DIR_ROLES:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def stop(self) -> None:
        if self.ctx is not None:
            self.ctx.stop.value = 1
