"""The robot_vacuum PPO package's Agent (`agent_<algo>/agent.py`): the PPO Agent (agent.ppo_base_agent:
the ActorCritic, the update on the learner, checkpoints) over robot_vacuum's observation
(feature.robot_vacuum, the episode's memory feature.robot_vacuum.memory), answering the calls the
13.0.1 platform makes on the raw env_obs (`exploit(env_obs)` -> the int action 0..7 (moves only)) as every agent of
the 2026 engine does (agent.ppo_view_agent.EnvObsAgent).
"""
from __future__ import annotations

from agent.robot_vacuum.ppo_config import load_settings
from agent.ppo_view_agent import EnvObsAgent, GameFeatures
from feature.robot_vacuum.ppo_definition import SAMPLE_ROWS
from feature.robot_vacuum.layout import MAP_SHAPE, STATE_DIM, earlier_visits
from feature.robot_vacuum.observation import VacuumView, action_process, observation_process
from kaiwu_agent.utils.common_func import attached


@attached
class Agent(EnvObsAgent):
    game = GameFeatures(SAMPLE_ROWS, MAP_SHAPE, STATE_DIM, VacuumView, observation_process, action_process,
                        earlier_visits, lambda settings: settings.features_vacuum.view_options())
    settings_loader = staticmethod(load_settings)
