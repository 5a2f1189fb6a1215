"""`<algo>/config.py` of the DQN package (`dqn_plus`): the platform's `Config` class, and the
settings the agent, the reward and the episode loop read ([model] [dqn] [reward] [curriculum];
where they come from: agent.settings). [model] is the PPO package's backbone
(channels, kernel_sizes, strides, hidden_size; share_backbone has no meaning for one network).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.dqn_options import DQNConfig
from agent.back_to_the_realm.realm_settings import RealmSettings
from agent.settings import SETTINGS_FILE, game_config, read_settings
from feature.back_to_the_realm.dqn_plus_definition import SAMPLE_DIM
from feature.back_to_the_realm.layout import MAP_SHAPE, STATE_DIM

Config = game_config(MAP_SHAPE, STATE_DIM, SAMPLE_DIM, __name__)  # SAMPLE_DIM: with the next observation


@dataclass
class Settings(RealmSettings):
    """[model] [reward] [curriculum] (agent.back_to_the_realm.realm_settings.RealmSettings) and [dqn]."""

    dqn: DQNConfig = field(default_factory=DQNConfig)


def load_settings() -> Settings:
    """The DQN package's settings in this process (agent.settings.read_settings)."""
    return read_settings(Settings, Path(__file__).with_name(SETTINGS_FILE))
