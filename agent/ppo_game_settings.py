"""Settings of the PPO package over a game's own features (v2, gorge_chase): [model] and [ppo] as
every PPO package has them, and the game's reward terms and train_env_conf keys under sections of
its own suffix, so one run's TOML never mixes two games' [reward]."""
from __future__ import annotations

import dataclasses
from typing import Callable

from agent.model_options import ModelConfig
from agent.ppo_options import PPOConfig, check_ppo_sizes
from agent.settings import PackageSettings, check_model_fits


def ppo_game_settings(suffix: str, reward: type, curriculum: type, probe_usr_confs: Callable,
                      core_state_dim: int, input_shape: tuple[int, int, int], module: str,
                      features: type | None = None) -> type:
    """The `Settings` dataclass of [model] [ppo] [reward_<suffix>] [curriculum_<suffix>], and
    [features_<suffix>] where the game's features take options (`input_shape`: the game's
    features for [model]; `module`: the package's config module, which binds it as `Settings`)."""
    reward_key, curriculum_key = f"reward_{suffix}", f"curriculum_{suffix}"
    optional = [] if features is None else [
        (f"features_{suffix}", features, dataclasses.field(default_factory=features))]

    def validate(self) -> None:
        check_model_fits(self.model, input_shape)
        check_ppo_sizes(self.model, self.ppo, core_state_dim)

    def usr_confs_to_check(self, seed: int) -> list[tuple[str, str, dict]]:
        return probe_usr_confs(getattr(self, curriculum_key))

    settings = dataclasses.make_dataclass("Settings", [
        ("model", ModelConfig, dataclasses.field(default_factory=ModelConfig)),
        ("ppo", PPOConfig, dataclasses.field(default_factory=PPOConfig)),
        (reward_key, reward, dataclasses.field(default_factory=reward)),
        (curriculum_key, curriculum, dataclasses.field(default_factory=curriculum)),
        *optional,
    ], bases=(PackageSettings,), namespace={
        "__doc__": f"[model] [ppo] [{reward_key}] [{curriculum_key}]" + "".join(f" [{f[0]}]" for f in optional) + ".",
        "validate": validate, "usr_confs_to_check": usr_confs_to_check})
    settings.__module__ = module  # pickled by reference, as a class written in that module
    return settings
