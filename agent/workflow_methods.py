"""observation_process and action_process as methods of the Agent, where the 2025 (18.0.2)
platform's workflows call them: `agent.observation_process(obs, preprocessor, state)` and
`agent.action_process(act_data)` (its eval and exam workflows are the platform's, not the
package's, so an exported agent must answer them). The project's own loops call the module
functions (feature.observation) on the 2024 shapes; these methods are the same functions
behind the 2025 call: the preprocessor (feature.observation18.Preprocessor, one per episode)
turns the 2025 observation into the 2024 one first.
"""
from __future__ import annotations

from feature.observation import ObsData, action_process, observation_process


class WorkflowMethods:
    """Mixed into the project's Agents beside their five decorated methods."""

    def observation_process(self, raw_obs, preprocessor, state=None) -> tuple[ObsData, tuple]:
        """A 2025 observation (+ the episode's Preprocessor; the empty State is unused) ->
        (ObsData, (Observation, EnvInfo) of the 2024 protocol, as a workflow's `remain_info`)."""
        obs, env_info = preprocessor.process(raw_obs)
        return observation_process(obs, env_info), (obs, env_info)

    def action_process(self, act_data) -> int:
        """ActData -> the int action env.step takes."""
        return action_process(act_data)
