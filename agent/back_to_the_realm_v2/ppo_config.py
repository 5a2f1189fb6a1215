"""`agent_<algo>/conf/conf.py` of back_to_the_realm_v2's PPO package (app = "back_to_the_realm_v2", algo = "ppo"): the
platform's `Config`, and the sections the agent, the reward and the episode loop read: [model]
and [ppo] (the PPO package's classes), [reward_v2] (feature.back_to_the_realm_v2.reward) and [curriculum_v2]
(feature.back_to_the_realm_v2.curriculum, the game's train_env_conf keys). Where they come from: agent.settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.ppo_game_settings import PPOGameSettings
from agent.settings import SETTINGS_FILE, game_config, read_settings
from feature.back_to_the_realm_v2.curriculum import CurriculumConfig, probe_usr_confs
from feature.back_to_the_realm_v2.ppo_definition import CORE_STATE_DIM, SAMPLE_DIM
from feature.back_to_the_realm_v2.layout import MAP_SHAPE, STATE_DIM
from feature.back_to_the_realm_v2.reward import RewardConfig


Config = game_config(MAP_SHAPE, STATE_DIM, SAMPLE_DIM, __name__)


@dataclass
class Settings(PPOGameSettings):
    """[model] [ppo] [reward_v2] [curriculum_v2]."""

    reward_v2: RewardConfig = field(default_factory=RewardConfig)
    curriculum_v2: CurriculumConfig = field(default_factory=CurriculumConfig)

    input_shape = (MAP_SHAPE[0], MAP_SHAPE[1], STATE_DIM)
    core_state_dim = CORE_STATE_DIM

    def usr_confs_to_check(self, seed: int) -> list[tuple[str, str, dict]]:
        return probe_usr_confs(self.curriculum_v2)


def load_settings() -> Settings:
    """The v2 PPO package's settings in this process (agent.settings.read_settings)."""
    return read_settings(Settings, Path(__file__).with_name(SETTINGS_FILE))
