"""The sections both of Back to the Realm's (2024) packages read, PPO's and DQN's: the network's
backbone [model], the reward [reward] (feature.back_to_the_realm.reward) and the curriculum [curriculum]
(feature.back_to_the_realm.curriculum), with the checks across them."""
from __future__ import annotations

import dataclasses

from agent.model_options import ModelConfig
from agent.settings import PackageSettings, check_model_fits
from feature.back_to_the_realm.curriculum import CurriculumConfig, probe_usr_confs
from feature.back_to_the_realm.layout import INPUT_SHAPE
from feature.back_to_the_realm.reward import RewardConfig


@dataclasses.dataclass
class RealmSettings(PackageSettings):
    """[model] [reward] [curriculum]; each algorithm adds its own section."""

    model: ModelConfig = dataclasses.field(default_factory=ModelConfig)
    reward: RewardConfig = dataclasses.field(default_factory=RewardConfig)
    curriculum: CurriculumConfig = dataclasses.field(default_factory=CurriculumConfig)

    def validate(self) -> None:
        check_model_fits(self.model, INPUT_SHAPE)

    def usr_confs_to_check(self, seed: int) -> list[tuple[str, str, dict]]:
        """The curriculum's usr_confs at every stage (feature.back_to_the_realm.curriculum.probe_usr_confs)."""
        return probe_usr_confs(self.curriculum, seed)
