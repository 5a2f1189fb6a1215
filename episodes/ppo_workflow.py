"""The package's training episode loop (`<algo>/train_workflow.py`): Kaiwu's
`workflow(envs, agents, logger, monitor)`, over every env it is given, in lockstep.

Per step (episodes.runner.EpisodeRunner): observation_process for every env, one batched
`agent.predict`, action_process, env.step; then reward_shaping and a Frame per env. A chunk of
frames becomes samples (sample_process, GAE) when it reaches `ppo.num_steps` frames or its
episode ends, and goes to `agent.learn(samples)`: on the platform and in this toolkit's
training system that sends them to the replay buffer; the learner trains on them.

Around the episodes (episodes.training, shared with the DQN package's loop): each
finished episode reports its shaped reward per term to `monitor.put_data`; episode settings
come from the curriculum ([curriculum]); stages advance on this workflow's own episodes and on
the run's learned samples, which the agent's counters bring with every model it loads (so a
resumed run keeps its stage). The loop runs until the framework stops it.
"""
from __future__ import annotations

from agent.config import load_settings
from feature.definition import action_process, observation_process, sample_process
from kaiwu_agent.utils.common_func import Frame, attached
from episodes.training import TrainingEpisodes


@attached
def workflow(envs, agents, logger=None, monitor=None):
    agent = agents[0]
    settings = load_settings()
    ppo = settings.ppo
    episodes = TrainingEpisodes(envs, agent, settings, observation_process, action_process, logger, monitor)
    frames: list[list] = [[] for _ in envs]

    def flush(i: int, bootstrap_value: float) -> None:
        samples = sample_process(frames[i], bootstrap_value, ppo.gamma, ppo.gae_lambda)
        frames[i] = []
        agent.learn(samples)

    while True:
        need_bootstrap = []  # chunk cut mid-episode or episode truncated: V(s') needed
        ended = []
        for t in episodes.step():
            if t.error is not None:
                frames[t.index] = []
                episodes.failed(t)
                continue
            reward = episodes.reward(t)
            frames[t.index].append(Frame(obs=t.before, act=t.act, reward=reward, terminated=t.terminated))
            if t.terminated:
                flush(t.index, 0.0)
            elif t.truncated or len(frames[t.index]) >= ppo.num_steps:
                need_bootstrap.append(t.index)
            if t.ended:
                ended.append(t.index)
        if need_bootstrap:
            values = agent.predict([episodes.runner.obs_data(i) for i in need_bootstrap])
            for i, value in zip(need_bootstrap, values):
                flush(i, value.value)
        for i in ended:
            episodes.ended(i)
