"""Kaiwu's data classes and protocol functions for the gorge_chase PPO package (app = "gorge_chase", algo = "ppo"):
the PPO packages' (feature.segments: ActData, segments of up to SEGMENT_FRAMES frames valued on
the learner, the row converters) over gorge_chase's observation (feature.gorge_chase.layout,
.observation). The classes are made under the platform's names with `create_cls` and the
protocol functions registered with `@attached`, as in any Kaiwu package.
"""
from __future__ import annotations

from feature.segments import (CORE_STATE_DIM, SEGMENT_FIELDS, ActData,  # noqa: F401
                              packed_segment_sample, segment_protocol)
from feature.gorge_chase.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM
from feature.gorge_chase.observation import ObsData, action_process, observation_process  # noqa: F401

#: A segment of one env's episode (feature.segments' SEGMENT_FIELDS), gorge_chase's shapes, its
#: SampleData declaring each field's width as the platform's create_cls does.
SampleData, SAMPLE_ROWS = packed_segment_sample(MAP_SHAPE, STATE_DIM, NUM_ACTIONS)
SAMPLE_DIM: int = SAMPLE_ROWS.dim

(observation_process, action_process, sample_process, SampleData2NumpyData,
 NumpyData2SampleData) = segment_protocol(SampleData, SAMPLE_ROWS, MAP_SHAPE, STATE_DIM, observation_process,
                                          action_process)
