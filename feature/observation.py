"""What both of the project's packages share of the protocol: the observation (`ObsData`,
`observation_process`) and `action_process` (an ActData's `action` is the env's action); each
algorithm's definition.py re-exports them under the platform's names. What goes into the
arrays is declared in feature.layout; this module only fills them.
"""
from __future__ import annotations

import numpy as np

from feature.layout import MAP_LAYOUT, MAP_SHAPE, STATE_DIM, STATE_LAYOUT, STATE_SLICES, legal_mask
from kaiwu_agent.utils.common_func import attached, create_cls

#: What the network sees at one step: `map` MAP_SHAPE float32 (obstacle, memory, treasure, end
#: windows), `state` (STATE_DIM,) float32 (blocks named in layout.STATE_LAYOUT), `legal`
#: (NUM_ACTIONS,) float32, 1 = action allowed. `core_state`: a recurrent policy's state before
#: this step, as its previous answer in the same episode handed it out (None: the episode's
#: first step, or a policy without memory; episodes.runner carries it, agent.core says why).
ObsData = create_cls("ObsData", map=None, state=None, legal=None, core_state=None)


@attached
def observation_process(raw_obs, env_info=None) -> ObsData:
    """The env's observation (+ env_info, None after a reset) -> ObsData, following the tables
    in feature.layout."""
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


@attached
def action_process(act_data) -> int:
    """ActData -> the int action env.step takes."""
    return int(act_data.action)
