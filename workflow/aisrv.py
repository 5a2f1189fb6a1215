"""aisrv: one process running the package's own workflow (`workflow(envs, agents, logger,
monitor)`, workflow.host.package_aisrv) over `envs_per_aisrv` envs, for any package: the project's
agent or a Kaiwu code package (`app.package`). Platform packages use `envs[0]`.

The package's agent acts locally and follows the model pool at most every `model_sync_seconds`;
its `learn(samples)` sends the rows to the replay server instead of training. Episode reports
and progress go to the learner through the telemetry table, so an aisrv on another machine
reports exactly like a local one.
"""
from __future__ import annotations

import os
import random
import time

import numpy as np
import torch
from loguru import logger

from workflow.transport import reverb_core as reverb
from workflow.transport.adder import ChunkAdder, ReplayUnreachable, TelemetrySender
from workflow.transport.stopped import Stopped
from workflow.host.kaiwu_package import KaiwuPackage, PackageError
from workflow.transport.model_pool import ModelPoolReader
from workflow.host.package_aisrv import AisrvHandler, TelemetryMonitor, run_workflow
from workflow.host.platform_env import LoopStats, PlatformEnv
from workflow.supervision.processes import STATUS_INTERVAL_S, ChildContext
from workflow.transport.signing import Signer

CONNECT_LOG_EVERY_S = 10.0
#: A learner that does not answer for this long is gone: the aisrv exits, so its restarts (and
#: the launcher's restart cap) end a run whose learner will not come back.
CONNECT_TIMEOUT_S = 300.0


def seeds(app, index: int, generation: int, session: int = 0) -> dict[str, int]:
    """Distinct seeds per aisrv slot, per restart of it and per session of the run (a restart or
    a --resume must not replay the episodes already played)."""
    base = app.seed * 100_003 + (index + 1) * 1_009 + generation * 7_919 + session * 104_729
    return {"env": base, "curriculum": base + 10_000, "agent": base + 20_000}


class ProgressReporter:
    """Sends counter deltas to the learner and a status line to the launcher about once a second,
    and the deltas before every send of samples (`send_counts`: the learner never trains on a
    frame its env steps do not count, however this process ends); it is also the loop's
    `should_stop`, so it beats the heartbeat every step."""

    def __init__(self, ctx: ChildContext, telemetry: TelemetrySender, stats: LoopStats, adder: ChunkAdder,
                 agent: AisrvHandler):
        self._ctx = ctx
        self._telemetry = telemetry
        self._stats = stats
        self._adder = adder
        self._agent = agent
        self._sent = {"env_steps": 0, "env_errors": 0, "send_wait_s": 0.0}
        self._last = time.monotonic()

    def __call__(self) -> bool:
        self._ctx.beat()
        if time.monotonic() - self._last >= STATUS_INTERVAL_S:
            self.report()
        return self._ctx.should_stop()

    def report(self) -> None:
        self._last = time.monotonic()
        now = self.send_counts()
        self._ctx.post("status", {**now, "episodes": self._stats.episodes, "model_version": self._agent.model_version,
                                  "chunks_sent": self._adder.items_sent})

    def send_counts(self) -> dict:
        """What the counters moved since the last record, as one progress record (none when nothing
        moved); returns the counters."""
        now = {"env_steps": self._stats.env_steps, "env_errors": self._stats.env_errors,
               "send_wait_s": self._adder.seconds_waited}
        delta = {key: now[key] - self._sent[key] for key in now}
        if any(delta.values()):
            self._telemetry.send("progress", delta)  # episodes travel one record each (PlatformEnv)
            self._sent = now
        return now


def connect(ctx: ChildContext) -> reverb.Client:
    """A client of the learner's replay server, waiting (heartbeat alive) for its address and
    then until it answers, at most CONNECT_TIMEOUT_S."""
    if ctx.wait_for_learner() is None:
        raise Stopped()
    client = reverb.Client(ctx.learner_address)
    started = last_log = time.monotonic()
    while True:
        ctx.beat()
        try:
            client.server_info(timeout=2)
            return client
        except Exception as e:  # unreachable yet (learner starting, or on its way back)
            if ctx.should_stop():
                raise Stopped() from e
            if time.monotonic() - started > CONNECT_TIMEOUT_S:
                raise ReplayUnreachable(f"replay server {ctx.learner_address} did not answer for "
                                        f"{CONNECT_TIMEOUT_S:.0f} s") from e
            if time.monotonic() - last_log >= CONNECT_LOG_EVERY_S:
                last_log = time.monotonic()
                logger.info(f"waiting for the replay server at {ctx.learner_address} "
                            f"({time.monotonic() - started:.0f} s): {type(e).__name__}")
            time.sleep(0.5)


