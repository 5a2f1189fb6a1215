"""Settings of the PPO package over a game's own features (v2, gorge_chase): [model] and [ppo] as
every PPO package has them; each game's config module subclasses `PPOGameSettings` with its reward
terms and train_env_conf keys under sections of its own suffix ([reward_<game>],
[curriculum_<game>]), so one run's TOML never mixes two games' [reward]."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from agent.model_options import ModelConfig
from agent.ppo_options import PPOConfig, check_ppo_sizes
from agent.settings import PackageSettings, check_model_fits


@dataclass
class PPOGameSettings(PackageSettings):
    """[model] and [ppo], checked against the game's features (the subclass's `input_shape`: map
    channels, map size, state size; `core_state_dim`: the state the recurrent core reads)."""

    model: ModelConfig = field(default_factory=ModelConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)

    input_shape: ClassVar[tuple[int, int, int]]
    core_state_dim: ClassVar[int]

    def validate(self) -> None:
        check_model_fits(self.model, self.input_shape)
        check_ppo_sizes(self.model, self.ppo, self.core_state_dim)
