"""gorge_chase's part of the training episodes (episodes.training.GameEpisodes): episodes with
[curriculum_gorge]'s usr_conf, the reward of feature.gorge_chase.reward. The envs speak the
15.0.1 protocol (episodes.protocol.GORGE) and every episode keeps its memory (the protocol's
view), which the features and the reward read.
"""
from __future__ import annotations

from episodes.protocol import GORGE
from feature.gorge_chase.reward import reward_shaping, step_view


class GorgeEpisodes:
    kaiwu_version = GORGE.name

    def __init__(self, settings):
        """`settings`: the gorge_chase package's (reads .reward_gorge, .curriculum_gorge)."""
        self.reward_cfg = settings.reward_gorge
        self._usr_conf = settings.curriculum_gorge.usr_conf()

    def usr_conf(self, finished: int, samples_learned: int) -> dict:
        return self._usr_conf

    def view(self, obs, t=None):
        return step_view(obs) if t is None else step_view(t.obs, t.terminated, t.truncated)

    def shape(self, before, after, action: int) -> tuple[float, dict[str, float]]:
        return reward_shaping(before, after, action, self.reward_cfg)

    def report(self, usr_conf: dict) -> dict[str, float]:
        return {"chests_total": float(usr_conf["env_conf"].get("treasure_count", 0))}
