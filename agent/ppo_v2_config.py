"""`agent_<algo>/conf/conf.py` of the v2 PPO package (`ppo_v2`, back_to_the_realm_v2): the
platform's `Config`, and the sections the agent, the reward and the episode loop read: [model]
and [ppo] (the PPO package's classes), [reward_v2] (feature.reward_v2) and [curriculum_v2]
(feature.curriculum_v2, the game's train_env_conf keys). Where they come from: agent.settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.model_options import ModelConfig
from agent.ppo_options import PPOConfig, check_ppo_sizes
from agent.settings import SETTINGS_FILE, PackageSettings, game_config, read_settings
from feature.curriculum_v2 import CurriculumConfig, probe_usr_confs
from feature.definition_v2 import CORE_STATE_DIM, SAMPLE_DIM
from feature.layout_v2 import MAP_SHAPE, STATE_DIM
from feature.reward_v2 import RewardConfig


Config = game_config(MAP_SHAPE, STATE_DIM, SAMPLE_DIM, __name__)


@dataclass
class Settings(PackageSettings):
    """[model] [ppo] [reward_v2] [curriculum_v2]."""

    model: ModelConfig = field(default_factory=ModelConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    reward_v2: RewardConfig = field(default_factory=RewardConfig)
    curriculum_v2: CurriculumConfig = field(default_factory=CurriculumConfig)

    def validate(self) -> None:
        check_ppo_sizes(self.model, self.ppo, CORE_STATE_DIM)

    def usr_confs_to_check(self, seed: int) -> list[tuple[str, str, dict]]:
        return probe_usr_confs(self.curriculum_v2)


def load_settings() -> Settings:
    """The v2 PPO package's settings in this process (agent.settings.read_settings)."""
    return read_settings(Settings, Path(__file__).with_name(SETTINGS_FILE))
