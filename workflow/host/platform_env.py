"""The env a package's workflow steps, in an aisrv or in local mode: the simulator, counted (env
steps, episodes, an episode report with the game's own score to `telemetry.send`) and stoppable
(a stop request raises `Stopped` at the next reset or step). Nothing here needs a replay server."""
from __future__ import annotations

from dataclasses import dataclass

from episodes.runner import EpisodeStats, env_protocol
from workflow import platforms
from workflow.transport.stopped import Stopped


@dataclass
class LoopStats:
    """What this process's envs did (an aisrv reports it to the learner as counter deltas)."""

    episodes: int = 0  # finished (won or lost)
    env_steps: int = 0
    env_errors: int = 0  # exceptions raised by env.reset / env.step, and the errors they answered with


class PlatformEnv:
    """The env a package's workflow sees: `reset(usr_conf)` and `step(act)`, nothing more.
    A stop request raises `Stopped` (a BaseException: the workflow's own error handling lets it
    through) at the next reset or step. An error the env answers as the platform does (an error
    env_obs, kept in the env's `answered_error`) counts as an env error, not as a step or an episode."""

    def __init__(self, env, stats: LoopStats, telemetry, should_stop, platform=None):
        self._env = env
        self._stats = stats
        self._telemetry = telemetry
        self._should_stop = should_stop
        # the env's wire protocol (episodes.protocol), as the platform version names it: reads each step's outcome
        self._protocol = env_protocol(env, (platform or platforms.PROJECT).env_protocol)
        self._steps = 0

    def reset(self, usr_conf=None):
        if self._should_stop():
            raise Stopped()
        try:
            obs = self._env.reset(usr_conf=usr_conf)
        except Exception:
            self._stats.env_errors += 1
            raise
        if getattr(self._env, "answered_error", None) is not None:
            self._stats.env_errors += 1
            return obs
        self._steps = 0
        return obs

    def step(self, act):
        if self._should_stop():
            raise Stopped()
        try:
            result = self._env.step(act)
        except Exception:
            self._stats.env_errors += 1
            raise
        if getattr(self._env, "answered_error", None) is not None:
            self._stats.env_errors += 1
            return result
        self._steps += 1
        self._stats.env_steps += 1
        outcome = self._protocol.step(result)
        if outcome.ended:
            self._stats.episodes += 1
            self._telemetry.send("episode", EpisodeStats.from_outcome(outcome, self._steps).report())
        return result
