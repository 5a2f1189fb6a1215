"""`python -m workflow.launcher` (what ./train.sh runs): validate the config, then start and
supervise the learner (which hosts the replay server) and the aisrv processes.

    ./train.sh [--config F] [--set section.key=value ...] [--resume]
               [--role all|learner|aisrv] [--learner HOST:PORT]
    ./train.sh --package DIR [--train-test] [--set app.algo="dqn" ...]   # a Kaiwu code package

--role all      (default) learner + app.aisrv_num aisrv on this machine
--role learner  learner only; prints the address aisrv on other machines join
--role aisrv    app.aisrv_num aisrv that join the learner at --learner HOST:PORT

--package DIR   train the Kaiwu code package at DIR (its conf/configure_app.toml over the
                platform's defaults, conf/kaiwu_package.toml; app.algo picks the algorithm folder)
--train-test    the platform's train_test.py check: small replay, stop after the first train step

Supervision: an aisrv that crashes or stops beating its heartbeat is restarted with a doubling
back-off, at most app.aisrv_restart_max times per slot. A learner that dies ends the run with
the command that resumes it. Ctrl-C or SIGTERM stops every process cleanly, the learner
writing a final checkpoint; a second Ctrl-C kills at once.
One launcher at a time holds a run (workflow.runs.RunLock): a second start or --resume of a run
in use exits 2 naming the holder's pid.
Exit codes: 0 finished or stopped cleanly, 1 a process failed, 2 bad config or arguments, or the
run is in use or its counters are lost (nothing started).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import queue
import secrets
import shlex
import shutil
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from loguru import logger
from tqdm import tqdm

from workflow.config import PACKAGE_DEFAULTS, PLATFORM_ONLY_KEYS, AppConfig, ConfigError, load_config, save_effective_config
from workflow.processes import ChildContext, run_child
from workflow.ray_cluster import check_address
from workflow.runs import RunError, RunPaths, hold_run, locate_run, resume_counters
from workflow.signing import SECRET_ENV

EXIT_OK, EXIT_FAILED, EXIT_BAD_CONFIG = 0, 1, 2
TICK_S = 0.2
LEARNER_READY_TIMEOUT_S = 300.0
AISRV_STOP_GRACE_S = 20.0
LEARNER_STOP_GRACE_S = 120.0
MAX_BACKOFF_S = 60.0
RSS_POLL_S = 2.0
STARTUP_GRACE_S = 180.0  # a child that has not reported yet is still importing (TensorFlow, torch)
PLAIN_STATUS_EVERY_S = 30.0  # without a terminal: one status line (stderr and launcher.log) this often


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="./train.sh", description="Train one of the project's agents or a Kaiwu code package (learner + aisrv processes).")
    parser.add_argument("--config", default=None, help="TOML config (default conf/configure_app.toml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config value (TOML literal), repeatable")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run named by app.run_name (default: the newest run) from its newest checkpoint")
    parser.add_argument("--role", choices=("all", "learner", "aisrv"), default="all")
    parser.add_argument("--learner", default=None, metavar="HOST:PORT", help="replay server to join (--role aisrv)")
    parser.add_argument("--ray", default=None, metavar="local|auto|HOST:PORT",
                        help="run the learner and the aisrv as Ray actors: 'local' starts Ray on this machine, 'auto' "
                             "joins the cluster this host belongs to, HOST:PORT a given head (workflow.ray_supervisor)")
    parser.add_argument("--package", default=None, metavar="DIR",
                        help="train a Kaiwu code package (default config: DIR/conf/configure_app.toml)")
    parser.add_argument("--train-test", action="store_true",
                        help="with --package: the platform's train_test check (train once with a tiny replay, then stop)")
    return parser.parse_args(argv)


#: The platform's train_test.py settings: a tiny replay so the learner trains at once, one train step.
TRAIN_TEST_OVERRIDES = ("app.replay_buffer_capacity=10", "app.preload_ratio=10", "app.train_batch_size=2",
                        "app.aisrv_num=1", "app.aisrv_restart_max=0", "app.max_train_steps=1", "app.max_minutes=10",
                        "app.dump_model_freq=1")
#: What the platform's train_test.py waits for: the checkpoint of the first train step.
TRAIN_TEST_CHECKPOINT = "model.ckpt-1.pkl"


def load_run_config(args: argparse.Namespace) -> AppConfig:
    """The run's config: the file (or the package's own) with --set applied; a package is checked
    by importing it, so a broken one fails here naming its file and line."""
    if not args.package:
        if args.train_test:
            raise ConfigError("--train-test checks a Kaiwu code package: add --package DIR")
        return load_config(args.config, args.overrides)
    from workflow.kaiwu_package import (KaiwuPackage, PackageError, config_file, env_conf_file, package_kaiwu_version,
                                        package_layout, platform_config)

    root = Path(args.package).resolve()
    if not root.is_dir():
        raise ConfigError(f"--package {args.package}: not a directory")
    overrides = [f"app.package={json.dumps(str(root))}"]
    overrides += list(TRAIN_TEST_OVERRIDES) if args.train_test else []
    cfg = load_config(args.config or config_file(root), overrides + list(args.overrides), base=PACKAGE_DEFAULTS)
    version = package_kaiwu_version(root, cfg.app.kaiwu_version)
    root, layout = package_layout(root, cfg.app.algo, version)
    if env_conf_file(root, layout) is not None:
        check_env_conf_file(env_conf_file(root, layout))
    try:
        KaiwuPackage.load(root, cfg.app.algo, platform_config(cfg, "launcher", locate_run(cfg.app, args.resume)),
                          kaiwu_version=version)
    except PackageError as e:
        raise ConfigError(str(e)) from e
    return cfg


def check_env_conf_file(path: Path) -> None:
    """A 2025 package's train_env_conf.toml, as its workflow will hand it to env.reset (with the
    view_size the platform's read_usr_conf adds), passes the simulator's checks: else ConfigError
    naming the file and the key (on the platform a bad one only shows as a reset that times out)."""
    import toml

    from realm.usr_conf import UsrConfError, validate_env_conf

    try:
        table = toml.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, toml.TomlDecodeError) as e:
        raise ConfigError(f"{path}: cannot read it ({type(e).__name__}: {e})") from None
    env_conf = table.get("env_conf")
    if not isinstance(env_conf, dict):
        raise ConfigError(f"{path}: expected an [env_conf] table (start, end, treasure_random, treasure_count, "
                          f"treasure_id, talent_type, max_step); found {', '.join(map(repr, table)) or 'nothing'}")
    try:
        validate_env_conf({"env_conf": {**env_conf, "view_size": env_conf.get("view_size", 25)}})
    except UsrConfError as e:
        raise ConfigError(f"{path}: {e}") from None


# --- checks before anything starts ----------------------------------------------------------------

def check_episode_settings(cfg: AppConfig) -> None:
    """Build the env and reset it with the usr_confs the project package's episode loop may use
    (its settings' `usr_confs_to_check`: the curriculum at each stage), so a map or curriculum the
    simulator rejects fails here, not in every aisrv."""
    from realm import make_env
    from workflow.kaiwu_package import PROJECT_ALGORITHMS

    from workflow.kaiwu_package import package_kaiwu_version

    version = package_kaiwu_version(cfg.app.package, cfg.app.kaiwu_version) if cfg.app.package else "2024"
    try:
        env = make_env(**cfg.env.make_kwargs(version))
    except (ValueError, OSError, TypeError) as e:
        raise ConfigError(f"[env]: the simulator rejects it: {e}") from e
    if cfg.app.package:
        return  # a platform package's episode settings are its own code's
    project = PROJECT_ALGORITHMS[cfg.app.algo]
    try:  # the rules across the package's sections
        settings = project.settings_class.from_dict({name: cfg.to_dict()[name] for name in project.sections})
    except ValueError as e:
        raise ConfigError(str(e)) from e
    for section, when, usr_conf in settings.usr_confs_to_check(cfg.app.seed):
        try:
            env.reset(usr_conf=usr_conf)
        except ValueError as e:  # realm.UsrConfError is a ValueError
            raise ConfigError(f"{section} produces a usr_conf the simulator rejects ({when}): {e}; "
                              f"usr_conf = {usr_conf}") from e


def check_replay_memory(cfg: AppConfig) -> None:
    """The sample table when full (replay_buffer_capacity rows of the package's SAMPLE_DIM float32
    values) fits in this machine's memory: a learner whose replay outgrows it dies, or swaps, long
    after the start."""
    from workflow.kaiwu_package import KaiwuPackage, PackageError

    try:
        sample_dim = KaiwuPackage.of_run(cfg, "launcher", None).sample_dim
    except PackageError as e:
        raise ConfigError(str(e)) from e
    capacity, row_bytes, memory = cfg.app.replay_buffer_capacity, 4 * sample_dim, psutil.virtual_memory().total
    if capacity * row_bytes > memory:
        raise ConfigError(f"app.replay_buffer_capacity = {capacity}: that many samples of {sample_dim} float32 values "
                          f"need {capacity * row_bytes / 2**30:,.1f} GiB, more than this machine's "
                          f"{memory / 2**30:,.1f} GiB of memory; at most {memory // row_bytes}")


def check_arguments(args: argparse.Namespace) -> None:
    if args.role == "aisrv" and not args.learner:
        raise ConfigError("--role aisrv needs --learner HOST:PORT (printed by the learner at start)")
    if args.learner and args.role != "aisrv":
        raise ConfigError("--learner HOST:PORT is for --role aisrv")
    if args.learner and (":" not in args.learner or not args.learner.rsplit(":", 1)[1].isdigit()):
        raise ConfigError(f"--learner {args.learner!r}: expected HOST:PORT")
    if args.ray is not None and (args.role != "all" or args.learner):
        raise ConfigError("--ray places the learner and the aisrv itself: leave out --role and --learner")
    if args.ray is not None:
        try:
            check_address(args.ray)
        except ValueError as e:
            raise ConfigError(str(e)) from None
    if args.resume and args.role == "aisrv":
        raise ConfigError("--resume is for the learner (--role all or learner); aisrv hold no state")


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


class Progress:
    """One line: env steps, SPS, episodes, mean score, model version, buffer fill."""

    def __init__(self, total: int | None):
        bar_format = ("{desc}{percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt} env steps [{elapsed}<{remaining}]{postfix}"
                      if total else "{desc}{n_fmt} env steps [{elapsed}]{postfix}")
        width = shutil.get_terminal_size(fallback=(120, 24)).columns
        self.bar = tqdm(total=total or None, unit_scale=True, bar_format=bar_format, ncols=width if width > 0 else 120,
                        disable=not sys.stderr.isatty())
        self.history: deque[tuple[float, int]] = deque(maxlen=64)
        self.last_plain = 0.0

    def sps(self, env_steps: int) -> float:
        now = time.monotonic()
        self.history.append((now, env_steps))
        while len(self.history) > 2 and now - self.history[0][0] > 10.0:
            self.history.popleft()
        (t0, s0), (t1, s1) = self.history[0], self.history[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0

    def update(self, env_steps: int, fields: dict) -> None:
        sps = self.sps(env_steps)
        text = f"{sps:,.0f} sps " + " ".join(f"{k} {v}" for k, v in fields.items())
        if not self.bar.disable:
            self.bar.n = env_steps
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.refresh()
        elif time.monotonic() - self.last_plain >= PLAIN_STATUS_EVERY_S:
            self.last_plain = time.monotonic()
            line = f"progress: {env_steps} env steps, {text}"
            logger.info(line)
            print(line, file=sys.stderr, flush=True)  # no terminal (a pipe, CI, nohup): a line every so often

    def close(self) -> None:
        self.bar.close()


class Supervisor:
    def __init__(self, cfg: AppConfig, paths: RunPaths, args: argparse.Namespace, session: int = 0,
                 secret: str | None = None):
        self.cfg = cfg
        self.session = session
        self.secret = secret
        self.app = cfg.app
        self.paths = paths
        self.args = args
        self.mp = mp.get_context("spawn")
        self.stop_aisrv = self.mp.Value("b", 0, lock=False)
        self.stop_learner = self.mp.Value("b", 0, lock=False)
        self.learner: Child | None = None
        self.aisrv: list[Child] = []
        self.address: str | None = args.learner
        self.stop_requested = False
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
            if self.stop_requested:
                self.force_kill = True
            self.stop_requested = True
        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)

    # --- starting children ------------------------------------------------------------------------

    def spawn(self, child: Child, **extra) -> None:
        child.heartbeat = self.mp.Value("d", time.time(), lock=False)
        child.events = self.mp.Queue()
        ctx = ChildContext(role=child.role, index=child.index, config=self.cfg, paths=self.paths,
                           heartbeat=child.heartbeat, events=child.events, parent_pid=os.getpid(), session=self.session,
                           secret=self.secret,
                           stop=self.stop_learner if child.role == "learner" else self.stop_aisrv, **extra)
        child.reported = False
        child.process = self.mp.Process(target=run_child, args=(ctx,), name=child.name, daemon=False)
        child.process.start()
        logger.info(f"started {child.name} (pid {child.process.pid})")
        self.write_process_stats()

    def request_stop(self, role: str) -> None:
        """Ask every process of `role` to finish cleanly."""
        (self.stop_learner if role == "learner" else self.stop_aisrv).value = 1

    def learner_host(self) -> str:
        """Where the aisrv reach the learner's replay server."""
        return "127.0.0.1"

    def start_learner(self, resume: bool | None = None) -> bool:
        self.learner = Child("learner", "learner")
        self.spawn(self.learner, resume=self.args.resume if resume is None else resume)
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
        self.aisrv = [Child(f"aisrv-{i}", "aisrv", index=i) for i in range(self.app.aisrv_num)]
        for child in self.aisrv:
            self.spawn(child, learner_address=self.address, generation=0)

    # --- events from children -----------------------------------------------------------------------

    def pump_events(self) -> None:
        for child in [self.learner, *self.aisrv]:
            if child is not None and child.events is not None:
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
        procs += [(c.name, c.process.pid) for c in [self.learner, *self.aisrv] if c and c.process and c.process.pid]
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
        children = [c for c in [self.learner, *self.aisrv] if c is not None]
        stats = {"wall_seconds": round(time.monotonic() - self.started, 2),
                 "pids": {"launcher": os.getpid(),
                          **{c.name: c.process.pid for c in children if c.process is not None}},
                 "peak_rss_bytes": self.peak_rss,
                 "cpu_seconds": {k: round(v, 2) for k, v in self.cpu_seconds.items()},
                 "aisrv_restarts": {c.name: c.restarts for c in self.aisrv},
                 "learner": self.learner.status if self.learner else None,
                 **self.placement_stats()}
        path = self.paths.log / "process_stats.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(stats, indent=1, default=str) + "\n")
        os.replace(tmp, path)

    def show_progress(self) -> None:
        if self.learner is not None:
            s = self.learner.status
            score = s.get("mean_score")
            self.progress.update(int(s.get("env_steps", 0)), {
                "ep": s.get("episodes", 0),
                "score": f"{score:.1f}" if score is not None else "-",
                "ver": s.get("model_version", 0),
                "buf": f"{s.get('buffer_size', 0)}/{s.get('buffer_capacity', self.app.replay_buffer_capacity)}",
                "step": s.get("train_step", 0),
                **self.placement_fields(),
            })
        else:
            statuses = [c.status for c in self.aisrv]
            self.progress.update(sum(int(s.get("env_steps", 0)) for s in statuses), {
                "ep": sum(int(s.get("episodes", 0)) for s in statuses),
                "ver": max((int(s.get("model_version", 0)) for s in statuses), default=0),
                "aisrv": sum(1 for c in self.aisrv if c.process is not None and c.process.is_alive()),
            })

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
            if self.args.role in ("all", "learner") and not self.start_learner():
                return self.shutdown()
            if self.args.role in ("all", "aisrv"):
                self.start_aisrv_slots()
            while not self.stop_requested:
                self.pump_events()
                self.check_learner()
                if not self.stop_requested:
                    self.supervise_aisrv()
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
        self.wait_for(self.aisrv, AISRV_STOP_GRACE_S)
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
            console(f"learner stopped ({s.get('reason')}): train step {s.get('train_step')}, "
                    f"{s.get('env_steps')} env steps, {s.get('episodes')} episodes. Run: {self.paths.root}")
        elif self.learner is None:
            steps = sum(int(c.status.get("env_steps", 0)) for c in self.aisrv)
            console(f"aisrv stopped: {steps} env steps in this session. Logs: {self.paths.log}")
        return EXIT_OK


def run_secret(cfg: AppConfig, role: str) -> str | None:
    """The key that signs what crosses the replay server: the configured one, else (one machine)
    a fresh one per run; across machines without one, items go unsigned, with a warning."""
    if not cfg.app.sign_replay:
        return None
    secret = cfg.app.shared_secret or os.environ.get(SECRET_ENV, "")
    if secret:
        return secret
    if role == "all":
        return secrets.token_hex(32)
    logger.warning(f"--role {role} without app.shared_secret or {SECRET_ENV}: weights, replay items and telemetry "
                   "go unsigned; anyone who reaches the port can write them. Set the same secret on every machine.")
    return None


def console(message: str, error: bool = False) -> None:
    """A line for the person at the terminal (kept clear of the progress bar), also logged.
    Errors reach the terminal through the launcher's warning sink."""
    if error:
        logger.error(message)
    else:
        logger.info(message)
        tqdm.write(message, file=sys.stderr)


def setup_launcher_logging(paths: RunPaths, level: str) -> None:
    """launcher.log gets everything; the terminal also gets warnings and errors (restarts, crashes)."""
    from workflow.metrics import setup_logging

    setup_logging("launcher", paths.log, level, console=lambda line: tqdm.write(line.rstrip("\n"), file=sys.stderr))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    lock = None
    try:
        check_arguments(args)
        cfg = load_run_config(args)
        if cfg.app.aisrv_num == "auto" and args.ray is None:
            raise ConfigError('app.aisrv_num = "auto" fills the realm_aisrv slots of a Ray cluster: add --ray '
                              'local|auto|HOST:PORT, or give a number')
        if args.role in ("all", "aisrv"):
            check_episode_settings(cfg)
        if args.role in ("all", "learner"):
            check_replay_memory(cfg)
        paths, lock = hold_run(cfg.app, resume=args.resume)
        recovered = resume_counters(paths) if args.resume else None
        paths.create()
    except (ConfigError, RunError) as e:
        if lock is not None:
            lock.discard()
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    with lock:  # held until the run ends: no second launcher writes into it meanwhile
        return train(args, cfg, paths, recovered)


def train(args: argparse.Namespace, cfg: AppConfig, paths: RunPaths, recovered: str | None) -> int:
    """Run the held run's processes until they end; returns the exit code."""
    effective = paths.effective_config
    session = len(list(paths.log.glob(f"{effective.stem}-resume-*{effective.suffix}"))) + (1 if args.resume else 0)
    if args.resume and effective.exists():  # keep the config the run started with; add this session's
        effective = effective.with_name(f"{effective.stem}-resume-{time.strftime('%Y%m%d-%H%M%S')}{effective.suffix}")
    save_effective_config(cfg, effective)
    setup_launcher_logging(paths, cfg.app.log_level)
    what = {"all": f"learner + {cfg.app.aisrv_num} aisrv × {cfg.app.envs_per_aisrv} envs",
            "learner": "learner", "aisrv": f"{cfg.app.aisrv_num} aisrv joining {args.learner}"}[args.role]
    if cfg.app.package:
        what += f"; package {cfg.app.package}, algorithm {cfg.app.algo}"
    console(f"{'resuming' if args.resume else 'starting'} run {paths.name} ({what}); logs in {paths.log}")
    if recovered:
        logger.warning(recovered)  # the terminal and launcher.log
    if cfg.platform_keys:
        console(f"platform-only [app] keys, accepted and unused here (reasons in launcher.log): "
                f"{', '.join(sorted(cfg.platform_keys))}")
        logger.info("; ".join(f"{key}: {PLATFORM_ONLY_KEYS[key]}" for key in sorted(cfg.platform_keys)))
    if args.ray is not None:
        from workflow.ray_supervisor import run_on_ray  # Ray is an optional extra

        supervisor, code = run_on_ray(args, cfg, paths, session, run_secret(cfg, args.role))
    else:
        supervisor = Supervisor(cfg, paths, args, session, run_secret(cfg, args.role))
        code = supervisor.run()
    if args.train_test:
        steps = int((supervisor.learner_done or {}).get("train_step") or 0)
        written = (paths.ckpt / TRAIN_TEST_CHECKPOINT).is_file()
        trained = code == EXIT_OK and steps > 0 and written
        console(f"train test {'passed' if trained else 'FAILED'}: the learner trained {steps} step(s), "
                f"{paths.ckpt / TRAIN_TEST_CHECKPOINT} {'written' if written else 'missing'}. Logs: {paths.log}",
                error=not trained)
        code = code if not trained else EXIT_OK
        code = EXIT_FAILED if not trained and code == EXIT_OK else code
    return code


if __name__ == "__main__":
    sys.exit(main())
