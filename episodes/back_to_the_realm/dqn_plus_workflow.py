"""The DQN package's training episode loop (`<algo>/train_workflow.py` of `dqn_plus`): Kaiwu's
`workflow(envs, agents, logger, monitor)`, over every env it is given, in lockstep.

Per step: the shared episode runner (observation_process, one batched epsilon-greedy
`agent.predict`, action_process, env.step), the shaped reward (feature.back_to_the_realm.reward, as for PPO), a
Frame per env. Every `dqn.chunk_frames` frames, and at every episode end, an env's frames become
n-step samples (feature.back_to_the_realm.dqn_plus_definition.sample_process) and go to `agent.learn`, i.e. to the
replay table; mid-episode the last n_step - 1 frames stay to complete the windows of the next
chunk. Episode settings, reports and retries: episodes.training (episodes.back_to_the_realm.episodes).
"""
from __future__ import annotations

from agent.back_to_the_realm.dqn_plus_config import load_settings
from feature.back_to_the_realm.dqn_plus_definition import action_process, observation_process, sample_process
from kaiwu_agent.utils.common_func import Frame, attached
from episodes.back_to_the_realm.episodes import game_episodes
from episodes.training import TrainingEpisodes


@attached
def workflow(envs, agents, logger=None, monitor=None):
    agent = agents[0]
    settings = load_settings()
    dqn = settings.dqn
    episodes = TrainingEpisodes(envs, agent, game_episodes(settings), observation_process, action_process, logger,
                                monitor)
    frames: list[list] = [[] for _ in envs]
    keep = dqn.n_step - 1  # frames whose n-step window is still open

    while True:
        for t in episodes.step():
            if t.error is not None:
                frames[t.index] = []
                episodes.failed(t)
                continue
            reward = episodes.reward(t)
            chunk = frames[t.index]
            chunk.append(Frame(obs=t.before, act=t.act, reward=reward, next_obs=t.obs_data, terminated=t.terminated))
            if t.ended:
                agent.learn(sample_process(chunk, dqn.n_step, dqn.gamma, final=True))
                frames[t.index] = []
                episodes.ended(t.index)
            elif len(chunk) >= dqn.chunk_frames:
                agent.learn(sample_process(chunk, dqn.n_step, dqn.gamma, final=False))
                frames[t.index] = chunk[len(chunk) - keep:] if keep else []
