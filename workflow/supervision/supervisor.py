"""The launcher's supervision of one run's processes: start the learner, then the aisrv (and the
evaluator when [eval] is on); restart a crashed or hung aisrv or evaluator with a doubling
back-off (at most app.aisrv_restart_max times per slot; an evaluator given up leaves the run
training); end the run when the learner dies, with the command that resumes it; stop cleanly on
a signal, a stop limit or the evaluation target (aisrv and evaluator first, then the learner's
final checkpoint). Local child processes here; workflow.supervision.ray_supervisor drives Ray
actors through the same logic.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import queue
import shlex
import signal
import socket
import time
from dataclasses import dataclass, field

import psutil
from loguru import logger

from workflow.config import AppConfig
from workflow.supervision.console import Progress, console, status_fields
from workflow.supervision.processes import ChildContext, fork_context, run_child
from workflow.checkpoints.runs import RunPaths

EXIT_OK, EXIT_FAILED, EXIT_BAD_CONFIG = 0, 1, 2

TICK_S = 0.2
LEARNER_READY_TIMEOUT_S = 300.0
AISRV_STOP_GRACE_S = 20.0
LEARNER_STOP_GRACE_S = 120.0
MAX_BACKOFF_S = 60.0
RSS_POLL_S = 2.0
#: What a program that starts launchers (tools/sweep.py) has the kernel send each one when it dies
#: (PR_SET_PDEATHSIG). The kernel sends it once per thread of the launcher and again each time the
#: launcher passes to another thread of the dying parent: so it asks for a clean stop, and its
#: repeats never count as the second signal that kills.
PARENT_GONE_SIGNAL = signal.SIGUSR1
STARTUP_GRACE_S = 180.0  # a child that has not reported yet is still importing (TensorFlow, torch)

def resume_command(args: argparse.Namespace, paths: RunPaths) -> str:
    parts = ["./train.sh"]
    if args.config:
        parts += ["--config", args.config]
    for item in args.overrides:
        if not item.startswith("app.run_name="):
            parts += ["--set", item]
    if args.package:
        parts += ["--package", args.package]
    parts += ["--set", f'app.run_name="{paths.name}"', "--resume"]
    if args.ray is not None:
        parts += ["--ray", args.ray]
    if args.role != "all":
        parts += ["--role", args.role]
    return shlex.join(parts)


# --- supervision ------------------------------------------------------------------------------------

@dataclass
class Child:
    name: str
    role: str
    index: int = 0
    process: mp.Process | None = None
    heartbeat: object = None
    events: object = None  # the running process's own queue
    restarts: int = 0
    next_start: float = 0.0
    given_up: bool = False
    status: dict = field(default_factory=dict)
    reported: bool = False  # posted an event since its start: past the slow imports

    def silent_for(self, now: float) -> float:
        return now - self.heartbeat.value

    def hung(self, now: float, timeout_s: float) -> bool:
        return self.silent_for(now) > (timeout_s if self.reported else max(timeout_s, STARTUP_GRACE_S))


class Supervisor:
    #: Start the aisrv right after the learner, not once it is ready: their imports (torch,
    #: reverb, the package) and envs are built while it starts, then they wait for its port.
    AISRV_START_WITH_LEARNER = True

    def __init__(self, cfg: AppConfig, paths: RunPaths, args: argparse.Namespace, session: int = 0,
                 secret: str | None = None):
        self.cfg = cfg
        self.session = session
        self.secret = secret
        self.app = cfg.app
        self.paths = paths
        self.args = args
        self.mp = fork_context()  # children start from a server that imported their modules
        self.stop_aisrv = self.mp.Value("b", 0, lock=False)
        self.stop_learner = self.mp.Value("b", 0, lock=False)
        self.stop_evaluator = self.mp.Value("b", 0, lock=False)
        self.learner: Child | None = None
        self.aisrv: list[Child] = []
        self.evaluator: Child | None = None  # [eval] on: the run's evaluator (evaluation.evaluator)
        self.target: dict | None = None  # the evaluation target reached: its message and train step
        self.address: str | None = args.learner
        self.learner_port = self.mp.Value("i", 0, lock=False)  # the replay server's port, for aisrv started early
        self.stop_requested = False
        self.stop_signals = 0  # a second signal kills; a stop the run began itself (a limit) does not count
        self.force_kill = False
        self.learner_done: dict | None = None
        self.failure: str | None = None
        self.peak_rss: dict[str, int] = {}
        self.cpu_seconds: dict[str, float] = {}  # user + system, summed over restarts of a slot
        self._cpu_by_pid: dict[int, float] = {}
        self._last_rss_poll = 0.0
        self.progress = Progress(self.app.max_env_steps)
        self.started = time.monotonic()

    # --- signals -----------------------------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        def handler(signum, frame):
            self.stop_signals += 1
            self.force_kill = self.stop_signals > 1
            self.stop_requested = True

        def parent_gone(signum, frame):
            self.stop_requested = True
        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)
        signal.signal(PARENT_GONE_SIGNAL, parent_gone)

    # --- starting children ------------------------------------------------------------------------

    def spawn(self, child: Child, **extra) -> None:
        child.heartbeat = self.mp.Value("d", time.time(), lock=False)
        child.events = self.mp.Queue()
        ctx = ChildContext(role=child.role, index=child.index, config=self.cfg, paths=self.paths,
                           heartbeat=child.heartbeat, events=child.events, parent_pid=os.getpid(), session=self.session,
                           secret=self.secret,
                           stop=self.stop_flag(child.role), **extra)
        child.reported = False
        child.process = self.mp.Process(target=run_child, args=(ctx,), name=child.name, daemon=False)
        child.process.start()
        logger.info(f"started {child.name} (pid {child.process.pid})")
        self.write_process_stats()

    def stop_flag(self, role: str):
        return {"learner": self.stop_learner, "evaluator": self.stop_evaluator}.get(role, self.stop_aisrv)

    def request_stop(self, role: str) -> None:
        """Ask every process of `role` to finish cleanly."""
        self.stop_flag(role).value = 1

    def children(self) -> list[Child]:
        """Every process of the run this launcher supervises."""
        return [c for c in [self.learner, *self.aisrv, self.evaluator] if c is not None]

    def learner_host(self) -> str:
        """Where the aisrv reach the learner's replay server."""
        return "127.0.0.1"

    def start_learner(self, resume: bool | None = None) -> bool:
        self.launch_learner(resume)
        return self.await_learner()

    def launch_learner(self, resume: bool | None = None) -> None:
        self.learner = Child("learner", "learner")
        self.spawn(self.learner, resume=self.args.resume if resume is None else resume)

    def await_learner(self) -> bool:
        """Wait for the learner's ready event (its replay server's port): False if it failed or a
        stop came first."""
        deadline = time.monotonic() + LEARNER_READY_TIMEOUT_S
        while time.monotonic() < deadline:
            self.pump_events()
            if self.address:
                return True
            if self.stop_requested:
                return False
            if not self.learner.process.is_alive():
                self.fail_learner(f"exited with code {self.learner.process.exitcode} while starting", starting=True)
                return False
            time.sleep(TICK_S)
        self.fail_learner(f"did not report ready within {LEARNER_READY_TIMEOUT_S:.0f} s", starting=True)
        return False

    def start_aisrv_slots(self) -> None:
        """One aisrv per slot; before the learner is ready they import and build their envs
        meanwhile, then wait for its port (ChildContext.wait_for_learner)."""
        self.aisrv = [Child(f"aisrv-{i}", "aisrv", index=i) for i in range(self.app.aisrv_num)]
        for child in self.aisrv:
            self.spawn(child, learner_address=self.address, generation=0, learner_port=self.learner_port,
                       learner_host=self.learner_host())

    def start_evaluator(self) -> None:
        """The run's evaluator, when [eval] is on and this launcher holds the learner."""
        if self.cfg.eval.enabled and self.args.role in ("all", "learner") and self.evaluator is None:
            self.evaluator = Child("evaluator", "evaluator")
            self.spawn(self.evaluator)

    # --- events from children -----------------------------------------------------------------------

    def pump_events(self) -> None:
        for child in self.children():
            if child.events is not None:
                self.pump_child(child)

    def pump_child(self, child: Child) -> None:
        while True:
            try:
                kind, name, payload = child.events.get_nowait()
            except (queue.Empty, EOFError, OSError, ValueError):
                return
            child.reported = True
            if kind == "status":
                child.status = payload
            elif kind == "ready" and name == "learner":
                self.address = f"{self.learner_host()}:{payload['port']}"
                self.learner_port.value = int(payload["port"])
                self.learner.status = payload
                self.announce_learner(payload["port"])
            elif kind == "stopping" and name == "learner":
                logger.info(f"learner: {payload.get('reason')}; stopping the aisrv, then the learner")
                self.stop_requested = True  # a stop limit: aisrv first, the learner's final checkpoint last
            elif kind == "done" and name == "learner":
                self.learner_done = payload
                self.learner.status = payload
                self.stop_requested = True  # a stop limit was reached, or the learner was told to stop
            elif kind == "error":
                logger.error(f"{name}: {payload.get('message')}")
            elif kind == "warning":  # what the person at the terminal must know (a failed write, a resume's fallback)
                logger.warning(f"{name}: {payload.get('message')}")
            elif kind == "notice":
                console(f"{name}: {payload.get('message')}")
            elif kind == "target" and name == "evaluator" and self.target is None:
                self.target = payload
                console(f"evaluator: {payload.get('message')}")
                self.stop_requested = True  # as a stop limit: aisrv and evaluator first, the learner's final checkpoint last

    def announce_learner(self, port: int) -> None:
        logger.info(f"learner ready: replay server on port {port} (all interfaces, no authentication), "
                    f"train step {self.learner.status.get('train_step', 0)}")
        if self.args.role == "learner":
            host = socket.gethostname()
            command = ["./train.sh", "--role", "aisrv", "--learner", f"{host}:{port}"]
            if self.args.config:
                command[1:1] = ["--config", self.args.config]
            console(f"aisrv on other machines join with: {shlex.join(command)}  (private network only)")

    # --- supervision --------------------------------------------------------------------------------

    def supervise_aisrv(self) -> None:
        now_wall, now = time.time(), time.monotonic()
        for child in self.aisrv:
            if child.given_up:
                continue
            proc = child.process
            if proc is None:
                if now >= child.next_start:
                    self.spawn(child, learner_address=self.address, generation=child.restarts)
                continue
            if not proc.is_alive():
                self.restart_later(child, f"exited with code {proc.exitcode}")
            elif child.hung(now_wall, self.app.heartbeat_timeout_seconds):
                proc.kill()
                proc.join(5)
                self.restart_later(child, f"no heartbeat for {child.silent_for(now_wall):.0f} s (killed)")
        if self.aisrv and all(c.given_up for c in self.aisrv):
            self.failure = "every aisrv failed more than app.aisrv_restart_max times; see the aisrv-*.log files"
            self.stop_requested = True

    def supervise_evaluator(self) -> None:
        """Restart the evaluator as an aisrv is restarted; one given up leaves the run training."""
        child = self.evaluator
        if child is None or child.given_up:
            return
        now_wall, now = time.time(), time.monotonic()
        if child.process is None:
            if now >= child.next_start:
                self.spawn(child)
        elif not child.process.is_alive():
            self.restart_later(child, f"exited with code {child.process.exitcode}")
        elif child.hung(now_wall, self.app.heartbeat_timeout_seconds):
            child.process.kill()
            child.process.join(5)
            self.restart_later(child, f"no heartbeat for {child.silent_for(now_wall):.0f} s (killed)")
        if child.given_up:
            logger.error("the run goes on training without evaluations")

    def restart_later(self, child: Child, why: str) -> None:
        child.process = None
        child.restarts += 1
        if child.restarts > self.app.aisrv_restart_max:
            child.given_up = True
            logger.error(f"{child.name} {why}; restarted {child.restarts - 1} times already "
                         f"(app.aisrv_restart_max); giving it up. See {self.paths.log / (child.name + '.log')}")
            return
        delay = min(MAX_BACKOFF_S, self.app.aisrv_restart_backoff_seconds * 2 ** (child.restarts - 1))
        child.next_start = time.monotonic() + delay
        logger.warning(f"{child.name} {why}; restart {child.restarts}/{self.app.aisrv_restart_max} in {delay:.1f} s")

    def check_learner(self) -> None:
        if self.learner is None:
            return
        proc = self.learner.process
        if not proc.is_alive():
            self.pump_events()
            if self.learner_done is None:
                self.fail_learner(f"exited with code {proc.exitcode}")
            self.stop_requested = True
        elif self.learner.hung(time.time(), self.app.heartbeat_timeout_seconds):
            silent = self.learner.silent_for(time.time())
            proc.kill()
            proc.join(5)
            self.fail_learner(f"stopped beating its heartbeat ({silent:.0f} s silent; killed)")
            self.stop_requested = True

    def fail_learner(self, why: str, starting: bool = False) -> None:
        self.failure = f"the learner {why}; see {self.paths.log / 'learner.log'}."
        if not starting:
            self.failure += f"\nResume from the newest checkpoint with:\n  {resume_command(self.args, self.paths)}"

    # --- observability ------------------------------------------------------------------------------

    def poll_resources(self, force: bool = False) -> None:
        """Peak RSS and CPU time of every process (polled every RSS_POLL_S, and once at shutdown)."""
        if not force and time.monotonic() - self._last_rss_poll < RSS_POLL_S:
            return
        self._last_rss_poll = time.monotonic()
        procs = [("launcher", os.getpid())]
        procs += [(c.name, c.process.pid) for c in self.children() if c.process and c.process.pid]
        for name, pid in procs:
            try:
                proc = psutil.Process(pid)
                rss = proc.memory_info().rss
                times = proc.cpu_times()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            self.peak_rss[name] = max(self.peak_rss.get(name, 0), rss)
            cpu = times.user + times.system
            self.cpu_seconds[name] = self.cpu_seconds.get(name, 0.0) + cpu - self._cpu_by_pid.get(pid, 0.0)
            self._cpu_by_pid[pid] = cpu

    def write_process_stats(self) -> None:
        """<run>/log/process_stats.json: pids, peak RSS and restarts per process (for tools and tests)."""
        children = self.children()
        stats = {"wall_seconds": round(time.monotonic() - self.started, 2),
                 "pids": {"launcher": os.getpid(),
                          **{c.name: c.process.pid for c in children if c.process is not None}},
                 "peak_rss_bytes": self.peak_rss,
                 "cpu_seconds": {k: round(v, 2) for k, v in self.cpu_seconds.items()},
                 "aisrv_restarts": {c.name: c.restarts for c in self.aisrv},
                 **({"evaluator_restarts": self.evaluator.restarts} if self.evaluator else {}),
                 "learner": self.learner.status if self.learner else None,
                 **self.placement_stats()}
        path = self.paths.log / "process_stats.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(stats, indent=1, default=str) + "\n")
        os.replace(tmp, path)

    def show_progress(self) -> None:
        aisrv = [(c.status, c.process is not None and c.process.is_alive()) for c in self.aisrv]
        fields = status_fields(self.learner.status if self.learner is not None else None, aisrv,
                               self.evaluator.status if self.evaluator is not None else None,
                               self.app.replay_buffer_capacity)
        self.progress.update(fields.pop("env_steps"), {**fields, **self.placement_fields()})

    def placement_stats(self) -> dict:
        """Extra process_stats.json entries on where the processes run (one machine: none)."""
        return {}

    def placement_fields(self) -> dict:
        """Extra progress fields on where the processes run (one machine: none)."""
        return {}

    # --- main loop and shutdown ---------------------------------------------------------------------

    def run(self) -> int:
        self.install_signal_handlers()
        try:
            if self.args.role in ("all", "learner"):
                self.launch_learner()
                if self.args.role == "all" and self.AISRV_START_WITH_LEARNER:
                    self.start_aisrv_slots()  # their imports overlap the learner's start
                if self.AISRV_START_WITH_LEARNER:
                    self.start_evaluator()
                if not self.await_learner():
                    return self.shutdown()
            if self.args.role in ("all", "aisrv") and not self.aisrv:
                self.start_aisrv_slots()
            self.start_evaluator()
            while not self.stop_requested:
                self.pump_events()
                self.check_learner()
                if not self.stop_requested:
                    self.supervise_aisrv()
                    self.supervise_evaluator()
                self.poll_resources()
                self.show_progress()
                time.sleep(TICK_S)
            return self.shutdown()
        finally:
            self.progress.close()

    def wait_for(self, children: list[Child], grace_s: float) -> None:
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and not self.force_kill:
            self.pump_events()
            if not any(c.process is not None and c.process.is_alive() for c in children):
                return
            time.sleep(TICK_S)
        for child in children:
            if child.process is not None and child.process.is_alive():
                logger.warning(f"{child.name} did not stop within {grace_s:.0f} s; killing it")
                child.process.kill()
                child.process.join(5)

    def shutdown(self) -> int:
        logger.info("stopping: aisrv first, then the learner (final checkpoint)")
        self.poll_resources(force=True)
        self.request_stop("aisrv")
        early = self.aisrv
        if self.evaluator is not None and self.evaluator.process is not None:
            self.request_stop("evaluator")
            early = [*self.aisrv, self.evaluator]
        self.wait_for(early, AISRV_STOP_GRACE_S)
        if self.learner is not None and self.learner.process is not None:
            self.request_stop("learner")
            self.wait_for([self.learner], LEARNER_STOP_GRACE_S)
            self.pump_events()
            if self.learner_done is None and self.failure is None:
                self.fail_learner(f"ended without its final checkpoint (exit code {self.learner.process.exitcode})")
        self.write_process_stats()
        self.progress.close()
        if self.failure:
            console(self.failure, error=True)
            return EXIT_FAILED
        if self.learner_done is not None:
            s = self.learner_done
            reason = s.get("reason")
            if self.target is not None:
                reason = f"reached the evaluation target at train step {self.target.get('train_step')}"
            console(f"learner stopped ({reason}): train step {s.get('train_step')}, "
                    f"{s.get('env_steps')} env steps, {s.get('episodes')} episodes. Run: {self.paths.root}")
        elif self.learner is None:
            steps = sum(int(c.status.get("env_steps", 0)) for c in self.aisrv)
            console(f"aisrv stopped: {steps} env steps in this session. Logs: {self.paths.log}")
        return EXIT_OK
