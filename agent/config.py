"""`<algo>/config.py` of the PPO package: the platform's `Config` class, and the settings the
agent, the reward and the episode loop read ([model] [ppo] [reward] [curriculum]; where they
come from: agent.settings).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.model import ModelConfig
from agent.ppo import PPOConfig
from agent.settings import SETTINGS_FILE, PackageSettings, read_settings
from feature.constants import NUM_ACTIONS
from feature.curriculum import CurriculumConfig
from feature.definition import SAMPLE_DIM
from feature.layout import MAP_SHAPE, STATE_DIM
from feature.reward import RewardConfig


class Config:
    """The platform's per-algorithm constants (what its framework reads of this file)."""

    SAMPLE_DIM = SAMPLE_DIM  # width of SampleData2NumpyData's rows
    DIM_OF_ACTION_DIRECTION = 8
    DIM_OF_TALENT = 8
    DESC_OBS_SPLIT = [STATE_DIM, MAP_SHAPE]
    OBSERVATION_SHAPE = STATE_DIM + MAP_SHAPE[0] * MAP_SHAPE[1] * MAP_SHAPE[2]
    ACTION_NUM = NUM_ACTIONS
    LEGAL_ACTION_SHAPE = 2
    SUB_ACTION_MASK_SHAPE = 0
    LSTM_HIDDEN_SHAPE = 0
    LSTM_CELL_SHAPE = 0


@dataclass
class Settings(PackageSettings):
    model: ModelConfig = field(default_factory=ModelConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)


SETTINGS_SECTIONS = Settings.sections()


def load_settings() -> Settings:
    """The PPO package's settings in this process (agent.settings.read_settings)."""
    return read_settings(Settings, Path(__file__).with_name(SETTINGS_FILE))
