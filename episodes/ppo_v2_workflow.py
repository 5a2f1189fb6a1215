"""The v2 PPO package's training episode loop (`agent_<algo>/workflow/train_workflow.py`):
Kaiwu's `workflow(envs, agents, logger, monitor, *args, **kwargs)` on back_to_the_realm_v2 envs,
in lockstep: the PPO package's loop (episodes.ppo_loop) around the v2 episodes
(episodes.training_v2: [curriculum_v2]'s usr_conf, feature.reward_v2's reward, one memory per
env and episode).
"""
from __future__ import annotations

from agent.ppo_v2_config import load_settings
from episodes.ppo_loop import ppo_workflow
from episodes.training_v2 import v2_episodes
from feature.definition_v2 import action_process, observation_process, sample_process


workflow = ppo_workflow(load_settings, v2_episodes, observation_process, action_process, sample_process)
