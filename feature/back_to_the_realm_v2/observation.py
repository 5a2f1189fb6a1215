"""The v2 observation as the network sees it: `observation_process(memory, extra_info)` fills
ObsData (feature.segments' class: map, state, legal, core_state) from the episode's
`V2Memory` (feature.back_to_the_realm_v2.memory) following the tables of feature.back_to_the_realm_v2.layout. The episode loops
keep one memory per env and episode (episodes.protocol's v2 view); an Agent acting on the raw
`{"obs", "extra_info"}` keeps its own (agent.back_to_the_realm_v2.ppo_agent).
"""
from __future__ import annotations

from feature.back_to_the_realm_v2.layout import MAP_LAYOUT, MAP_SHAPE, STATE_DIM, STATE_LAYOUT, STATE_SLICES, legal_mask
from feature.back_to_the_realm_v2.memory import V2Memory
from feature.segments import ObsData, action_process  # noqa: F401 (the protocol's names)
from feature.tables import fill_tables


def observation_process(memory: V2Memory, extra_info=None) -> ObsData:
    """The episode's memory after a step (or the reset) -> ObsData."""
    map_tensor, state = fill_tables(memory, MAP_LAYOUT, MAP_SHAPE, STATE_LAYOUT, STATE_SLICES, STATE_DIM)
    return ObsData(map=map_tensor, state=state, legal=legal_mask(memory))


class V2View:
    """An episode's memory as the episode loop hands observations on (episodes.protocol's v2
    view): `reset` / `step` take the env's (obs, extra_info) and return (memory, extra_info)."""

    def __init__(self):
        self.memory = V2Memory()

    def reset(self, obs, extra_info=None):
        self.memory = V2Memory().update(obs, extra_info)
        return self.memory, extra_info

    def step(self, obs, extra_info=None):
        return self.memory.update(obs, extra_info), extra_info
