"""Kaiwu's data classes and protocol functions for the v2 PPO package (app = "back_to_the_realm_v2", algo = "ppo"): the PPO
packages' (feature.segments: ActData, segments of up to SEGMENT_FRAMES frames valued on the
learner, the row converters) over the v2 observation (feature.back_to_the_realm_v2.layout, feature.back_to_the_realm_v2.observation).
The classes are made under the platform's names with `create_cls` and the protocol functions
registered with `@attached`, as in any Kaiwu package.
"""
from __future__ import annotations

from feature.segments import CORE_STATE_DIM, SEGMENT_FIELDS, ActData, segment_protocol, segment_rows  # noqa: F401
from feature.back_to_the_realm_v2.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM
from feature.back_to_the_realm_v2.observation import ObsData, action_process, observation_process  # noqa: F401 (the protocol's names)
from kaiwu_agent.utils.common_func import create_cls

#: A segment of one env's episode (feature.segments' SEGMENT_FIELDS), v2 shapes.
SampleData = create_cls("SampleData", **dict.fromkeys(SEGMENT_FIELDS))
SAMPLE_ROWS = segment_rows(MAP_SHAPE, STATE_DIM, NUM_ACTIONS)
SAMPLE_DIM: int = SAMPLE_ROWS.dim

(observation_process, action_process, sample_process, SampleData2NumpyData,
 NumpyData2SampleData) = segment_protocol(SampleData, SAMPLE_ROWS, MAP_SHAPE, STATE_DIM, observation_process,
                                          action_process)
