"""observation_process and action_process as methods of the Agent, where the 2025 (18.0.2)
platform's workflows call them: `agent.observation_process(obs, preprocessor, state)` and
`agent.action_process(act_data)` (its eval and exam workflows are the platform's, not the
package's, so an exported agent must answer them). The project's own loops call the module
functions (feature.back_to_the_realm.observation) on the 2024 shapes; these methods are the same functions
behind the 2025 call: the preprocessor (feature.back_to_the_realm.observation18.Preprocessor, one per episode)
turns the 2025 observation into the 2024 one first.

A recurrent policy (agent.core) keeps its state on that per-episode preprocessor: the
observation carries the preprocessor's state in, `action_process` stores the answer's state on
the preprocessor of the observation it answered (these workflows play one env per agent), so a
new episode, a new Preprocessor, starts from the initial state.
"""
from __future__ import annotations

from feature.back_to_the_realm.observation import ObsData, action_process, observation_process


class WorkflowMethods:
    """Mixed into the project's Agents beside their five decorated methods."""

    def observation_process(self, raw_obs, preprocessor, state=None) -> tuple[ObsData, tuple]:
        """A 2025 observation (+ the episode's Preprocessor; the empty State is unused) ->
        (ObsData, (Observation, EnvInfo) of the 2024 protocol, as a workflow's `remain_info`)."""
        obs, env_info = preprocessor.process(raw_obs)
        obs_data = observation_process(obs, env_info)
        obs_data.core_state = getattr(preprocessor, "core_state", None)
        self._episode = preprocessor
        return obs_data, (obs, env_info)

    def action_process(self, act_data) -> int:
        """ActData -> the int action env.step takes (its recurrent state kept for the episode's next step)."""
        episode = getattr(self, "_episode", None)
        if episode is not None and getattr(act_data, "core_state", None) is not None:
            episode.core_state = act_data.core_state
        return action_process(act_data)
