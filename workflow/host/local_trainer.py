"""Kaiwu's `wrapper_type = "local"`: envs, predictor and learner in one process.

No replay server, no processes: the package's own workflow runs as in an aisrv, and its
`agent.learn(samples)` goes to `LocalHandler`, which trains the same agent (on `app.device`: a
GPU's one agent acts and trains there) once it holds
`app.train_batch_size` samples, the batch the remote learner would sample (on-policy), or to
`LocalReplayHandler`, a replay buffer sampled uniformly (off-policy). For debugging a
change end to end and for the learning test. Seeded: the same config (including `app.seed`)
gives the same losses.

    from workflow.config import load_config
    from workflow.host.local_trainer import train_local
    result = train_local(load_config(), max_env_steps=50_000, log=print)
"""
from __future__ import annotations

import random
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
from loguru import logger

from workflow.transport.stopped import Stopped
from workflow.config import AppConfig
from workflow.host.kaiwu_package import KaiwuPackage, numeric_values
from workflow.host.platform_env import LoopStats, PlatformEnv
from workflow.precision import Precision, autocast, check_device, package_bf16_ready, resolve_precision


class LocalHandler:
    """The framework behind the agent in local mode: `learn` buffers samples and trains the
    agent itself on every `batch_size` of them, in the run's precision; the other methods run
    as written."""

    def __init__(self, batch_size: int, precision: Precision, on_update: Callable[[dict], None] | None = None,
                 device: str = "cpu"):
        self.batch_size = batch_size
        self.precision = precision
        self.device = device  # where autocast applies: the agent's device
        self.on_update = on_update
        self._samples: list = []

    def predict(self, agent, method, *args, **kwargs):
        return method(agent, *args, **kwargs)

    exploit = save_model = load_model = predict

    def learn(self, agent, method, list_sample_data, *args, **kwargs):
        self._samples.extend(list_sample_data)
        metrics = None
        while len(self._samples) >= self.batch_size:
            batch, self._samples = self._samples[:self.batch_size], self._samples[self.batch_size:]
            metrics = self._train(agent, method, batch, *args, **kwargs)
        return metrics

    def _train(self, agent, method, batch, *args, **kwargs):
        """One train step on `batch`, reported to on_update."""
        with autocast(self.precision, self.device):
            metrics = method(agent, batch, *args, **kwargs)
        if self.on_update is not None:
            self.on_update(metrics if isinstance(metrics, dict) else {})
        return metrics


class LocalReplayHandler(LocalHandler):
    """Off-policy local mode: samples go into a bounded FIFO buffer; once it holds `min_items`,
    every new sample earns production_consume_ratio / batch_size of a train step, each on a
    batch drawn uniformly from the buffer (reverb.selectors.Uniform's way; prioritized replay
    needs the replay server, so local mode samples uniformly)."""

    def __init__(self, batch_size: int, capacity: int, min_items: int, consume_ratio: float, seed: int,
                 precision: Precision, on_update: Callable[[dict], None] | None = None, device: str = "cpu"):
        super().__init__(batch_size, precision, on_update, device)
        self.capacity = capacity
        self.min_items = min_items
        self.steps_per_sample = consume_ratio / batch_size
        self.rng = np.random.default_rng(seed)
        self._next = 0  # where the next sample overwrites the oldest once the buffer is full
        self._credit = 0.0

    def learn(self, agent, method, list_sample_data, *args, **kwargs):
        for sample in list_sample_data:
            if len(self._samples) < self.capacity:
                self._samples.append(sample)
            else:
                self._samples[self._next] = sample
                self._next = (self._next + 1) % self.capacity
        if len(self._samples) < self.min_items:
            return None
        self._credit += len(list_sample_data) * self.steps_per_sample
        metrics = None
        while self._credit >= 1.0:
            self._credit -= 1.0
            batch = [self._samples[i] for i in self.rng.integers(len(self._samples), size=self.batch_size)]
            metrics = self._train(agent, method, batch, *args, **kwargs)
        return metrics


class _EpisodeSink:
    """What PlatformEnv reports to: the episode log."""

    def __init__(self, episode_log: "EpisodeLog"):
        self._log = episode_log

    def send(self, kind: str, values: dict) -> None:
        if kind == "episode":
            self._log.put(values)


