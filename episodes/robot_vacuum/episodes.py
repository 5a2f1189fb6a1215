"""robot_vacuum's part of the training episodes (episodes.training.GameEpisodes): episodes with
[curriculum_vacuum]'s usr_conf, the reward of feature.robot_vacuum.reward, the official robots
and chargers an episode had in its report. The envs speak the 13.0.1 protocol (episodes.protocol.VACUUM) and every
episode keeps its memory (VacuumView, the view the runner is given), which the features and the
reward read.
"""
from __future__ import annotations

from functools import partial

from episodes.protocol import VACUUM
from episodes.training import SettingsEpisodes
from feature.robot_vacuum.observation import VacuumView
from feature.robot_vacuum.reward import reward_shaping, step_view


def setting_of(usr_conf: dict) -> dict[str, float]:
    """The episode's official robots and chargers, for its report."""
    conf = usr_conf["env_conf"]
    return {"robots": float(conf.get("robot_count", 0)), "chargers": float(conf.get("charger_count", 0))}


def game_episodes(settings) -> SettingsEpisodes:
    """`settings`: the robot_vacuum package's (reads .reward_vacuum, .curriculum_vacuum, .features_vacuum)."""
    view = partial(VacuumView, **settings.features_vacuum.view_options())
    return SettingsEpisodes(VACUUM.name, view, settings.curriculum_vacuum.usr_conf, settings.reward_vacuum,
                            step_view, reward_shaping, setting_of)
