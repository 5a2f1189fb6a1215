"""The AppConfig of a small learning task (near_end_v2, gorge_survival): the PPO
package of a game trained in one process on 4 envs, batches of 8 segments of up to 64 steps, a
small network. Each task sets its game's curriculum section beside it."""
from __future__ import annotations

import dataclasses


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
