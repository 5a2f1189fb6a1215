"""`./train.sh --ray ADDRESS`: one run across a Ray cluster. The launcher's supervision
(workflow.supervision.supervisor.Supervisor: restarts with back-off, heartbeats, the clean stop, exit codes)
drives Ray actors (workflow.supervision.ray_roles) instead of local child processes.

Placement is by Ray resources, never by host name:
- each aisrv takes one `realm_aisrv` slot (nodes started with
  `ray start --resources='{"realm_aisrv": 8}'`), or one CPU where the cluster declares none;
  the aisrv are spread over the nodes;
- the learner takes `realm_learner` where a node declares it, else a GPU when app.device is
  cuda, else it runs on the driver's node (where the run directory is).

Ray restarts a dead aisrv actor (`max_restarts`), on another node when its own is gone; the
supervisor then starts its role again with fresh seeds. A hung one is killed through Ray and
restarted the same way. `app.aisrv_num = "auto"` fills the cluster's `realm_aisrv` slots and
adds aisrv when a node joins. A learner actor that dies is started again from the newest
checkpoint when it can read the run directory; otherwise the run exits 1 with the resume command.
The evaluator ([eval]) runs beside the learner, on the driver's node (it reads the checkpoints and
writes the evaluations in the run directory), and is restarted as an aisrv is.
"""
from __future__ import annotations

import os
import queue
import secrets
import time
from collections import deque

import ray
from loguru import logger
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from workflow.checkpoints import ckpt_files
from workflow.supervision.supervisor import Child, Supervisor, console
from workflow.supervision.ray_cluster import join
from workflow.supervision.ray_roles import RUN_TOKEN_FILE, Cell, RoleActor
from workflow.transport.signing import SECRET_ENV

LEARNER_RESTART_MAX = 3
DRAIN_TIMEOUT_S = 10.0
ELASTIC_CHECK_S = 5.0
RATE_WINDOW_S = 10.0
AISRV_RESOURCE, LEARNER_RESOURCE = "realm_aisrv", "realm_learner"


def connect(address: str, cfg, secret: str | None) -> float:
    """Join (or, for "local", start) the Ray cluster; returns the seconds it took."""
    slots = cfg.app.aisrv_num if isinstance(cfg.app.aisrv_num, int) else os.cpu_count() or 1
    # the run's signing key reaches the actors through the runtime env, not as an actor argument
    return join(address, local_resources={AISRV_RESOURCE: slots, LEARNER_RESOURCE: 1},
                env_vars={SECRET_ENV: secret} if secret else None)


