"""The v2 PPO package's training episode loop (`agent_<algo>/workflow/train_workflow.py`):
Kaiwu's `workflow(envs, agents, logger, monitor, *args, **kwargs)` on back_to_the_realm_v2 envs,
in lockstep. The PPO package's loop (episodes.ppo_workflow: segments of up to `[ppo]
num_steps` frames, burn-in for a recurrent core, values and advantages on the learner) around
the v2 episodes (episodes.training_v2: [curriculum_v2]'s usr_conf, feature.reward_v2's reward,
one memory per env and episode). The loop runs until the framework stops it.
"""
from __future__ import annotations

from agent.ppo_v2_config import load_settings
from episodes.training_v2 import TrainingEpisodes
from feature.definition_v2 import action_process, observation_process, sample_process
from kaiwu_agent.utils.common_func import Frame, attached


@attached
def workflow(envs, agents, logger=None, monitor=None, *args, **kwargs):
    agent = agents[0]
    settings = load_settings()
    num_steps, burn_in = settings.ppo.num_steps, settings.model.burn_in
    episodes = TrainingEpisodes(envs, agent, settings, observation_process, action_process, logger, monitor)
    frames: list[list] = [[] for _ in envs]
    warm_up = [0 for _ in envs]

    while True:
        for t in episodes.step():
            if t.error is not None:
                frames[t.index], warm_up[t.index] = [], 0
                episodes.failed(t)
                continue
            reward = episodes.reward(t)
            frames[t.index].append(Frame(obs=t.before, act=t.act, reward=reward, terminated=t.terminated))
            if t.ended or len(frames[t.index]) >= num_steps:
                agent.learn(sample_process(frames[t.index], t.obs_data, warm_up[t.index]))
                warm_up[t.index] = 0 if t.ended else burn_in
                frames[t.index] = frames[t.index][len(frames[t.index]) - warm_up[t.index]:] if warm_up[t.index] else []
            if t.ended:
                episodes.ended(t.index)