class EpisodeLog:
    """Monitor of the local run: keeps every episode report, logs a line every `every` episodes."""

    def __init__(self, window: int = 100, every: int = 0, log: Callable[[str], None] | None = None):
        self.episodes: list[dict] = []
        self.recent: deque[dict] = deque(maxlen=window)
        self.every = every
        self.log = log
        self.updates: list[dict] = []
        self._awaiting: deque[dict] = deque()  # episode reports the workflow has not reported on yet

    def put(self, report: dict) -> None:
        """The game's report of a finished episode (total_score, chests, steps, win, ...)."""
        report = dict(report)
        self.episodes.append(report)
        self.recent.append(report)
        self._awaiting.append(report)

    def put_data(self, data: dict) -> bool:
        """Kaiwu's monitor: the workflow's report of its oldest finished episode (its reward per
        term) joins that episode's record."""
        values = numeric_values(data)
        report = self._awaiting.popleft() if self._awaiting else {}
        report.update(values)
        if self.log and self.every and len(self.episodes) % self.every == 0 and not self._awaiting:
            last = self.updates[-1] if self.updates else {}
            losses = "  ".join(f"{k} {v:.4f}" for k, v in last.items() if k.startswith("loss/") and isinstance(v, float))
            self.log(f"episodes {len(self.episodes)}  win {self.mean('win'):.2f}  score {self.mean('total_score'):.1f}  "
                     f"steps {self.mean('steps'):.0f}  reward {self.mean('reward'):.2f}  updates {len(self.updates)}  "
                     f"{losses}")
        return bool(values)

    def mean(self, key: str) -> float:
        return float(np.mean([r[key] for r in self.recent])) if self.recent else float("nan")


@dataclass
class LocalRunResult:
    agent: Any  # the package's Agent, trained
    stats: LoopStats
    episodes: list[dict] = field(default_factory=list)  # every episode report, in order
    updates: list[dict] = field(default_factory=list)  # metrics of every PPO update, in order
    seconds: float = 0.0
    win_rate: float = float("nan")  # over the last `window` episodes
    mean_score: float = float("nan")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train_local(config: AppConfig, max_env_steps: int | None = None, max_updates: int | None = None,
                max_seconds: float | None = None, stop_when: Callable[[EpisodeLog], bool] | None = None,
                window: int = 100, log: Callable[[str], None] | None = None, log_every: int = 50) -> LocalRunResult:
    """Train in this process until a budget runs out or `stop_when(episode_log)` is true.

    Budgets default to the config's `app.max_env_steps`, `app.max_train_steps`, `app.max_minutes`
    (0 = none); at least one must be set. K = `app.envs_per_aisrv` envs run in lockstep.
    """
    from realm import make_env  # the simulator is imported only by the process that runs envs

    app = config.app
    max_env_steps = max_env_steps if max_env_steps is not None else app.max_env_steps
    max_updates = max_updates if max_updates is not None else app.max_train_steps
    max_seconds = max_seconds if max_seconds is not None else app.max_minutes * 60.0
    if not (max_env_steps or max_updates or max_seconds or stop_when):
        raise ValueError("train_local needs a budget: max_env_steps, max_updates, max_seconds or stop_when")

    check_device(app.device)
    torch.set_num_threads(app.torch_num_threads)
    seed_everything(app.seed)
    package = KaiwuPackage.of_run(config, "local", None)
    episode_log = EpisodeLog(window=window, every=log_every, log=log)
    agent = package.make_agent("learner", logger, episode_log, device=app.device)
    precision = resolve_precision(app.precision, app.device, package_bf16_ready(package.agent_class))
    if app.algorithm_on_policy_or_off_policy == "off-policy":
        agent.framework_handler = LocalReplayHandler(app.train_batch_size, app.replay_buffer_capacity,
                                                     app.min_items_to_train, app.production_consume_ratio, app.seed,
                                                     precision, on_update=episode_log.updates.append,
                                                     device=app.device)
    else:
        agent.framework_handler = LocalHandler(app.train_batch_size, precision, on_update=episode_log.updates.append,
                                               device=app.device)
    stats = LoopStats()
    start = time.monotonic()

    def should_stop() -> bool:
        return bool((max_env_steps and stats.env_steps >= max_env_steps)
                    or (max_updates and len(episode_log.updates) >= max_updates)
                    or (max_seconds and time.monotonic() - start >= max_seconds)
                    or (stop_when is not None and stop_when(episode_log)))

    sink = _EpisodeSink(episode_log)
    envs = [PlatformEnv(make_env(**config.env.make_kwargs(package.platform), seed=app.seed * 1000 + i), stats,
                        sink, should_stop, package.platform)
            for i in range(app.envs_per_aisrv)]
    try:
        while True:
            before = stats.env_steps
            package.workflow(envs, [agent], logger, episode_log)
            if stats.env_steps == before:
                raise RuntimeError(f"{package.algo}'s workflow returned without playing a step")
    except Stopped:
        pass
    result = LocalRunResult(agent=agent, stats=stats, episodes=episode_log.episodes, updates=episode_log.updates,
                            seconds=time.monotonic() - start, win_rate=episode_log.mean("win"),
                            mean_score=episode_log.mean("total_score"))
    if log:
        log(f"done: {stats.env_steps} env steps, {stats.episodes} episodes, {len(result.updates)} updates, "
            f"win rate {result.win_rate:.2f} (last {len(episode_log.recent)}), {result.seconds:.1f} s")
    return result
