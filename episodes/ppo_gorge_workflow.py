"""The gorge_chase PPO package's training episode loop (`agent_<algo>/workflow/train_workflow.py`):
Kaiwu's `workflow(envs, agents, logger, monitor, *args, **kwargs)` on gorge_chase envs (15.0.1:
`env.reset(usr_conf)` -> env_obs, `env.step(act)` -> (env_reward, env_obs)), in lockstep: the
PPO package's loop (episodes.ppo_loop) around gorge_chase's episodes (episodes.gorge_episodes:
[curriculum_gorge]'s usr_conf, feature.gorge_chase.reward's reward, one memory per env and episode).
"""
from __future__ import annotations

from agent.ppo_gorge_config import load_settings
from episodes.gorge_episodes import gorge_episodes
from episodes.ppo_loop import train_segments
from episodes.training import TrainingEpisodes
from feature.gorge_chase.definition import action_process, observation_process, sample_process
from kaiwu_agent.utils.common_func import attached


@attached
def workflow(envs, agents, logger=None, monitor=None, *args, **kwargs):
    settings = load_settings()
    episodes = TrainingEpisodes(envs, agents[0], gorge_episodes(settings), observation_process, action_process,
                                logger, monitor)
    train_segments(episodes, agents[0], settings.ppo.num_steps, settings.model.burn_in, sample_process)
