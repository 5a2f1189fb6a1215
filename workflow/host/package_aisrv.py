"""An aisrv hosting a Kaiwu code package (the project's own agent is one): it calls the
package's `workflow(envs, agents, logger, monitor)` as the platform does, with the aisrv's envs
and one agent, and plays the platform's part behind them:

- `PlatformEnv` (workflow.host.platform_env, shared with local mode): the simulator, counted
  (env steps, episodes, an episode report per finished episode with the game's own score) and
  stoppable (a stop request ends the workflow at its next reset or step);
- `AisrvHandler`: the agent's `framework_handler` (see kaiwu_agent.agent.base_agent): `learn`
  sends SampleData2NumpyData rows to the replay server, `predict` / `exploit` run the package's
  method on a local agent that follows the model pool (a 2025 package gets
  `(actions, model_version)` back, as from the platform's), `save_model` asks the learner,
  `load_model(id="latest")` loads the pool's newest checkpoint;
- `TelemetryMonitor`: `monitor.put_data({pid: {key: value}})` goes to the run's metrics.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
from loguru import logger

from workflow.transport.adder import ChunkAdder, TelemetrySender
from workflow.host.platform_env import LoopStats, PlatformEnv
from workflow.host.kaiwu_package import KaiwuPackage, PackageError, numeric_values
from workflow.transport.model_pool import ModelPoolReader, PublishedModel


class TelemetryMonitor:
    """Kaiwu's monitor: `put_data({pid: {key: number}})`; numbers reach metrics.csv as monitor/<key>."""

    def __init__(self, telemetry: TelemetrySender):
        self._telemetry = telemetry

    def put_data(self, data: dict) -> bool:
        values = numeric_values(data)
        if not values:
            return False
        self._telemetry.send("monitor", values)
        return True


def undecorated(agent, name: str):
    """The package's own method under its platform decorator."""
    method = getattr(type(agent), name)
    return getattr(method, "__wrapped__", method)


class AisrvHandler:
    """The framework behind an aisrv agent's five methods (remote mode, local prediction)."""

    def __init__(self, package: KaiwuPackage, adder: ChunkAdder, telemetry: TelemetrySender, pool: ModelPoolReader,
                 pool_dir: Path, sync_seconds: float, beat):
        self._package = package
        self._adder = adder
        self._telemetry = telemetry
        self._pool = pool
        self._pool_dir = Path(pool_dir)
        self._sync_seconds = sync_seconds
        self._beat = beat
        self._last_sync = 0.0
        self._pickup_pending: PublishedModel | None = None
        self.model_version = -1  # the pool checkpoint (train step) the agent holds; -1 none yet
        self.max_priority = 1.0  # the largest replay priority the learner has written (it comes with each model)
        self.before_send = None  # called before samples are sent (the aisrv reports its env steps first)

    # --- the five methods -----------------------------------------------------------------------

    def predict(self, agent, method, *args, **kwargs):
        """The package's own predict on the local agent, which follows the model pool, answered
        as the platform version's aisrv answers (a 2025 one: `(actions, model_version)`)."""
        self._follow_pool(agent)
        return self._package.platform.predict_answer(method(agent, *args, **kwargs), self.model_version)

    exploit = predict  # both act with the local agent, which follows the model pool

    def learn(self, agent, method, list_sample_data, *args, **kwargs):
        to_numpy = self._package.protocol("SampleData2NumpyData")
        rows = [np.asarray(to_numpy(sample)) for sample in list_sample_data]
        if not rows:
            return None
        for i, row in enumerate(rows):
            if row.ndim != 1 or row.shape[0] != self._package.sample_dim:
                raise PackageError(f"SampleData2NumpyData returned shape {row.shape} for sample {i}; "
                                   f"{self._package.row_width_named}")
        priorities = [self._priority(sample) for sample in list_sample_data]
        if self.before_send is not None:
            self.before_send()
        self._adder.add(np.stack(rows).astype(np.float32, copy=False), max(self.model_version, 0), priorities)
        return None

    def _priority(self, sample) -> float:
        """A sample's replay priority: its own `priority` attribute when the package set a finite
        positive one, else the largest the learner has written so far (new samples are seen soon)."""
        own = getattr(sample, "priority", None)
        if isinstance(own, (int, float, np.number)) and not isinstance(own, bool) and np.isfinite(own) and own > 0:
            return float(own)
        return self.max_priority

    def save_model(self, agent, method, path=None, id=None, *args, **kwargs):
        """As on the platform, an aisrv's save goes to the learner (saved in the run's user dir)."""
        self._telemetry.send("save_model", {"requested_version": self.model_version})

    def load_model(self, agent, method, path=None, id="latest", *args, **kwargs):
        """"latest" / "random": the pool's newest checkpoint (the pool holds one); a number: that
        checkpoint if it is the one the pool holds. The path is the platform's to choose."""
        if id in ("latest", "random"):
            self.sync(agent)
            return None
        try:
            wanted = int(id)
        except (TypeError, ValueError):
            raise PackageError(f"load_model(id={id!r}): allowed \"latest\", \"random\" or a checkpoint id") from None
        self.sync(agent)
        if wanted != self.model_version:
            raise PackageError(f"load_model(id={wanted}): the model pool holds checkpoint {self.model_version} "
                               "only (it keeps the newest)")
        return None

    # --- model pool -----------------------------------------------------------------------------

    def _follow_pool(self, agent) -> None:
        self._beat()
        if time.monotonic() - self._last_sync >= self._sync_seconds:
            self.sync(agent)
        if self._pickup_pending is not None:
            model, self._pickup_pending = self._pickup_pending, None
            self._telemetry.send("model", {"version": model.version,
                                           "pickup_latency_s": max(0.0, time.time() - model.published_at)})

    def sync(self, agent) -> bool:
        """Load the pool's checkpoint with the package's own load_model if it is new."""
        self._last_sync = time.monotonic()
        model = self._pool.fetch_if_new()
        if model is None or model.version == self.model_version:
            return False
        if self._pool_dir.exists():
            shutil.rmtree(self._pool_dir)
        self._pool_dir.mkdir(parents=True)
        for name, data in model.weights.items():
            (self._pool_dir / Path(name).name).write_bytes(np.asarray(data, dtype=np.uint8).tobytes())
        undecorated(agent, "load_model")(agent, path=str(self._pool_dir), id=model.version)
        max_priority = model.counters.get("max_priority")
        if isinstance(max_priority, (int, float)) and np.isfinite(max_priority) and max_priority > 0:
            self.max_priority = float(max_priority)
        if self.model_version >= 0:  # the first model waited for start-up: no latency to report
            self._pickup_pending = model
        self.model_version = model.version
        logger.debug(f"model pool checkpoint {model.version} loaded")
        return True


def run_workflow(package: KaiwuPackage, envs: list[PlatformEnv], agent, monitor, stats: LoopStats, name: str) -> None:
    """Call the package's workflow until stopped; a workflow that returns is called again, unless it
    returned without playing a step (it would only return again)."""
    while True:
        steps_before = stats.env_steps
        package.workflow(envs, [agent], logger, monitor)
        if stats.env_steps == steps_before:
            raise PackageError(f"{package.algo}.train_workflow.workflow returned without playing a step "
                               f"(see {name}.log for what it logged)")
        logger.info(f"{package.algo}.train_workflow.workflow returned after {stats.episodes} episodes; calling it again")
