"""Kaiwu's data classes and protocol functions for the v2 PPO package (`ppo_v2`): the PPO
package's (feature.definition: ActData, segments of up to SEGMENT_FRAMES frames valued on the
learner, the row converters) over the v2 observation (feature.layout_v2, feature.observation_v2).
The classes are made under the platform's names with `create_cls` and the protocol functions
registered with `@attached`, as in any Kaiwu package.
"""
from __future__ import annotations

from typing import Sequence

from feature.definition import CORE_STATE_DIM, SEGMENT_FIELDS, ActData, segment_rows, segment_samples  # noqa: F401
from feature.layout_v2 import MAP_SHAPE, NUM_ACTIONS, STATE_DIM
from feature.observation_v2 import ObsData, action_process, observation_process  # noqa: F401 (the protocol's names)
from feature.rows import protocol_converters
from kaiwu_agent.utils.common_func import Frame, attached, create_cls

#: A segment of one env's episode (fields as feature.definition's SampleData), v2 shapes.
SampleData = create_cls("SampleData", **dict.fromkeys(SEGMENT_FIELDS))
SAMPLE_ROWS = segment_rows(MAP_SHAPE, STATE_DIM, NUM_ACTIONS)
SAMPLE_DIM: int = SAMPLE_ROWS.dim

observation_process = attached(observation_process)
action_process = attached(action_process)


@attached
def sample_process(list_game_data: Sequence[Frame], next_obs: ObsData, burn_in: int = 0) -> list:
    """Consecutive frames of one env's episode and the observation after the last one -> [one
    SampleData segment] (feature.definition.sample_process's rules)."""
    return segment_samples(list_game_data, next_obs, burn_in, SampleData, MAP_SHAPE, STATE_DIM)


SampleData2NumpyData, NumpyData2SampleData = (attached(f) for f in protocol_converters(SAMPLE_ROWS, SampleData))
