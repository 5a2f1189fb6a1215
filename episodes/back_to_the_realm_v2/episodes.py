"""back_to_the_realm_v2's part of the training episodes (episodes.training.GameEpisodes):
episodes with [curriculum_v2]'s usr_conf, the reward of feature.back_to_the_realm_v2.reward. The envs speak the v2
protocol (episodes.protocol.V2) and every episode keeps its memory (V2View, the view the runner
is given), which the features and the reward read.
"""
from __future__ import annotations

from episodes.protocol import V2
from episodes.training import SettingsEpisodes
from feature.back_to_the_realm_v2.observation import V2View
from feature.back_to_the_realm_v2.reward import reward_shaping, step_view


def game_episodes(settings) -> SettingsEpisodes:
    """`settings`: the v2 package's (reads .reward_v2, .curriculum_v2)."""
    return SettingsEpisodes(V2.name, V2View, settings.curriculum_v2.usr_conf, settings.reward_v2, step_view,
                            reward_shaping)
