"""The gorge_chase PPO package's training episode loop (`agent_<algo>/workflow/train_workflow.py`):
Kaiwu's `workflow(envs, agents, logger, monitor, *args, **kwargs)` on gorge_chase envs (15.0.1:
`env.reset(usr_conf)` -> env_obs, `env.step(act)` -> (env_reward, env_obs)), in lockstep: the
PPO package's loop (episodes.ppo_loop) around gorge_chase's episodes (episodes.gorge_chase.episodes:
[curriculum_gorge]'s usr_conf, feature.gorge_chase.reward's reward, one memory per env and episode).
"""
from __future__ import annotations

from agent.gorge_chase.ppo_config import load_settings
from episodes.gorge_chase.episodes import game_episodes
from episodes.ppo_loop import ppo_workflow
from feature.gorge_chase.ppo_definition import action_process, observation_process, sample_process


workflow = ppo_workflow(load_settings, game_episodes, observation_process, action_process, sample_process)
