"""back_to_the_realm_v2's part of the training episodes (episodes.training.GameEpisodes):
episodes with [curriculum_v2]'s usr_conf, the reward of feature.reward_v2. The envs speak the v2
protocol (episodes.protocol.V2) and every episode keeps its memory (the protocol's view), which
the features and the reward read.
"""
from __future__ import annotations

from episodes.protocol import V2
from feature.reward_v2 import reward_shaping, step_view


class V2Episodes:
    kaiwu_version = V2.name

    def __init__(self, settings):
        """`settings`: the v2 package's (reads .reward_v2, .curriculum_v2)."""
        self.reward_cfg = settings.reward_v2
        self._usr_conf = settings.curriculum_v2.usr_conf()

    def usr_conf(self, finished: int, samples_learned: int) -> dict:
        return self._usr_conf

    def view(self, obs, t=None):
        return step_view(obs) if t is None else step_view(t.obs, t.terminated, t.truncated)

    def shape(self, before, after, action: int) -> tuple[float, dict[str, float]]:
        return reward_shaping(before, after, action, self.reward_cfg)

    def report(self, usr_conf: dict) -> dict[str, float]:
        return {}
