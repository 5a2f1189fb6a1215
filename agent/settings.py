"""The sections of the run's TOML an algorithm package reads, and where it finds them.

Each algorithm's `config.py` declares a dataclass of sections (the 2024 PPO: [model] [ppo] [reward]
[curriculum], agent.back_to_the_realm.realm_settings; a later game's PPO: [model] [ppo] [reward_<game>]
[curriculum_<game>], agent.ppo_game_settings) on `PackageSettings`, and reads them with
`read_settings`:
1. hosted by this toolkit (training, evaluation): the platform's CONFIG carries the `Settings`
   object as `CONFIG.package_settings`, validated once where the config was read (the run's
   TOML with its --set overrides: workflow.config.load_config; a checkpoint's run config:
   evaluation.episodes.load_agent), and used as it is (settings of another package, hosted
   earlier in the same process, are not this one's);
2. exported (tools/export_kaiwu.py): `settings.json` beside the package's config.py, written from
   the run the checkpoint came from;
3. otherwise the defaults of the dataclasses.
"""
from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import TypeVar

from agent.model_options import ModelConfig
from feature.segments import NUM_ACTIONS, NUM_FLASHES, NUM_MOVES
from kaiwudrl.common.config.config_control import CONFIG

SETTINGS_FILE = "settings.json"


S = TypeVar("S", bound="PackageSettings")


def game_config(map_shape: tuple, state_dim: int, sample_dim: int, module: str, legal_action_shape: int = 2) -> type:
    """`Config` of a package (`<algo>/config.py`): the platform's per-algorithm constants for a
    game's observation sizes and row width (`module`: the package's config module, where the
    platform finds it; `legal_action_shape`: the 2024 observation's legal_act, [1, flash_ready])."""
    return type("Config", (), {
        "__doc__": "The platform's per-algorithm constants (what its framework reads of this file).",
        "__module__": module, "DIM_OF_ACTION_DIRECTION": NUM_MOVES, "DIM_OF_TALENT": NUM_FLASHES,
        "DESC_OBS_SPLIT": [state_dim, map_shape],
        "OBSERVATION_SHAPE": state_dim + map_shape[0] * map_shape[1] * map_shape[2], "ACTION_NUM": NUM_ACTIONS,
        "LEGAL_ACTION_SHAPE": legal_action_shape, "SUB_ACTION_MASK_SHAPE": 0, "LSTM_HIDDEN_SHAPE": 0,
        "LSTM_CELL_SHAPE": 0, "SAMPLE_DIM": sample_dim})


def check_model_fits(model: ModelConfig, input_shape: tuple[int, int, int]) -> None:
    """[model]'s conv tower against a game's features (map channels, map size, state size)."""
    try:
        model.validate(input_shape)
    except ValueError as e:
        raise ValueError(f"model: {e}") from None


@dataclasses.dataclass
class PackageSettings:
    """Base of an algorithm's settings: every field is one TOML section (a dataclass with validate())."""

    @classmethod
    def sections(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.init)

    @classmethod
    def from_dict(cls: type[S], data: dict) -> S:
        """Sections as plain dicts (validated TOML, or settings.json) -> settings."""
        allowed = cls.sections()
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise ValueError(f"package settings: unknown section(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
        hints = typing.get_type_hints(cls)
        sections = {}
        for name in allowed:
            values = dict(data.get(name) or {})
            make = getattr(hints[name], "from_dict", None) or (lambda v, cls=hints[name]: cls(**v))  # nested sections
            try:
                sections[name] = make(values)
            except TypeError as e:
                raise ValueError(f"package settings [{name}]: {e}") from e
            sections[name].validate()
        settings = cls(**sections)
        settings.validate()
        return settings

    def validate(self) -> None:
        """Rules across sections (ValueError naming both keys); none by default."""

    def usr_confs_to_check(self, seed: int) -> list[tuple[str, str, dict]]:
        """(section, when, usr_conf): usr_confs the episode loop may reset with, for the host to try on its
        simulator before a run starts; none by default."""
        return []

    def to_dict(self) -> dict:
        """JSON-ready sections (None values dropped, as TOML has no null)."""
        def plain(value):
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items() if v is not None}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value
        return {name: plain(dataclasses.asdict(getattr(self, name))) for name in self.sections()}


def read_settings(cls: type[S], settings_file: Path) -> S:
    """The settings of this process (see the module docstring for where they come from)."""
    hosted = CONFIG.package_settings
    if isinstance(hosted, cls):
        return hosted
    if hosted and not isinstance(hosted, PackageSettings):
        raise TypeError(f"CONFIG.package_settings is a {type(hosted).__name__}: the host hands a package its "
                        f"validated {cls.__module__}.{cls.__name__} (a dict of sections: {cls.__name__}.from_dict)")
    # another package's settings (an agent of another game built in the same process) are not this one's
    if settings_file.is_file():
        try:
            data = json.loads(settings_file.read_text())
        except ValueError as e:
            raise ValueError(f"{settings_file}: not valid JSON: {e}") from e
        return cls.from_dict(data)
    return cls()
