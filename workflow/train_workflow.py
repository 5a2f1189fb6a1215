"""The package's training episode loop (`<algo>/train_workflow.py`): Kaiwu's
`workflow(envs, agents, logger, monitor)`, over every env it is given, in lockstep.

Per step (workflow.episode.EpisodeRunner): observation_process for every env, one batched
`agent.predict`, action_process, env.step; then reward_shaping and a Frame per env. A chunk of
frames becomes samples (sample_process, GAE) when it reaches `ppo.num_steps` frames or its
episode ends, and goes to `agent.learn(samples)`: on the platform and in this toolkit's
training system that sends them to the replay buffer; the learner trains on them.

Each finished episode reports its shaped reward per term to `monitor.put_data`. Episode
settings come from the curriculum ([curriculum]); stages advance on this workflow's own
episodes and on the run's learned samples, which the agent's counters bring with every model it
loads (so a resumed run keeps its stage). The loop runs until the framework stops it.
"""
from __future__ import annotations

import logging
import os

import numpy as np

from agent.config import load_settings
from feature.curriculum import CurriculumSampler
from feature.definition import action_process, observation_process, sample_process
from feature.reward import reward_shaping
from feature.unpack import step_view
from kaiwu_agent.utils.common_func import Frame, attached
from workflow.episode import EpisodeRunner

MAX_RESET_FAILURES = 3  # consecutive failed resets of one env before the loop gives up


class _Episode:
    """The running episode of one env: its settings, last view, frames and reward sums."""

    def __init__(self, usr_conf: dict, view):
        self.usr_conf = usr_conf
        self.view = view
        self.frames: list = []
        self.reward_sum = 0.0
        self.term_sums: dict[str, float] = {}


@attached
def workflow(envs, agents, logger=None, monitor=None):
    logger = logger or logging.getLogger(__name__)
    agent = agents[0]
    settings = load_settings()
    ppo = settings.ppo
    curriculum = CurriculumSampler(settings.curriculum, seed=int(np.random.randint(0, 2**31 - 1)))
    runner = EpisodeRunner(envs, agent.predict, observation_process, action_process)
    episodes: list[_Episode | None] = [None] * len(envs)
    finished = 0

    def reset(i: int) -> None:
        for _ in range(MAX_RESET_FAILURES):
            usr_conf = curriculum.sample(finished, getattr(agent, "samples_learned", 0))
            try:
                obs = runner.reset(i, usr_conf)
            except Exception:
                logger.exception("env %d: reset failed with usr_conf %s", i, usr_conf)
                continue
            if obs is None:  # the platform answers an invalid usr_conf with None after a timeout
                logger.error("env %d: reset returned no observation for usr_conf %s", i, usr_conf)
                continue
            episodes[i] = _Episode(usr_conf, step_view(obs))
            return
        raise RuntimeError(f"env {i}: reset failed {MAX_RESET_FAILURES} times in a row")

    def flush(i: int, bootstrap_value: float) -> None:
        episode = episodes[i]
        samples = sample_process(episode.frames, bootstrap_value, ppo.gamma, ppo.gae_lambda)
        episode.frames = []
        agent.learn(samples)

    for i in range(len(envs)):
        reset(i)
    while True:
        need_bootstrap = []  # chunk cut mid-episode or episode truncated: V(s') needed
        ended = []
        for t in runner.step():
            episode = episodes[t.index]
            if t.error is not None:
                logger.error("env %d: step(%d) failed at step %d (%s: %s); episode dropped", t.index, t.action,
                             runner.steps(t.index), type(t.error).__name__, t.error)
                reset(t.index)
                continue
            view = step_view(t.obs, t.score, t.env_info, t.terminated, t.truncated)
            reward, terms = reward_shaping(episode.view, view, t.action, settings.reward)
            episode.view = view
            episode.reward_sum += reward
            for name, value in terms.items():
                episode.term_sums[name] = episode.term_sums.get(name, 0.0) + value
            episode.frames.append(Frame(obs=t.before, act=t.act, reward=reward, terminated=t.terminated))
            if t.terminated:
                flush(t.index, 0.0)
            elif t.truncated or len(episode.frames) >= ppo.num_steps:
                need_bootstrap.append(t.index)
            if t.ended:
                ended.append(t.index)
        if need_bootstrap:
            values = agent.predict([runner.obs_data(i) for i in need_bootstrap])
            for i, value in zip(need_bootstrap, values):
                flush(i, value.value)
        for i in ended:
            finished += 1
            if monitor is not None:
                episode = episodes[i]
                report = {"reward": episode.reward_sum, "chests_total": float(len(episode.usr_conf["diy"]["treasure_id"]))}
                report.update({f"reward/{name}": value for name, value in episode.term_sums.items()})
                monitor.put_data({os.getpid(): report})
            reset(i)
