"""aisrv: one process running `envs_per_aisrv` envs through the episode loop
(workflow.train_workflow), acting with a local copy of the policy; or, with `app.package`,
one env through a Kaiwu code package's own workflow (workflow.package_aisrv).

The loop sees `RemoteAgent`, Kaiwu's remote-mode agent: `predict` runs the local copy (batched
over the envs) and picks up newer weights from the model pool at most every
`model_sync_seconds`; `learn(samples)` sends the chunk to the replay server instead of training.
Episode reports and progress go to the learner through the telemetry table, so an aisrv on
another machine reports exactly like a local one.
"""
from __future__ import annotations

import time

import reverb
import torch
from loguru import logger

from agent.agent import Agent
from feature.curriculum import CurriculumSampler
from feature.definition import samples_to_numpy
from workflow.adder import ChunkAdder, ReplayUnreachable, Stopped, TelemetrySender
from workflow.kaiwu_package import KaiwuPackage, PackageError, platform_config
from workflow.metrics import stdlib_logger
from workflow.model_pool import ModelPoolReader, PublishedModel
from workflow.processes import STATUS_INTERVAL_S, ChildContext
from workflow.signing import Signer
from workflow.train_workflow import LoopSettings, LoopStats, workflow

CONNECT_LOG_EVERY_S = 10.0
#: A learner that does not answer for this long is gone: the aisrv exits, so its restarts (and
#: the launcher's restart cap) end a run whose learner will not come back.
CONNECT_TIMEOUT_S = 300.0


def seeds(app, index: int, generation: int, session: int = 0) -> dict[str, int]:
    """Distinct seeds per aisrv slot, per restart of it and per session of the run (a restart or
    a --resume must not replay the episodes already played)."""
    base = app.seed * 100_003 + (index + 1) * 1_009 + generation * 7_919 + session * 104_729
    return {"env": base, "curriculum": base + 10_000, "agent": base + 20_000}


class RunWideCurriculum:
    """Staged curricula advance on the whole run's episode and env-step counts (the learner's,
    restored on resume), not on this process's: they come with every model from the pool and
    this process adds what it played since."""

    def __init__(self, sampler: CurriculumSampler):
        self._sampler = sampler
        self._run = (0, 0)
        self._local_at_sync = (0, 0)

    def rebase(self, run_episodes: int, run_env_steps: int, local_episodes: int, local_env_steps: int) -> None:
        self._run = (run_episodes, run_env_steps)
        self._local_at_sync = (local_episodes, local_env_steps)

    def sample(self, episode: int = 0, env_step: int = 0) -> dict:
        return self._sampler.sample(self._run[0] + episode - self._local_at_sync[0],
                                    self._run[1] + env_step - self._local_at_sync[1])


class RemoteAgent:
    """The agent the episode loop sees in an aisrv (Kaiwu's remote mode)."""

    def __init__(self, agent: Agent, pool: ModelPoolReader, adder: ChunkAdder, telemetry: TelemetrySender,
                 sync_seconds: float, curriculum: RunWideCurriculum, stats: LoopStats, ctx: ChildContext):
        self.agent = agent
        self._pool = pool
        self._adder = adder
        self._telemetry = telemetry
        self._sync_seconds = sync_seconds
        self._curriculum = curriculum
        self._stats = stats
        self._ctx = ctx
        self._last_sync = 0.0
        self._has_pool_model = False  # the local copy starts from its own random init
        self._pickup_pending: PublishedModel | None = None

    @property
    def model_version(self) -> int:
        return self.agent.model_version

    # --- the episode loop's interface ---------------------------------------------------------

    def predict(self, list_obs_data):
        self._ctx.beat()
        if time.monotonic() - self._last_sync >= self._sync_seconds:
            self.sync()
        actions = self.agent.predict(list_obs_data)
        if self._pickup_pending is not None:
            model, self._pickup_pending = self._pickup_pending, None
            self._telemetry.send("model", {"version": model.version,
                                           "pickup_latency_s": max(0.0, time.time() - model.published_at)})
        return actions

    def exploit(self, list_obs_data):
        return self.agent.exploit(list_obs_data)

    def learn(self, samples) -> None:
        """Remote mode: the chunk goes to the replay server; the learner trains on it."""
        self._adder.add(samples_to_numpy(samples), self.agent.model_version)

    def save_model(self, path=None, id=None) -> None:
        """Kaiwu's remote save: the learner writes its current model to the run's user directory."""
        self._telemetry.send("save_model", {"requested_version": self.agent.model_version})

    def load_model(self, path=None, id="latest") -> None:
        """id "latest" without a path: pull the model pool now; otherwise load that checkpoint."""
        if path is None and id == "latest":
            self.sync()
        else:
            self.agent.load_model(path, id)

    # --- model pool -------------------------------------------------------------------------------

    def sync(self) -> bool:
        """Adopt the pool's model if it is newer; True when the weights changed."""
        self._last_sync = time.monotonic()
        model = self._pool.fetch_if_new()
        if model is None or (self._has_pool_model and model.version == self.agent.model_version):
            return False
        self.agent.set_weights(model.weights, version=model.version)
        if self._has_pool_model:  # the first model waited for this process's start-up: no latency to report
            self._pickup_pending = model
        self._has_pool_model = True
        counters = model.counters
        self._curriculum.rebase(int(counters.get("episodes", 0)), int(counters.get("env_steps", 0)),
                                self._stats.episodes, self._stats.env_steps)
        logger.debug(f"model version {model.version} adopted")
        return True


