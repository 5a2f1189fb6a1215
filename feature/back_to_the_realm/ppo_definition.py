"""Kaiwu's data classes and protocol functions for PPO on Back to the Realm (2024).

This is `<algo>/feature/definition.py` of a Kaiwu code package: the data classes are made with
the platform's `create_cls` and the protocol functions registered with `@attached`, under the
platform's names (`ObsData`, `ActData`, `SampleData`, `observation_process`, `action_process`,
`sample_process`, `SampleData2NumpyData`, `NumpyData2SampleData`). The observation
(`ObsData`, `observation_process`) is feature.back_to_the_realm.observation's, shared with the DQN package; what
goes into its arrays is declared in `feature.back_to_the_realm.layout`. The segments are feature.segments', as
every game's PPO package has them.

Data flow: Observation --observation_process--> ObsData --agent.predict--> ActData
--action_process--> int action --env.step--> reward (feature.back_to_the_realm.reward) --> Frame. Up to
`[ppo] num_steps` consecutive Frames of one episode and the observation after the last one
--sample_process--> one SampleData, a trajectory segment --SampleData2NumpyData--> one flat
float32 row that the replay server and the learner move around. The aisrv computes nothing
for training beyond the behaviour log-probability: the learner values every frame and the
bootstrap observation with its current critic and computes GAE there (agent.gae, Agent.learn),
so the advantages are as fresh as the weights they train.
"""
from __future__ import annotations

from typing import Sequence

from feature.back_to_the_realm.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM
from feature.back_to_the_realm.observation import ObsData, action_process, observation_process  # noqa: F401 (the protocol's names)
from feature.rows import protocol_converters
from feature.segments import (CORE_STATE_DIM, SEGMENT_FIELDS, SEGMENT_FRAMES, ActData,  # noqa: F401 (the protocol's names)
                              segment_rows, segment_samples)
from kaiwu_agent.utils.common_func import Frame, attached, create_cls

SampleData = create_cls("SampleData", **dict.fromkeys(SEGMENT_FIELDS))

# Flat float32 layout of one SampleData: (field, shape) in order; derived from feature.back_to_the_realm.layout.
SAMPLE_ROWS = segment_rows(MAP_SHAPE, STATE_DIM, NUM_ACTIONS)
SAMPLE_LAYOUT = SAMPLE_ROWS.fields
SAMPLE_SLICES: dict[str, slice] = SAMPLE_ROWS.slices
SAMPLE_DIM: int = SAMPLE_ROWS.dim

# --- protocol functions -----------------------------------------------------------------------------

@attached
def sample_process(list_game_data: Sequence[Frame], next_obs: ObsData, burn_in: int = 0) -> list[SampleData]:
    """Consecutive frames of one env's episode and the observation after the last one -> [one
    SampleData segment] of the 2024 sizes (feature.segments.segment_samples' rules)."""
    return segment_samples(list_game_data, next_obs, burn_in, SampleData, MAP_SHAPE, STATE_DIM, NUM_ACTIONS)


# --- SampleData <-> flat float32 ------------------------------------------------------------------

#: SampleData <-> (SAMPLE_DIM,) float32 rows in SAMPLE_ROWS order (feature.rows).
SampleData2NumpyData, NumpyData2SampleData = (attached(f) for f in protocol_converters(SAMPLE_ROWS, SampleData))
