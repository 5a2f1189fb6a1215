"""Kaiwu's data classes and protocol functions for the robot_vacuum PPO package (app = "robot_vacuum", algo = "ppo"):
the PPO packages' (feature.segments: ActData, segments of up to SEGMENT_FRAMES frames valued on
the learner, the row converters) over robot_vacuum's observation (feature.robot_vacuum.layout,
.observation). The model keeps the PPO packages' 16 actions; the legal mask allows only the
moves 0..7 and action_process refuses the rest. The classes are made under the platform's
names with `create_cls` and the protocol functions registered with `@attached`, as in any
Kaiwu package.
"""
from __future__ import annotations

from feature.segments import (CORE_STATE_DIM, NUM_ACTIONS, SEGMENT_FIELDS, ActData,  # noqa: F401
                              packed_segment_sample, segment_protocol)
from feature.robot_vacuum.layout import MAP_SHAPE, STATE_DIM
from feature.robot_vacuum.observation import ObsData, action_process, observation_process  # noqa: F401


#: A segment of one env's episode (feature.segments' SEGMENT_FIELDS), robot_vacuum's shapes, its
#: SampleData declaring each field's width as the platform's create_cls does.
SampleData, SAMPLE_ROWS = packed_segment_sample(MAP_SHAPE, STATE_DIM, NUM_ACTIONS)
SAMPLE_DIM: int = SAMPLE_ROWS.dim

(observation_process, action_process, sample_process, SampleData2NumpyData,
 NumpyData2SampleData) = segment_protocol(SampleData, SAMPLE_ROWS, MAP_SHAPE, STATE_DIM, observation_process,
                                          action_process)
