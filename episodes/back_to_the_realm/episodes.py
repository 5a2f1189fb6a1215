"""Back to the Realm's part of the training episodes (episodes.training.GameEpisodes): episodes
from the curriculum ([curriculum], feature.back_to_the_realm.curriculum), the reward of feature.back_to_the_realm.reward over the
step views of feature.back_to_the_realm.unpack, the chests an episode had in its report."""
from __future__ import annotations

import numpy as np

from feature.back_to_the_realm.curriculum import CurriculumSampler, env_conf
from feature.back_to_the_realm.observation18 import Realm18View
from feature.back_to_the_realm.reward import reward_shaping
from feature.back_to_the_realm.unpack import step_view


class RealmEpisodes:
    obs_view = Realm18View  # a 2025 (18.0.2) env's episodes, read as the 2024 protocol's
    env_usr_conf = staticmethod(env_conf)  # the curriculum's 2024 usr_conf as a 2025 env's reset takes it

    def __init__(self, settings, kaiwu_version: str | None = None):
        """`settings`: the package's (reads .reward, .curriculum); `kaiwu_version` as episodes.runner's."""
        self.kaiwu_version = kaiwu_version
        self.reward_cfg = settings.reward
        self.curriculum = CurriculumSampler(settings.curriculum, seed=int(np.random.randint(0, 2**31 - 1)))

    def usr_conf(self, finished: int, samples_learned: int) -> dict:
        return self.curriculum.sample(finished, samples_learned)

    def view(self, obs, t=None):
        return step_view(obs) if t is None else step_view(t.obs, t.score, t.env_info, t.terminated, t.truncated)

    def shape(self, before, after, action: int) -> tuple[float, dict[str, float]]:
        return reward_shaping(before, after, action, self.reward_cfg)

    def report(self, usr_conf: dict) -> dict[str, float]:
        return {"chests_total": float(len(usr_conf["diy"]["treasure_id"]))}


def game_episodes(settings) -> RealmEpisodes:
    """The game's episodes for a package's `settings` (every game's episodes.py names this factory)."""
    return RealmEpisodes(settings)
