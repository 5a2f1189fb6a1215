"""`agent_<algo>/conf/conf.py` of robot_vacuum's PPO package (app = "robot_vacuum", algo = "ppo"): the
platform's `Config`, and the sections the agent, the reward and the episode loop read: [model]
and [ppo] (the PPO package's classes), [reward_vacuum] (feature.robot_vacuum.reward),
[curriculum_vacuum] (feature.robot_vacuum.curriculum, the game's train_env_conf keys) and
[features_vacuum] (feature.robot_vacuum.observation: what the features read). Where they come
from: agent.settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.ppo_game_settings import PPOGameSettings
from agent.settings import SETTINGS_FILE, game_config, read_settings
from feature.robot_vacuum.curriculum import CurriculumConfig, probe_usr_confs
from feature.robot_vacuum.ppo_definition import CORE_STATE_DIM, SAMPLE_DIM
from feature.robot_vacuum.layout import MAP_SHAPE, STATE_DIM
from feature.robot_vacuum.observation import FeatureConfig
from feature.robot_vacuum.reward import RewardConfig


Config = game_config(MAP_SHAPE, STATE_DIM, SAMPLE_DIM, __name__)


@dataclass
class Settings(PPOGameSettings):
    """[model] [ppo] [reward_vacuum] [curriculum_vacuum] [features_vacuum]."""

    reward_vacuum: RewardConfig = field(default_factory=RewardConfig)
    curriculum_vacuum: CurriculumConfig = field(default_factory=CurriculumConfig)
    features_vacuum: FeatureConfig = field(default_factory=FeatureConfig)

    input_shape = (MAP_SHAPE[0], MAP_SHAPE[1], STATE_DIM)
    core_state_dim = CORE_STATE_DIM

    def usr_confs_to_check(self, seed: int) -> list[tuple[str, str, dict]]:
        return probe_usr_confs(self.curriculum_vacuum)


def load_settings() -> Settings:
    """The robot_vacuum PPO package's settings in this process (agent.settings.read_settings)."""
    return read_settings(Settings, Path(__file__).with_name(SETTINGS_FILE))
