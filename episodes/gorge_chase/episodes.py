"""gorge_chase's part of the training episodes (episodes.training.GameEpisodes): episodes with
[curriculum_gorge]'s usr_conf (its `draw` drawn per episode), the reward of feature.gorge_chase.reward, the chests an episode had
in its report. The envs speak the 15.0.1 protocol (episodes.protocol.GORGE) and every episode
keeps its memory (GorgeView, the view the runner is given), which the features and the reward read.
"""
from __future__ import annotations

import random
from functools import partial

import numpy as np

from episodes.protocol import GORGE
from episodes.training import SettingsEpisodes
from feature.gorge_chase.observation import GorgeView
from feature.gorge_chase.reward import reward_shaping, step_view


def chests_of(usr_conf: dict) -> dict[str, float]:
    return {"chests_total": float(usr_conf["env_conf"].get("treasure_count", 0))}


def game_episodes(settings) -> SettingsEpisodes:
    """`settings`: the gorge_chase package's (reads .reward_gorge, .curriculum_gorge, .features_gorge).
    [curriculum_gorge]'s `draw` is drawn per episode from an RNG seeded off numpy's global one,
    which the host seeds per aisrv (the run's seed)."""
    view = partial(GorgeView, **settings.features_gorge.view_options())
    rng = random.Random(int(np.random.randint(0, 2**31 - 1)))
    return SettingsEpisodes(GORGE.name, view, partial(settings.curriculum_gorge.usr_conf, rng), settings.reward_gorge,
                            step_view, reward_shaping, chests_of)