class EpisodeForwarder:
    """The episode loop's monitor: every episode report goes to the learner."""

    def __init__(self, telemetry: TelemetrySender):
        self._telemetry = telemetry

    def put(self, report: dict) -> None:
        self._telemetry.send("episode", report)


class ProgressReporter:
    """Sends counter deltas to the learner and a status line to the launcher about once a second;
    it is also the loop's `should_stop`, so it beats the heartbeat every step."""

    def __init__(self, ctx: ChildContext, telemetry: TelemetrySender, stats: LoopStats, adder: ChunkAdder,
                 agent: RemoteAgent):
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
        now = {"env_steps": self._stats.env_steps, "env_errors": self._stats.env_errors,
               "send_wait_s": self._adder.seconds_waited}
        delta = {key: now[key] - self._sent[key] for key in now}
        if any(delta.values()):
            self._telemetry.send("progress", delta)  # episodes travel one record each (EpisodeForwarder)
            self._sent = now
        self._ctx.post("status", {**now, "episodes": self._stats.episodes, "model_version": self._agent.model_version,
                                  "chunks_sent": self._adder.items_sent})


def connect(ctx: ChildContext) -> reverb.Client:
    """A client of the learner's replay server, waiting (heartbeat alive) until it answers,
    at most CONNECT_TIMEOUT_S."""
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
    torch.manual_seed(seed["agent"])
    logger.info(f"{ctx.name} (session {ctx.session}, generation {ctx.generation}) starting {app.envs_per_aisrv} envs "
                f"(env seed {seed['env']}); replay server {ctx.learner_address}")
    envs = [make_env(**cfg.env.make_kwargs(), seed=seed["env"] + i) for i in range(app.envs_per_aisrv)]
    package = load_package(ctx) if app.package else None
    try:
        client = connect(ctx)
    except Stopped:
        return
    stats = LoopStats()

    def on_wait() -> bool:
        ctx.beat()
        return ctx.should_stop()

    signer = Signer(ctx.secret)
    telemetry = TelemetrySender(client, ctx.name, app.rate_limiter_timeout_ms, on_wait, signer)
    adder = ChunkAdder(client, 1 if package else cfg.ppo.num_steps, app.rate_limiter_timeout_ms, on_wait, signer)
    progress = None
    try:
        if package is not None:
            progress = host_package(ctx, package, envs[0], client, telemetry, adder, stats)
        else:
            progress = host_ppo(ctx, seed, envs, client, telemetry, adder, stats)
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


def host_ppo(ctx: ChildContext, seed: dict, envs: list, client, telemetry, adder, stats: LoopStats):
    """The project's own agent through the project's episode loop."""
    cfg, app = ctx.config, ctx.config.app
    curriculum = RunWideCurriculum(CurriculumSampler(cfg.curriculum, seed=seed["curriculum"]))
    agent = RemoteAgent(Agent(cfg.model, cfg.ppo, seed=seed["agent"]), ModelPoolReader(client, Signer(ctx.secret)), adder, telemetry,
                        app.model_sync_seconds, curriculum, stats, ctx)
    progress = ProgressReporter(ctx, telemetry, stats, adder, agent)
    settings = LoopSettings(curriculum=curriculum, reward=cfg.reward, num_steps=cfg.ppo.num_steps,
                            gamma=cfg.ppo.gamma, gae_lambda=cfg.ppo.gae_lambda)
    try:
        wait_for_first_model(ctx, agent.sync)
        logger.info(f"{ctx.name}: model version {agent.model_version}; running episodes")
        workflow(envs, [agent], stdlib_logger(ctx.name), EpisodeForwarder(telemetry), settings, progress, stats)
    except Stopped:
        pass
    return progress


def load_package(ctx: ChildContext) -> KaiwuPackage:
    return KaiwuPackage.load(ctx.config.app.package, ctx.config.app.algo, platform_config(ctx.config, "aisrv", ctx.paths))


def host_package(ctx: ChildContext, package: KaiwuPackage, env, client, telemetry, adder, stats: LoopStats):
    """A Kaiwu code package's own workflow, agent and features, as the platform runs them."""
    from workflow.package_aisrv import AisrvHandler, PlatformEnv, TelemetryMonitor, run_workflow

    monitor = TelemetryMonitor(telemetry)
    agent = package.make_agent("aisrv", logger, monitor)
    handler = AisrvHandler(package, adder, telemetry, ModelPoolReader(client, Signer(ctx.secret)), ctx.paths.root / "pool" / ctx.name,
                           ctx.config.app.model_sync_seconds, ctx.beat)
    agent.framework_handler = handler
    progress = ProgressReporter(ctx, telemetry, stats, adder, handler)
    try:
        wait_for_first_model(ctx, lambda: handler.sync(agent))
        logger.info(f"{ctx.name}: package {package.algo}, model pool checkpoint {handler.model_version}; "
                    f"running its workflow")
        run_workflow(package, PlatformEnv(env, stats, telemetry, progress), agent, monitor, stats, ctx.name)
    except Stopped:
        pass
    except Exception as e:
        where = package.where(e)
        if where:
            raise PackageError(f"package code failed at {where}: {type(e).__name__}: {e}") from e
        raise
    return progress
