"""The PPO Agent for a game whose platform hands the package its raw observations (v2's
`{"obs", "extra_info"}`, the 2026 engine's env_obs): `observation_process` and `exploit` work on
the episode's memory, a view of the game (its `reset` / `step` return (memory, extra)), which the
agent keeps between calls with, for a recurrent core, its state. A game's agent names its view,
its features and its action mapping, and how its platform marks an episode's first frame (the
2026 engine's games: EnvObsAgent).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from agent.ppo_base_agent import PPOAgent
from kaiwu_agent.agent.base_agent import exploit_wrapper


@dataclass(frozen=True)
class GameFeatures:
    """What a game's feature package gives the view agent."""

    sample_rows: object  # its feature.back_to_the_realm.ppo_definition.SampleRows
    map_shape: tuple  # (channels, height, width) of its map channels
    state_dim: int
    view_class: type  # its episode view: reset / step -> (memory, extra)
    features: Callable  # (memory, extra) -> ObsData
    to_action: Callable  # ActData -> the int action
    visits_before: Callable  # an ObsData's state -> the visits of the hero's cell before this step
    view_options: Callable = lambda settings: {}  # the package's settings -> view_class's keyword arguments
    #: (memory, legal mask, the package's settings) -> the mask exploit acts within (a search in the
    #: act, which the platform runs as the package's code); None: the features' mask
    exploit_legal: Callable | None = None


class ViewAgent(PPOAgent):
    game: GameFeatures  # set by each game's agent
    settings_loader = None  # staticmethod: () -> the package's Settings

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "game" in cls.__dict__:  # the PPO agent's own sizes, from the game's features
            cls.sample_rows = cls.game.sample_rows
            cls.input_shape = (cls.game.map_shape[0], cls.game.map_shape[1], cls.game.state_dim)

    def __init__(self, agent_type="player", device=None, logger=None, monitor=None, *, settings=None,
                 seed: int | None = None):
        super().__init__(agent_type, device, logger, monitor, settings=settings, seed=seed)
        self._view = None  # the episode exploit / observation_process are handed
        self._memory = None  # its memory after the latest observation
        self._core_state = None

    def _load_settings(self):
        return self.settings_loader()

    def _earlier_visits(self, obs_data) -> int:
        return self.game.visits_before(obs_data.state)

    def reset(self, *args) -> None:
        """A new episode for exploit / observation_process (the platform's workflows call it)."""
        self._view = None
        self._core_state = None

    def _observe(self, first: bool, *raw):
        """ObsData of the raw observation on the episode's memory (`first`: a new episode)."""
        if self._view is None or first:
            self._view = self.game.view_class(**self.game.view_options(self.settings))
            memory, extra = self._view.reset(*raw)
            self._core_state = None
        else:
            memory, extra = self._view.step(*raw)
        self._memory = memory
        obs_data = self.game.features(memory, extra)
        obs_data.core_state = self._core_state
        return obs_data

    def action_process(self, act_data) -> int:
        self._core_state = getattr(act_data, "core_state", None)
        return self.game.to_action(act_data)


class EnvObsAgent(ViewAgent):
    """The calls the 2026 engine's platforms (gorge_chase 15.0.1, robot_vacuum 13.0.1) make:

    - `reset(env_obs)` before an episode, then `exploit(env_obs)` -> the int action, as their
      evaluation calls it on the raw env_obs: the agent keeps that episode's memory and, with a
      recurrent core, its state. A list of ObsData (the project's own loops, which keep one
      memory per env) gets the list of ActData.
    - `observation_process(env_obs)` -> (ObsData, None) and `action_process(act_data)`, on that
      same per-episode memory (a frame with step_no 0 starts a new one).
    """

    def observation_process(self, env_obs, extra_info=None):
        """The platform's call: (ObsData, None) from the raw env_obs, on the episode's memory."""
        step_no = (env_obs.get("observation") or env_obs).get("step_no", 0)
        return self._observe(step_no == 0, env_obs), None

    @exploit_wrapper
    def exploit(self, observation):
        """The raw env_obs (the platform's evaluation) -> the int action, within the game's
        `exploit_legal` mask where it has one; an ObsData (what the
        evaluation's observation_process made) -> the int action; a list of ObsData -> the list
        of ActData (PPOAgent.exploit)."""
        if isinstance(observation, dict) and "observation" in observation:
            observation, _ = self.observation_process(observation)
            if self.game.exploit_legal is not None:  # this episode's memory is the agent's own
                observation.legal = self.game.exploit_legal(self._memory, observation.legal, self.settings)
        if isinstance(observation, (list, tuple)):
            return PPOAgent.exploit.__wrapped__(self, observation)
        return self.action_process(PPOAgent.exploit.__wrapped__(self, [observation])[0])
