"""Back to the Realm's (2024) PPO Agent (`<algo>/algorithm/agent.py`): agent.ppo_base_agent's
PPOAgent over the 2024 features (feature.back_to_the_realm.ppo_definition's sample rows, feature.back_to_the_realm.layout's input), with
the methods the 2025 (18.0.2) platform's workflows call (agent.workflow_methods). Its settings are
agent.back_to_the_realm.ppo_config's; "unstuck" reads the memory map's centre for the hero's earlier visits.
"""
from __future__ import annotations

from agent.ppo_base_agent import PPOAgent
from agent.back_to_the_realm.ppo_config import Settings, load_settings
from agent.workflow_methods import WorkflowMethods
from feature.back_to_the_realm.ppo_definition import SAMPLE_ROWS, ObsData
from feature.back_to_the_realm.layout import INPUT_SHAPE, earlier_visits
from kaiwu_agent.utils.common_func import attached


@attached
class Agent(WorkflowMethods, PPOAgent):
    sample_rows = SAMPLE_ROWS
    input_shape = INPUT_SHAPE

    def _load_settings(self) -> Settings:
        return load_settings()

    def _earlier_visits(self, obs_data: ObsData) -> int:
        """How often the hero ended a step on its cell before (the memory map's centre)."""
        return earlier_visits(obs_data.map)
