"""What every training workflow of the project does around an episode, whatever the algorithm
and the game: start episodes with the game's settings (a failed reset is retried), shape each
step's reward and sum it per term, report each finished episode to the monitor.

The game's content is a `GameEpisodes` (episodes.back_to_the_realm.episodes for Back to the Realm,
episodes.back_to_the_realm_v2.episodes for back_to_the_realm_v2): which usr_conf starts an episode, what the
reward reads of an observation (its view), the reward terms, what a report adds. The
algorithm's workflow (episodes.ppo_loop, episodes.back_to_the_realm.dqn_plus_workflow) turns the frames into samples;
this module knows nothing of samples.
"""
from __future__ import annotations

import logging
import os
from typing import Callable, Protocol

from agent.checkpointed import CheckpointedAgent
from episodes.runner import EpisodeRunner

MAX_RESET_FAILURES = 3  # consecutive failed resets of one env before the loop gives up


class GameEpisodes(Protocol):
    """A game's part of the training episodes."""

    kaiwu_version: str | None  # the protocol the envs speak (episodes.runner; None: the package's own)
    obs_view: type | None  # reads a translating protocol's episodes for the features (episodes.runner)
    env_usr_conf: Callable | None  # usr_conf() as a translating protocol's reset takes it (None: as it is)

    def usr_conf(self, finished: int, samples_learned: int) -> dict:
        """The next episode's settings, for the workflow's finished episodes and the run's progress."""

    def view(self, obs, t=None):
        """What the reward reads of the reset's observation (t None) or of transition t."""

    def shape(self, before, after, action: int) -> tuple[float, dict[str, float]]:
        """The shaped reward of a step from view `before` to `after`, and its terms."""

    def report(self, usr_conf: dict) -> dict[str, float]:
        """What a finished episode's report adds (beside its reward and terms)."""


class _Episode:
    """The running episode of one env: its settings, last view and reward sums."""

    def __init__(self, usr_conf: dict, view):
        self.usr_conf = usr_conf
        self.view = view
        self.reward_sum = 0.0
        self.term_sums: dict[str, float] = {}


class TrainingEpisodes:
    def __init__(self, envs, agent: CheckpointedAgent, game: GameEpisodes, observation_process, action_process,
                 logger=None, monitor=None):
        """The envs stepped in lockstep with `agent.predict` (`self.runner`, episodes.runner, which
        serves every protocol and hands on a 2025 env's observations in the 2024 shapes the 2024
        features read); the agent's `samples_learned` (the run's, brought by every model it loads)
        moves the game's settings (a curriculum's stages). Every env starts an episode."""
        self.runner = EpisodeRunner(envs, agent.predict, observation_process, action_process, game.kaiwu_version,
                                    translate=True, view=game.obs_view, usr_conf_of=game.env_usr_conf)
        self.agent = agent
        self.game = game
        self.logger = logger or logging.getLogger(__name__)
        self.monitor = monitor
        self.episodes: list[_Episode | None] = [None] * len(envs)
        self.finished = 0
        for i in range(len(envs)):
            self.reset(i)

    def step(self):
        """One batched action on every env: the transitions (episodes.runner.Transition)."""
        return self.runner.step()

    def reset(self, i: int) -> None:
        """Start a new episode on env i with the game's settings for the run's progress."""
        for _ in range(MAX_RESET_FAILURES):
            usr_conf = self.game.usr_conf(self.finished, self.agent.samples_learned)
            try:
                obs = self.runner.reset(i, usr_conf)
            except Exception:
                self.logger.exception("env %d: reset failed with usr_conf %s", i, usr_conf)
                continue
            if obs is None:  # the platform answers an invalid usr_conf with None after a timeout
                self.logger.error("env %d: reset returned no observation for usr_conf %s", i, usr_conf)
                continue
            self.episodes[i] = _Episode(usr_conf, self.game.view(obs))
            return
        raise RuntimeError(f"env {i}: reset failed {MAX_RESET_FAILURES} times in a row")

    def failed(self, t) -> None:
        """env.step raised: the episode is dropped and the env starts a new one."""
        self.logger.error("env %d: step(%d) failed at step %d (%s: %s); episode dropped", t.index, t.action,
                          self.runner.steps(t.index), type(t.error).__name__, t.error)
        self.reset(t.index)

    def reward(self, t) -> float:
        """The shaped reward of transition t (its terms summed into the episode's report)."""
        episode = self.episodes[t.index]
        view = self.game.view(t.obs, t)
        reward, terms = self.game.shape(episode.view, view, t.action)
        episode.view = view
        episode.reward_sum += reward
        for name, value in terms.items():
            episode.term_sums[name] = episode.term_sums.get(name, 0.0) + value
        return reward

    def ended(self, i: int) -> None:
        """Env i's episode is over: report it, start the next."""
        self.finished += 1
        if self.monitor is not None:
            episode = self.episodes[i]
            report = {"reward": episode.reward_sum, **self.game.report(episode.usr_conf)}
            report.update({f"reward/{name}": value for name, value in episode.term_sums.items()})
            self.monitor.put_data({os.getpid(): report})
        self.reset(i)


class SettingsEpisodes:
    """A game's episodes with its train_env_conf keys' usr_conf (`usr_conf()`: the same for the
    run, or drawn per episode), the reward read from step views that keep the episode's memory
    (`step_view(obs)` at the reset, `step_view(obs, terminated, truncated)` after a step): the
    v2, gorge_chase and robot_vacuum packages'."""

    def __init__(self, kaiwu_version: str, obs_view: type, usr_conf: Callable[[], dict], reward_cfg, step_view,
                 reward_shaping, report=lambda usr_conf: {}):
        self.kaiwu_version, self.obs_view, self.env_usr_conf = kaiwu_version, obs_view, None
        self._usr_conf, self.reward_cfg = usr_conf, reward_cfg
        self._step_view, self._reward_shaping, self._report = step_view, reward_shaping, report

    def usr_conf(self, finished: int, samples_learned: int) -> dict:
        return self._usr_conf()

    def view(self, obs, t=None):
        return self._step_view(obs) if t is None else self._step_view(t.obs, t.terminated, t.truncated)

    def shape(self, before, after, action: int) -> tuple[float, dict[str, float]]:
        return self._reward_shaping(before, after, action, self.reward_cfg)

    def report(self, usr_conf: dict) -> dict[str, float]:
        return self._report(usr_conf)
