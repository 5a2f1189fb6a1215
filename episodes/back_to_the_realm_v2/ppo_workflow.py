"""The v2 PPO package's training episode loop (`agent_<algo>/workflow/train_workflow.py`):
Kaiwu's `workflow(envs, agents, logger, monitor, *args, **kwargs)` on back_to_the_realm_v2 envs,
in lockstep: the PPO package's loop (episodes.ppo_loop) around the v2 episodes
(episodes.back_to_the_realm_v2.episodes: [curriculum_v2]'s usr_conf, feature.back_to_the_realm_v2.reward's reward, one memory per
env and episode).
"""
from __future__ import annotations

from agent.back_to_the_realm_v2.ppo_config import load_settings
from episodes.ppo_loop import ppo_workflow
from episodes.back_to_the_realm_v2.episodes import game_episodes
from feature.back_to_the_realm_v2.ppo_definition import action_process, observation_process, sample_process


workflow = ppo_workflow(load_settings, game_episodes, observation_process, action_process, sample_process)
