"""The PPO package's training episode loop (`<algo>/train_workflow.py`): Kaiwu's
`workflow(envs, agents, logger, monitor)`, over every env it is given, in lockstep.

Per step (episodes.runner.EpisodeRunner): observation_process for every env, one batched
`agent.predict`, action_process, env.step; then reward_shaping and a Frame per env. An env's
frames become one sample, a trajectory segment with the observation after its last frame
(sample_process), when they reach `ppo.num_steps` or the episode ends (terminated, or truncated
by the step limit), and go to `agent.learn([segment])`: on the platform and in this toolkit's
training system that sends it to the replay buffer. Nothing here values a state: the learner
computes values and advantages with its current critic (Agent.learn), so the loop asks the
agent for nothing but actions.

A recurrent policy ([model] core) gets its state back with each observation (episodes.runner)
and every segment stores the state it starts from (sample_process). With `[model] burn_in` a
segment cut mid-episode leaves its last burn_in frames to start the next one, marked as
warm-up: the learner unrolls them from the stored state but trains only on the frames after.

Around the episodes (episodes.training, shared with the DQN package's loop): each
finished episode reports its shaped reward per term to `monitor.put_data`; episode settings
come from the curriculum ([curriculum]); stages advance on this workflow's own episodes and on
the run's learned frames, which the agent's counters bring with every model it loads (so a
resumed run keeps its stage). The loop runs until the framework stops it.
"""
from __future__ import annotations

from agent.ppo_config import load_settings
from feature.definition import action_process, observation_process, sample_process
from kaiwu_agent.utils.common_func import Frame, attached
from episodes.training import TrainingEpisodes


@attached
def workflow(envs, agents, logger=None, monitor=None):
    agent = agents[0]
    settings = load_settings()
    num_steps, burn_in = settings.ppo.num_steps, settings.model.burn_in
    episodes = TrainingEpisodes(envs, agent, settings, observation_process, action_process, logger, monitor)
    frames: list[list] = [[] for _ in envs]
    warm_up = [0 for _ in envs]  # leading frames of each env's segment repeated from its previous one

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
