"""The 2024 game's observation as both of its packages (PPO, DQN) read it: `observation_process`
fills feature.segments' `ObsData`; `action_process` (an ActData's `action` is the env's action) is
feature.segments'. Each algorithm's definition.py re-exports them under the platform's names.
What goes into the arrays is declared in feature.back_to_the_realm.layout; this module only fills them.
"""
from __future__ import annotations

import numpy as np

from feature.back_to_the_realm.layout import MAP_LAYOUT, MAP_SHAPE, STATE_DIM, STATE_LAYOUT, STATE_SLICES, legal_mask
from feature.segments import ObsData, action_process  # noqa: F401 (the protocol's names)
from kaiwu_agent.utils.common_func import attached

@attached
def observation_process(raw_obs, env_info=None) -> ObsData:
    """The env's observation (+ env_info, None after a reset) -> ObsData, following the tables
    in feature.back_to_the_realm.layout."""
    obs = raw_obs
    f = obs.feature
    map_tensor = np.empty(MAP_SHAPE, dtype=np.float32)
    for i, channel in enumerate(MAP_LAYOUT):
        map_tensor[i] = channel.fill(f, env_info)
    state = np.empty(STATE_DIM, dtype=np.float32)
    for block in STATE_LAYOUT:
        values = np.asarray(block.fill(f, env_info), dtype=np.float32).reshape(-1)
        if values.size != block.size:
            raise ValueError(f"state block {block.name!r} filled {values.size} numbers, declared {block.size}")
        state[STATE_SLICES[block.name]] = values
    return ObsData(map=map_tensor, state=state, legal=legal_mask(obs.legal_act))
