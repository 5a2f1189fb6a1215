"""`agent_<algo>/conf/conf.py` of gorge_chase's PPO package (app = "gorge_chase", algo = "ppo"): the platform's
`Config`, and the sections the agent, the reward and the episode loop read: [model] and [ppo]
(the PPO package's classes), [reward_gorge] (feature.gorge_chase.reward), [curriculum_gorge]
(feature.gorge_chase.curriculum, the game's train_env_conf keys) and [features_gorge]
(feature.gorge_chase.observation: what the features read). Where they come from:
agent.settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.ppo_game_settings import PPOGameSettings
from agent.settings import SETTINGS_FILE, game_config, read_settings
from feature.gorge_chase.curriculum import CurriculumConfig, probe_usr_confs
from feature.gorge_chase.ppo_definition import CORE_STATE_DIM, SAMPLE_DIM
from feature.gorge_chase.layout import MAP_SHAPE, STATE_DIM
from feature.gorge_chase.observation import FeatureConfig
from feature.gorge_chase.reward import RewardConfig


Config = game_config(MAP_SHAPE, STATE_DIM, SAMPLE_DIM, __name__)


@dataclass
class Settings(PPOGameSettings):
    """[model] [ppo] [reward_gorge] [curriculum_gorge] [features_gorge]."""

    reward_gorge: RewardConfig = field(default_factory=RewardConfig)
    curriculum_gorge: CurriculumConfig = field(default_factory=CurriculumConfig)
    features_gorge: FeatureConfig = field(default_factory=FeatureConfig)

    input_shape = (MAP_SHAPE[0], MAP_SHAPE[1], STATE_DIM)
    core_state_dim = CORE_STATE_DIM

    def usr_confs_to_check(self, seed: int) -> list[tuple[str, str, dict]]:
        return probe_usr_confs(self.curriculum_gorge)


def load_settings() -> Settings:
    """The gorge_chase PPO package's settings in this process (agent.settings.read_settings)."""
    return read_settings(Settings, Path(__file__).with_name(SETTINGS_FILE))
