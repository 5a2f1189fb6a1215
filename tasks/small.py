"""What the small learning tasks share: the AppConfig (the PPO package of a game trained in one
process on 4 envs, batches of 8 segments of up to 64 steps, a small network; each task sets its
game's curriculum section beside it) and, for the 2026 engine's games, the policies a trained
agent is measured against (a random legal action, the agent's own exploit)."""
from __future__ import annotations

import dataclasses

import numpy as np


def small_ppo_config(game: str, seed: int, learning_rate: float, ppo: dict):
    """The task's AppConfig for the project's PPO of `game` (app.app); `ppo`: [ppo] keys that
    replace the task's (learning_rate among them)."""
    from agent.model import ModelConfig
    from workflow.config import AppConfig, FrameworkConfig

    cfg = AppConfig(FrameworkConfig(app=game, algo="ppo", seed=seed, envs_per_aisrv=4, train_batch_size=8,
                                    torch_num_threads=1))
    cfg.model = ModelConfig(channels=[8, 16], kernel_sizes=[3, 3], strides=[2, 2], hidden_size=64)
    cfg.ppo = dataclasses.replace(cfg.ppo, **{"num_steps": 64, "learning_rate": learning_rate, **ppo})
    return cfg


class RandomLegal:
    """A uniformly random legal action of the 2026 engine's env_obs (its legal_action), seeded."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def __call__(self, env_obs) -> int:
        return int(self.rng.choice(np.flatnonzero(env_obs["observation"]["legal_action"])))


class Greedy:
    """The agent's exploit on the raw env_obs, as the platform's evaluation calls it."""

    def __init__(self, agent):
        self.agent = agent

    def reset(self, env_obs) -> None:
        self.agent.reset(env_obs)

    def __call__(self, env_obs) -> int:
        return self.agent.exploit(env_obs)


def untrained_agent(cfg):
    """The project's agent of the task's game (cfg.app.app, cfg.app.algo) with its initial weights
    (the config's seed), built from the config's sections as the host builds its settings."""
    import importlib

    import games

    modules = games.get(cfg.app.app).project_agents[cfg.app.algo]
    settings_class = importlib.import_module(modules["config"]).Settings
    settings = settings_class(**{name: getattr(cfg, name) for name in settings_class.sections()})
    return importlib.import_module(modules["agent"]).Agent(settings=settings, seed=cfg.app.seed)

