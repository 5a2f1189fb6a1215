"""The v2 PPO package's Agent (`agent_<algo>/agent.py`, back_to_the_realm_v2): the PPO Agent
(agent.ppo_base_agent: the ActorCritic, the update on the learner, checkpoints) over the v2
observation (feature.back_to_the_realm_v2.layout), and the calls the v2 platform's own workflows make:

- `exploit({"obs": obs, "extra_info": extra_info})` -> the int action, as the platform's eval
  workflow calls it (after `reset()` before each episode); the agent keeps that episode's
  memory (feature.back_to_the_realm_v2.memory) and, with a recurrent core, its state; with
  `[ppo] exploit_end_guard` it never reaches the known end while chests are live. A list of ObsData (the
  project's own loops, which keep one memory per env) gets the list of ActData as before.
- `observation_process(obs, extra_info)` -> (ObsData, None) and `action_process(act_data)`, on
  that same per-episode memory.
"""
from __future__ import annotations

from agent.ppo_base_agent import PPOAgent
from agent.back_to_the_realm_v2.ppo_config import load_settings
from agent.ppo_view_agent import GameFeatures, ViewAgent
from feature.back_to_the_realm_v2.ppo_definition import SAMPLE_ROWS
from feature.back_to_the_realm_v2.layout import MAP_SHAPE, STATE_DIM, earlier_visits, end_guard
from feature.back_to_the_realm_v2.observation import V2View, action_process, observation_process
from kaiwu_agent.agent.base_agent import exploit_wrapper
from kaiwu_agent.utils.common_func import attached


@attached
class Agent(ViewAgent):
    game = GameFeatures(SAMPLE_ROWS, MAP_SHAPE, STATE_DIM, V2View, observation_process, action_process, earlier_visits)
    settings_loader = staticmethod(load_settings)

    def observation_process(self, obs, extra_info=None):
        """The v2 platform's call: (ObsData, None) from the raw obs and extra_info, on the
        episode's memory (a frame with step_no 0 starts a new one)."""
        return self._observe(obs["frame_state"].get("step_no", 0) == 0, obs, extra_info), None

    @exploit_wrapper
    def exploit(self, observation):
        """`{"obs", "extra_info"}` (the platform's eval workflow) -> the int action; a list of
        ObsData -> the list of ActData (PPOAgent.exploit)."""
        if isinstance(observation, dict) and "obs" in observation:
            obs_data, _ = self.observation_process(observation["obs"], observation.get("extra_info"))
            if self.ppo_cfg.exploit_end_guard:  # not onto the end while chests are live
                obs_data.legal = end_guard(self._view.memory, obs_data.legal, self.ppo_cfg.exploit_end_guard_patience)
            return self.action_process(PPOAgent.exploit.__wrapped__(self, [obs_data])[0])
        return PPOAgent.exploit.__wrapped__(self, observation)
