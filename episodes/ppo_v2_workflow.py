"""The v2 PPO package's training episode loop (`agent_<algo>/workflow/train_workflow.py`):
Kaiwu's `workflow(envs, agents, logger, monitor, *args, **kwargs)` on back_to_the_realm_v2 envs,
in lockstep: the PPO package's loop (episodes.ppo_loop) around the v2 episodes
(episodes.training_v2: [curriculum_v2]'s usr_conf, feature.reward_v2's reward, one memory per
env and episode).
"""
from __future__ import annotations

from agent.ppo_v2_config import load_settings
from episodes.ppo_loop import train_segments
from episodes.training import TrainingEpisodes
from episodes.training_v2 import v2_episodes
from feature.definition_v2 import action_process, observation_process, sample_process
from kaiwu_agent.utils.common_func import attached


@attached
def workflow(envs, agents, logger=None, monitor=None, *args, **kwargs):
    settings = load_settings()
    episodes = TrainingEpisodes(envs, agents[0], v2_episodes(settings), observation_process, action_process,
                                logger, monitor)
    train_segments(episodes, agents[0], settings.ppo.num_steps, settings.model.burn_in, sample_process)