def wait_for_first_model(ctx: ChildContext, sync) -> None:
    while not sync():
        ctx.beat()
        if ctx.should_stop():
            raise Stopped()
        time.sleep(0.2)


def main(ctx: ChildContext) -> None:
    from realm import make_env  # the simulator only where envs run

    cfg, app = ctx.config, ctx.config.app
    torch.set_num_threads(app.aisrv_torch_num_threads)
    seed = seeds(app, ctx.index, ctx.generation, ctx.session)
    random.seed(seed["curriculum"])
    np.random.seed(seed["curriculum"] % 2**32)  # the workflow draws its episode settings from it
    torch.manual_seed(seed["agent"])  # the agent's initial weights and action sampling
    logger.info(f"{ctx.name} (session {ctx.session}, generation {ctx.generation}) starting {app.envs_per_aisrv} envs "
                f"(env seed {seed['env']})")
    ctx.paths = ctx.paths.absolute()  # a 2025 package's workflow runs in the package's directory (below)
    package = KaiwuPackage.of_run(cfg, "aisrv", ctx.paths)
    envs = [make_env(**cfg.env.make_kwargs(package.platform), seed=seed["env"] + i)
            for i in range(app.envs_per_aisrv)]
    if package.platform.runs_in_package_dir:  # e.g. a 2025 workflow opens agent_<algo>/conf/train_env_conf.toml
        os.chdir(package.root)
    try:
        client = connect(ctx)
    except Stopped:
        return
    logger.info(f"{ctx.name}: replay server {ctx.learner_address}")
    stats = LoopStats()

    def on_wait() -> bool:
        ctx.beat()
        return ctx.should_stop()

    signer = Signer(ctx.secret)
    telemetry = TelemetrySender(client, ctx.name, app.rate_limiter_timeout_ms, on_wait, signer)
    adder = ChunkAdder(client, 1, app.rate_limiter_timeout_ms, on_wait, signer)
    progress = None
    try:
        progress = host_package(ctx, package, envs, client, telemetry, adder, stats)
    except Stopped:
        pass
    finally:
        if progress is not None:
            try:
                progress.report()
            except (Stopped, ReplayUnreachable, reverb.errors.ReverbError):
                pass
        adder.close()
        telemetry.close()
    logger.info(f"{ctx.name} stopped: {stats.env_steps} env steps, {stats.episodes} episodes, "
                f"{stats.env_errors} env errors, {adder.items_sent} items sent")


def host_package(ctx: ChildContext, package: KaiwuPackage, envs: list, client, telemetry, adder, stats: LoopStats):
    """The package's own workflow, agent and features, as the platform runs them."""
    monitor = TelemetryMonitor(telemetry)
    agent = package.make_agent("aisrv", logger, monitor)
    handler = AisrvHandler(package, adder, telemetry, ModelPoolReader(client, Signer(ctx.secret)),
                           ctx.paths.root / "pool" / ctx.name, ctx.config.app.model_sync_seconds, ctx.beat)
    agent.framework_handler = handler
    progress = ProgressReporter(ctx, telemetry, stats, adder, handler)
    handler.before_send = progress.send_counts  # the env steps reach the learner before their samples
    try:
        wait_for_first_model(ctx, lambda: handler.sync(agent))
        logger.info(f"{ctx.name}: package {package.algo}, model pool checkpoint {handler.model_version}; "
                    f"running its workflow")
        run_workflow(package, [PlatformEnv(env, stats, telemetry, progress, package.platform) for env in envs], agent,
                     monitor, stats, ctx.name)
    except Stopped:
        pass
    except Exception as e:
        failure = package.failure(e)  # the innermost cause, not the workflow's wrapper of it
        if failure:
            raise PackageError(f"package code failed at {failure}") from e
        raise
    return progress
