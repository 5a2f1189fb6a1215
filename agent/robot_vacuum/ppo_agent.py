"""The robot_vacuum PPO package's Agent (`agent_<algo>/agent.py`): the PPO Agent (agent.ppo_base_agent:
the ActorCritic, the update on the learner, checkpoints) over robot_vacuum's observation
(feature.robot_vacuum), and the calls the 13.0.1 platform makes:

- `reset(env_obs)` before an episode, then `exploit(env_obs)` -> the int action 0..7, as its
  evaluation calls it on the raw env_obs: the agent keeps that episode's memory
  (feature.robot_vacuum.memory) and, with a recurrent core, its state. A list of ObsData (the
  project's own loops, which keep one memory per env) gets the list of ActData.
- `observation_process(env_obs)` -> (ObsData, None) and `action_process(act_data)`, on that
  same per-episode memory (a frame with step_no 0 starts a new one).
"""
from __future__ import annotations

from agent.ppo_base_agent import PPOAgent
from agent.robot_vacuum.ppo_config import load_settings
from agent.ppo_view_agent import GameFeatures, ViewAgent
from feature.robot_vacuum.ppo_definition import SAMPLE_ROWS
from feature.robot_vacuum.layout import MAP_SHAPE, STATE_DIM, earlier_visits
from feature.robot_vacuum.observation import VacuumView, action_process, observation_process
from kaiwu_agent.agent.base_agent import exploit_wrapper
from kaiwu_agent.utils.common_func import attached


@attached
class Agent(ViewAgent):
    game = GameFeatures(SAMPLE_ROWS, MAP_SHAPE, STATE_DIM, VacuumView, observation_process, action_process,
                        earlier_visits, lambda settings: settings.features_vacuum.view_options())
    settings_loader = staticmethod(load_settings)

    def observation_process(self, env_obs, extra_info=None):
        """The 13.0.1 call: (ObsData, None) from the raw env_obs, on the episode's memory."""
        step_no = (env_obs.get("observation") or env_obs).get("step_no", 0)
        return self._observe(step_no == 0, env_obs), None

    @exploit_wrapper
    def exploit(self, observation):
        """The raw env_obs (the platform's evaluation) -> the int action; an ObsData (what the
        evaluation's observation_process made) -> the int action; a list of ObsData -> the list
        of ActData (PPOAgent.exploit)."""
        if isinstance(observation, dict) and "observation" in observation:
            observation, _ = self.observation_process(observation)
        if isinstance(observation, (list, tuple)):
            return PPOAgent.exploit.__wrapped__(self, observation)
        return self.action_process(PPOAgent.exploit.__wrapped__(self, [observation])[0])
