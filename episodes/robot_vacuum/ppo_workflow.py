"""The robot_vacuum PPO package's training episode loop (`agent_<algo>/workflow/train_workflow.py`):
Kaiwu's `workflow(envs, agents, logger, monitor, *args, **kwargs)` on robot_vacuum envs (13.0.1:
`env.reset(usr_conf)` -> env_obs, `env.step(act)` -> (env_reward, env_obs)), in lockstep: the
PPO package's loop (episodes.ppo_loop) around robot_vacuum's episodes (episodes.robot_vacuum.episodes:
[curriculum_vacuum]'s usr_conf, feature.robot_vacuum.reward's reward, one memory per env and episode).
"""
from __future__ import annotations

from agent.robot_vacuum.ppo_config import load_settings
from episodes.robot_vacuum.episodes import game_episodes
from episodes.ppo_loop import ppo_workflow
from feature.robot_vacuum.ppo_definition import action_process, observation_process, sample_process


workflow = ppo_workflow(load_settings, game_episodes, observation_process, action_process, sample_process)
