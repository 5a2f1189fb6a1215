"""Kaiwu's `wrapper_type = "local"`: envs, predictor and learner in one process.

No replay server, no processes: the episode loop (workflow.train_workflow) calls
`agent.learn(chunk)` and `LocalLearner` trains once it holds `app.train_batch_size` chunks, the
same batch the remote learner would sample. For debugging a change end to end and for the
learning test. Seeded: the same config (including `app.seed`) gives the same losses.

    from workflow.config import load_config
    from workflow.local_trainer import train_local
    result = train_local(load_config(), max_env_steps=50_000, log=print)
"""
from __future__ import annotations

import logging
import random
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch

from agent.agent import Agent
from feature.curriculum import CurriculumSampler
from feature.definition import ActData, ObsData, SampleData
from workflow.config import AppConfig
from workflow.train_workflow import LoopSettings, LoopStats, workflow


class LocalLearner:
    """The agent the episode loop sees in local mode: predicts with `agent`, and trains it on
    every `batch_chunks` chunks handed to `learn` (the remote learner's batch)."""

    def __init__(self, agent: Agent, batch_chunks: int, on_update: Callable[[dict], None] | None = None):
        self.agent = agent
        self.batch_chunks = batch_chunks
        self.on_update = on_update
        self._chunks: list[Sequence[SampleData]] = []

    def predict(self, list_obs_data: Sequence[ObsData]) -> list[ActData]:
        return self.agent.predict(list_obs_data)

    def learn(self, samples: Sequence[SampleData]) -> dict | None:
        self._chunks.append(samples)
        if len(self._chunks) < self.batch_chunks:
            return None
        batch = [s for chunk in self._chunks for s in chunk]
        self._chunks = []
        metrics = self.agent.learn(batch)
        if self.on_update is not None:
            self.on_update(metrics)
        return metrics


class EpisodeLog:
    """Monitor of the local run: keeps every episode report, logs a line every `every` episodes."""

    def __init__(self, window: int = 100, every: int = 0, log: Callable[[str], None] | None = None):
        self.episodes: list[dict] = []
        self.recent: deque[dict] = deque(maxlen=window)
        self.every = every
        self.log = log
        self.updates: list[dict] = []

    def put(self, report: dict) -> None:
        self.episodes.append(report)
        self.recent.append(report)
        if self.log and self.every and len(self.episodes) % self.every == 0:
            last = self.updates[-1] if self.updates else {}
            nan = float("nan")
            self.log(f"episodes {len(self.episodes)}  win {self.mean('win'):.2f}  score {self.mean('total_score'):.1f}  "
                     f"steps {self.mean('steps'):.0f}  reward {self.mean('reward'):.2f}  updates {len(self.updates)}  "
                     f"entropy {last.get('entropy', nan):.3f}  value_loss {last.get('value_loss', nan):.4f}")

    def mean(self, key: str) -> float:
        return float(np.mean([r[key] for r in self.recent])) if self.recent else float("nan")


@dataclass
class LocalRunResult:
    agent: Agent
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

    torch.set_num_threads(app.torch_num_threads)
    seed_everything(app.seed)
    envs = [make_env(**config.env.make_kwargs(), seed=app.seed * 1000 + i) for i in range(app.envs_per_aisrv)]
    agent = Agent(config.model, config.ppo, device="cpu", seed=app.seed)
    episode_log = EpisodeLog(window=window, every=log_every, log=log)
    learner = LocalLearner(agent, app.train_batch_size, on_update=episode_log.updates.append)
    settings = LoopSettings(curriculum=CurriculumSampler(config.curriculum, seed=app.seed), reward=config.reward,
                            num_steps=config.ppo.num_steps, gamma=config.ppo.gamma, gae_lambda=config.ppo.gae_lambda)
    stats = LoopStats()
    start = time.monotonic()

    def should_stop() -> bool:
        return bool((max_env_steps and stats.env_steps >= max_env_steps)
                    or (max_updates and len(episode_log.updates) >= max_updates)
                    or (max_seconds and time.monotonic() - start >= max_seconds)
                    or (stop_when is not None and stop_when(episode_log)))

    workflow(envs, [learner], logging.getLogger("workflow.local"), episode_log, settings, should_stop, stats)
    result = LocalRunResult(agent=agent, stats=stats, episodes=episode_log.episodes, updates=episode_log.updates,
                            seconds=time.monotonic() - start, win_rate=episode_log.mean("win"),
                            mean_score=episode_log.mean("total_score"))
    if log:
        log(f"done: {stats.env_steps} env steps, {stats.episodes} episodes, {len(result.updates)} updates, "
            f"win rate {result.win_rate:.2f} (last {len(episode_log.recent)}), {result.seconds:.1f} s")
    return result
