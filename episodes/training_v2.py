"""What the v2 training workflow does around an episode (episodes.training's job, for
back_to_the_realm_v2): start episodes with [curriculum_v2]'s usr_conf (a failed reset is
retried), shape each step's reward (feature.reward_v2) and sum it per term, report each
finished episode to the monitor. The envs speak the v2 protocol (episodes.protocol.V2) and
every episode keeps its memory (the protocol's view), which the features and the reward read.
"""
from __future__ import annotations

import logging
import os

from agent.checkpointed import CheckpointedAgent
from episodes.protocol import V2
from episodes.runner import EpisodeRunner
from feature.reward_v2 import reward_shaping, step_view

MAX_RESET_FAILURES = 3  # consecutive failed resets of one env before the loop gives up


class _Episode:
    def __init__(self, view):
        self.view = view
        self.reward_sum = 0.0
        self.term_sums: dict[str, float] = {}


class TrainingEpisodes:
    def __init__(self, envs, agent: CheckpointedAgent, settings, observation_process, action_process, logger=None,
                 monitor=None):
        """The envs stepped in lockstep with `agent.predict`; `settings`: the v2 package's (reads
        .reward_v2, .curriculum_v2). Every env starts an episode."""
        self.runner = EpisodeRunner(envs, agent.predict, observation_process, action_process, V2.name,
                                    translate=True)
        self.agent = agent
        self.reward_cfg = settings.reward_v2
        self.usr_conf = settings.curriculum_v2.usr_conf()
        self.logger = logger or logging.getLogger(__name__)
        self.monitor = monitor
        self.episodes: list[_Episode | None] = [None] * len(envs)
        self.finished = 0
        for i in range(len(envs)):
            self.reset(i)

    def step(self):
        return self.runner.step()

    def reset(self, i: int) -> None:
        for _ in range(MAX_RESET_FAILURES):
            try:
                memory = self.runner.reset(i, self.usr_conf)
            except Exception:
                self.logger.exception("env %d: reset failed with usr_conf %s", i, self.usr_conf)
                continue
            if memory is None:
                self.logger.error("env %d: reset returned no observation for usr_conf %s", i, self.usr_conf)
                continue
            self.episodes[i] = _Episode(step_view(memory))
            return
        raise RuntimeError(f"env {i}: reset failed {MAX_RESET_FAILURES} times in a row")

    def failed(self, t) -> None:
        self.logger.error("env %d: step(%d) failed at step %d (%s: %s); episode dropped", t.index, t.action,
                          self.runner.steps(t.index), type(t.error).__name__, t.error)
        self.reset(t.index)

    def reward(self, t) -> float:
        """The shaped reward of transition t (t.obs is the episode's memory after the step)."""
        episode = self.episodes[t.index]
        view = step_view(t.obs, t.terminated, t.truncated)
        reward, terms = reward_shaping(episode.view, view, t.action, self.reward_cfg)
        episode.view = view
        episode.reward_sum += reward
        for name, value in terms.items():
            episode.term_sums[name] = episode.term_sums.get(name, 0.0) + value
        return reward

    def ended(self, i: int) -> None:
        self.finished += 1
        if self.monitor is not None:
            episode = self.episodes[i]
            report = {"reward": episode.reward_sum}
            report.update({f"reward/{name}": value for name, value in episode.term_sums.items()})
            self.monitor.put_data({os.getpid(): report})
        self.reset(i)