class ActorProcess:
    """A role actor seen as the launcher sees a child process (is_alive, exitcode, kill, join,
    pid), fed by the driver's polls."""

    def __init__(self, name: str, actor, run_args: dict):
        self.name = name
        self.actor = actor
        self.run_args = run_args
        self.run_ref = actor.run.remote(**run_args)
        self.exitcode: int | None = None
        self.actor_died = False
        self.poll_ref = None
        self.counted = False  # its death counted against the actor's max_restarts
        self.drained = False  # the events and log lines left after its role returned were fetched
        self.pid: int | None = None
        self.node_id: str | None = None
        self.ip: str | None = None
        self.rss = 0
        self.cpu = 0.0

    def is_alive(self) -> bool:
        if self.exitcode is None and ray.wait([self.run_ref], timeout=0)[0]:
            try:
                self.exitcode = ray.get(self.run_ref)
            except ray.exceptions.ActorUnavailableError as e:
                if self.pid is None:  # this run never started: Ray is still starting the process again
                    self.run_ref = self.actor.run.remote(**self.run_args)
                    return True
                self.exitcode, self.actor_died = -9, True  # the running process was killed: Ray starts it again
                logger.info(f"{self.name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            except ray.exceptions.RayActorError as e:
                self.exitcode, self.actor_died = -9, True  # its process was killed, or its node is gone
                logger.info(f"{self.name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            except ray.exceptions.RayError:
                self.exitcode = 1
        return self.exitcode is None

    def kill(self) -> None:
        """Kill the actor's process; Ray starts it again (within its max_restarts)."""
        ray.kill(self.actor, no_restart=False)

    def join(self, timeout: float | None = None) -> None:
        ray.wait([self.run_ref], timeout=timeout)
        self.is_alive()


class RaySupervisor(Supervisor):
    AISRV_START_WITH_LEARNER = False  # an actor is handed the learner's address when it starts

    def __init__(self, cfg, paths, args, session: int = 0, secret: str | None = None):
        super().__init__(cfg, paths, args, session, secret)
        self.token = secrets.token_hex(16)
        self.paths = paths.absolute()
        (self.paths.root / RUN_TOKEN_FILE).write_text(self.token + "\n")
        self.actors: dict[str, object] = {}  # child name -> actor handle (kept across restarts of its process)
        self.actor_deaths: dict[str, int] = {}
        self.learner_restarts = 0
        self.actors_made = 0  # actor names stay unique across restarts
        self.next_elastic_check = 0.0
        self.node_steps: dict[str, deque] = {}  # node -> (time, env steps counted there)
        self.last_env_steps: dict[str, int] = {}
        self.driver_node = ray.get_runtime_context().get_node_id()

    # --- placement ---------------------------------------------------------------------------------

    def aisrv_options(self) -> dict:
        has_slots = ray.cluster_resources().get(AISRV_RESOURCE, 0) > 0
        return {"num_cpus": 0, "resources": {AISRV_RESOURCE: 1}} if has_slots else {"num_cpus": 1}

    def evaluator_options(self) -> dict:
        """Where the run directory is: the driver's node."""
        return {"num_cpus": 0, "scheduling_strategy": NodeAffinitySchedulingStrategy(self.driver_node, soft=False)}

    def learner_options(self) -> dict:
        if ray.cluster_resources().get(LEARNER_RESOURCE, 0) > 0:
            return {"num_cpus": 0, "resources": {LEARNER_RESOURCE: 1}}
        if self.app.device.startswith("cuda"):
            return {"num_cpus": 0, "num_gpus": 1}
        return {"num_cpus": 0, "scheduling_strategy": NodeAffinitySchedulingStrategy(self.driver_node, soft=False)}

    def aisrv_slots(self) -> int:
        if isinstance(self.app.aisrv_num, int):
            return self.app.aisrv_num
        return int(ray.cluster_resources().get(AISRV_RESOURCE, 0))

    # --- the launcher's hooks ----------------------------------------------------------------------

    def spawn(self, child: Child, **extra) -> None:
        actor = self.actors.get(child.name)
        if actor is None or self.actor_deaths.get(child.name, 0) > self.app.aisrv_restart_max:
            options = (self.learner_options() if child.role == "learner" else self.evaluator_options()
                       if child.role == "evaluator" else {**self.aisrv_options(), "scheduling_strategy": "SPREAD"})
            restarts = 0 if child.role == "learner" else self.app.aisrv_restart_max
            self.actors_made += 1
            actor = RoleActor.options(name=f"{self.paths.name}-{child.name}-{self.token[:6]}-{self.actors_made}",
                                      max_restarts=restarts,
                                      **options).remote(child.role, child.index, self.cfg, self.paths, self.session,
                                                        self.token, os.getcwd())
            self.actors[child.name] = actor
            self.actor_deaths[child.name] = 0
        child.heartbeat = Cell(time.time())
        child.events = queue.Queue()
        child.reported = False
        child.process = ActorProcess(child.name, actor, {"generation": extra.get("generation", 0),
                                                         "learner_address": extra.get("learner_address"),
                                                         "resume": bool(extra.get("resume", False))})
        logger.info(f"started {child.name} (Ray actor)")
        self.write_process_stats()

    def request_stop(self, role: str) -> None:
        children = {"learner": [self.learner], "evaluator": [self.evaluator]}.get(role, self.aisrv)
        for child in children:
            if child is not None and child.process is not None and child.process.is_alive():
                child.process.actor.stop.remote()

    def learner_host(self) -> str:
        return self.learner.process.ip or "127.0.0.1"

    def pump_events(self) -> None:
        self.poll_actors()
        super().pump_events()

    def poll_actors(self) -> None:
        children = [c for c in self.children() if c.process is not None]
        for child in children:
            if not child.process.is_alive() and not child.process.drained:
                self.drain(child)
        for child in children:
            if child.process.poll_ref is None and child.process.is_alive():
                child.process.poll_ref = child.process.actor.poll.remote()
        pending = {c.process.poll_ref: c for c in children if c.process.poll_ref is not None}
        if not pending:
            return
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0)
        for ref in ready:
            child = pending[ref]
            child.process.poll_ref = None
            try:
                report = ray.get(ref)
            except ray.exceptions.RayError:
                continue  # the actor died: its run reference says so
            self.apply_report(child, report)

    def drain(self, child: Child) -> None:
        """One last poll of an actor whose role returned: its final events ("done") and log lines."""
        child.process.drained = True
        if child.process.actor_died:
            return
        try:
            self.apply_report(child, ray.get(child.process.actor.poll.remote(), timeout=DRAIN_TIMEOUT_S))
        except (ray.exceptions.RayError, TimeoutError):
            pass

    def apply_report(self, child: Child, report: dict) -> None:
        proc = child.process
        child.heartbeat.value = time.time() - report["beat_age"]
        for event in report["events"]:
            child.events.put(event)
        for file_name, data in report["logs"].items():
            with open(self.paths.log / file_name, "ab") as f:
                f.write(data)
        moved = (proc.pid, proc.node_id) != (report["pid"], report["node_id"])
        proc.pid, proc.node_id, proc.ip = report["pid"], report["node_id"], report["ip"]
        proc.rss, proc.cpu = report["rss"], report["cpu"]
        if moved:  # a first report, or a process Ray started again (maybe elsewhere)
            self.write_process_stats()

    def pump_child(self, child: Child) -> None:
        super().pump_child(child)
        if child.role == "aisrv" and child.process is not None and child.process.node_id:
            self.count_node_steps(child)

    def count_node_steps(self, child: Child) -> None:
        steps = int(child.status.get("env_steps", 0))
        last = self.last_env_steps.get(child.name, 0)
        delta = steps - last if steps >= last else steps  # a restarted aisrv counts from 0 again
        self.last_env_steps[child.name] = steps
        history = self.node_steps.setdefault(child.process.node_id, deque())
        total = (history[-1][1] if history else 0) + delta
        history.append((time.monotonic(), total))
        while len(history) > 2 and history[-1][0] - history[0][0] > RATE_WINDOW_S:
            history.popleft()

    def node_rates(self) -> dict[str, float]:
        rates = {}
        for node, history in self.node_steps.items():
            (t0, s0), (t1, s1) = history[0], history[-1]
            rates[node] = (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0
        return rates

    def placement_stats(self) -> dict:
        """Each actor's Ray node, and the learner's restarts."""
        children = [c for c in self.children() if c.process is not None]
        return {"nodes": {c.name: c.process.node_id for c in children}, "learner_restarts": self.learner_restarts}

    def placement_fields(self) -> dict:
        live = {c.process.node_id for c in self.aisrv if c.process is not None and c.process.node_id
                and c.process.is_alive()}
        rates = self.node_rates()
        return {"nodes": len(live),
                "node_sps": "/".join(f"{node[:6]}:{rates.get(node, 0.0):.0f}" for node in sorted(live)) or "-"}

    def supervise_aisrv(self) -> None:
        for child in self.aisrv:
            self.count_actor_death(child)
        super().supervise_aisrv()
        self.grow_to_cluster()

    def supervise_evaluator(self) -> None:
        if self.evaluator is not None:
            self.count_actor_death(self.evaluator)
        super().supervise_evaluator()

    def count_actor_death(self, child: Child) -> None:
        proc = child.process
        if proc is not None and not proc.is_alive() and proc.actor_died and not proc.counted:
            proc.counted = True  # Ray restarts the process at most max_restarts times, then spawn makes a new actor
            self.actor_deaths[child.name] = self.actor_deaths.get(child.name, 0) + 1

    def grow_to_cluster(self) -> None:
        """app.aisrv_num = "auto": one aisrv per realm_aisrv slot, counted again every few seconds."""
        if isinstance(self.app.aisrv_num, int) or time.monotonic() < self.next_elastic_check or self.stop_requested:
            return
        self.next_elastic_check = time.monotonic() + ELASTIC_CHECK_S
        slots = self.aisrv_slots()
        if slots > len(self.aisrv):
            logger.info(f"{slots} realm_aisrv slots in the cluster: starting {slots - len(self.aisrv)} more aisrv")
        while len(self.aisrv) < slots:
            child = Child(f"aisrv-{len(self.aisrv)}", "aisrv", index=len(self.aisrv))
            self.aisrv.append(child)
            self.spawn(child, learner_address=self.address, generation=0)

    def start_aisrv_slots(self) -> None:
        slots = self.aisrv_slots()
        if slots < 1:
            self.failure = (f'app.aisrv_num = "auto" and the cluster has no {AISRV_RESOURCE} slot: start nodes with '
                            f"ray start --resources='{{\"{AISRV_RESOURCE}\": N}}'")
            self.stop_requested = True
            return
        self.aisrv = [Child(f"aisrv-{i}", "aisrv", index=i) for i in range(slots)]
        for child in self.aisrv:
            self.spawn(child, learner_address=self.address, generation=0)

    def check_learner(self) -> None:
        proc = self.learner.process if self.learner else None
        if proc is None or proc.is_alive() or self.learner_done is not None or self.stop_requested:
            return super().check_learner()
        self.pump_events()
        if self.learner_done is not None:
            return super().check_learner()
        newest = ckpt_files.list_checkpoints(self.paths.ckpt)
        if not proc.actor_died or not newest or self.learner_restarts >= LEARNER_RESTART_MAX:
            return super().check_learner()
        self.learner_restarts += 1
        logger.warning(f"the learner's actor died; starting it again from {ckpt_files.ckpt_name(newest[-1].id)} "
                       f"({self.learner_restarts}/{LEARNER_RESTART_MAX}), then the aisrv")
        self.end_actors(self.aisrv)
        self.aisrv, self.address = [], None
        self.actors.pop("learner", None)
        if not self.start_learner(resume=True):
            self.failure = None
            self.fail_learner("died, and starting it again from its newest checkpoint failed")
            self.stop_requested = True
            return
        self.start_aisrv_slots()

    # --- records and shutdown ----------------------------------------------------------------------

    def poll_resources(self, force: bool = False) -> None:
        for child in self.children():
            if child.process is not None and child.process.pid:
                self.peak_rss[child.name] = max(self.peak_rss.get(child.name, 0), child.process.rss)
                self.cpu_seconds[child.name] = child.process.cpu

    def end_actors(self, children: list[Child]) -> None:
        """Remove the actors' scratch directories, then their processes (Ray restarts none)."""
        actors = [(child, self.actors.pop(child.name, None)) for child in children]
        cleanups = [actor.cleanup.remote() for _, actor in actors if actor is not None]
        ray.wait(cleanups, num_returns=len(cleanups), timeout=DRAIN_TIMEOUT_S)
        for child, actor in actors:
            if actor is not None:
                ray.kill(actor, no_restart=True)

    def shutdown(self) -> int:
        try:
            return super().shutdown()
        finally:
            self.poll_actors()  # the last log lines
            self.end_actors([c for c in [*self.aisrv, self.evaluator, self.learner] if c is not None])


def run_on_ray(args, cfg, paths, session: int, secret: str | None) -> tuple[RaySupervisor, int]:
    """Connect to the cluster, supervise the run's actors to the end, disconnect; the
    supervisor (its records) and the exit code."""
    took = connect(args.ray, cfg, secret)
    try:
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        console(f"Ray: {'started a local instance' if args.ray == 'local' else 'joined ' + args.ray} in {took:.1f} s; "
                f"{len(nodes)} node(s), {int(ray.cluster_resources().get(AISRV_RESOURCE, 0))} {AISRV_RESOURCE} slot(s)")
        supervisor = RaySupervisor(cfg, paths, args, session, secret)
        return supervisor, supervisor.run()
    finally:
        ray.shutdown()
