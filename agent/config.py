"""`<algo>/config.py` of the package: the platform's `Config` class, and the settings the agent,
the reward and the episode loop read.

`Settings` holds the package's own sections of the run's TOML ([model], [ppo], [reward],
[curriculum]). `load_settings()` finds them where the package runs:
1. hosted by this toolkit's training system: the platform's CONFIG carries the run's sections
   as `CONFIG.package_settings` (the TOML and its --set overrides, already validated);
2. exported (tools/export_kaiwu.py): `settings.json` beside this file, written from the run the
   checkpoint came from;
3. otherwise the defaults of the dataclasses.
"""
from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass, field
from pathlib import Path

from agent.model import ModelConfig
from agent.ppo import PPOConfig
from feature.constants import NUM_ACTIONS
from feature.curriculum import CurriculumConfig, CurriculumStage
from feature.definition import SAMPLE_DIM
from feature.layout import MAP_SHAPE, STATE_DIM
from feature.reward import RewardConfig
from kaiwudrl.common.config.config_control import CONFIG

SETTINGS_FILE = "settings.json"
SETTINGS_SECTIONS = ("model", "ppo", "reward", "curriculum")


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
class Settings:
    model: ModelConfig = field(default_factory=ModelConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)

    @classmethod
    def from_dict(cls, data: dict) -> "Settings":
        """Sections as plain dicts (validated TOML, or settings.json) -> Settings."""
        unknown = sorted(set(data) - set(SETTINGS_SECTIONS))
        if unknown:
            raise ValueError(f"package settings: unknown section(s) {', '.join(unknown)}; allowed: "
                             f"{', '.join(SETTINGS_SECTIONS)}")
        sections = {}
        for name in SETTINGS_SECTIONS:
            section_cls = typing.get_type_hints(cls)[name]
            values = dict(data.get(name) or {})
            if section_cls is CurriculumConfig and "stages" in values:
                values["stages"] = [CurriculumStage(**stage) for stage in values["stages"]]
            try:
                sections[name] = section_cls(**values)
            except TypeError as e:
                raise ValueError(f"package settings [{name}]: {e}") from e
            sections[name].validate()
        return cls(**sections)

    def to_dict(self) -> dict:
        """JSON-ready sections (None values dropped, as TOML has no null)."""
        def plain(value):
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items() if v is not None}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value
        return {name: plain(dataclasses.asdict(getattr(self, name))) for name in SETTINGS_SECTIONS}


def load_settings() -> Settings:
    """The settings of this process (see the module docstring for where they come from)."""
    hosted = CONFIG.package_settings
    if isinstance(hosted, dict) and hosted:
        return Settings.from_dict(hosted)
    file = Path(__file__).with_name(SETTINGS_FILE)
    if file.is_file():
        try:
            data = json.loads(file.read_text())
        except ValueError as e:
            raise ValueError(f"{file}: not valid JSON: {e}") from e
        return Settings.from_dict(data)
    return Settings()
