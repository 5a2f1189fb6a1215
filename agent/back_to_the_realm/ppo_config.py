"""`<algo>/config.py` of the PPO package: the platform's `Config` class, and the settings the
agent, the reward and the episode loop read ([model] [ppo] [reward] [curriculum]; where they
come from: agent.settings).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.ppo_options import PPOConfig, check_ppo_sizes
from agent.back_to_the_realm.realm_settings import RealmSettings
from agent.settings import SETTINGS_FILE, game_config, read_settings
from feature.back_to_the_realm.ppo_definition import CORE_STATE_DIM, SAMPLE_DIM
from feature.back_to_the_realm.layout import MAP_SHAPE, STATE_DIM

# SAMPLE_DIM: the width of SampleData2NumpyData's rows, one segment of SEGMENT_FRAMES frames, fixed
# at import whatever [ppo] num_steps is (feature.segments.SEGMENT_FRAMES says why)
Config = game_config(MAP_SHAPE, STATE_DIM, SAMPLE_DIM, __name__)


@dataclass
class Settings(RealmSettings):
    """[model] [reward] [curriculum] (agent.back_to_the_realm.realm_settings.RealmSettings) and [ppo]."""

    ppo: PPOConfig = field(default_factory=PPOConfig)

    def validate(self) -> None:
        super().validate()
        check_ppo_sizes(self.model, self.ppo, CORE_STATE_DIM)


def load_settings() -> Settings:
    """The PPO package's settings in this process (agent.settings.read_settings)."""
    return read_settings(Settings, Path(__file__).with_name(SETTINGS_FILE))
