"""The gorge_chase PPO package's Agent (`agent_<algo>/agent.py`): the PPO Agent (agent.ppo_base_agent:
the ActorCritic, the update on the learner, checkpoints) over gorge_chase's observation
(feature.gorge_chase, the episode's memory feature.gorge_chase.memory), answering the calls the
15.0.1 platform makes on the raw env_obs (`exploit(env_obs)` -> the int action) as every agent of
the 2026 engine does (agent.ppo_view_agent.EnvObsAgent).
"""
from __future__ import annotations

from agent.gorge_chase.ppo_config import load_settings
from agent.ppo_view_agent import EnvObsAgent, GameFeatures
from feature.gorge_chase.ppo_definition import SAMPLE_ROWS
from feature.gorge_chase.layout import MAP_SHAPE, STATE_DIM, earlier_visits
from feature.gorge_chase.observation import GorgeView, action_process, exploit_legal, observation_process
from kaiwu_agent.utils.common_func import attached


@attached
class Agent(EnvObsAgent):
    game = GameFeatures(SAMPLE_ROWS, MAP_SHAPE, STATE_DIM, GorgeView, observation_process, action_process,
                        earlier_visits, lambda settings: settings.features_gorge.view_options(), exploit_legal)
    settings_loader = staticmethod(load_settings)
