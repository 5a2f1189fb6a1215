"""Kaiwu's data classes and protocol functions for the gorge_chase PPO package (app = "gorge_chase", algo = "ppo"):
the PPO packages' (feature.segments: ActData, segments of up to SEGMENT_FRAMES frames valued on
the learner, the row converters) over gorge_chase's observation (feature.gorge_chase.layout,
.observation). The classes are made under the platform's names with `create_cls` and the
protocol functions registered with `@attached`, as in any Kaiwu package.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from feature.segments import CORE_STATE_DIM, SEGMENT_FIELDS, ActData, segment_protocol, segment_rows  # noqa: F401
from feature.gorge_chase.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM
from feature.gorge_chase.observation import ObsData, action_process, observation_process  # noqa: F401
from feature.rows import RowLayout
from kaiwu_agent.utils.common_func import create_cls



class SegmentRows(RowLayout):
    """The segment layout whose `stack` also takes samples as the 15.0.1 framework rebuilds them
    from its rows: each field flat (its declared width), maybe a torch tensor."""

    def stack(self, samples: Sequence) -> dict[str, np.ndarray]:
        def array(value, shape):
            detach = getattr(value, "detach", None)
            value = detach().cpu().numpy() if callable(detach) else value
            return np.asarray(value, dtype=np.float32).reshape(shape)

        return {name: np.stack([array(getattr(s, name), shape) for s in samples]) for name, shape in self.fields}


_ROWS = segment_rows(MAP_SHAPE, STATE_DIM, NUM_ACTIONS)
SAMPLE_ROWS = SegmentRows(_ROWS.fields, int_fields=("action", "burn_in"))
SAMPLE_DIM: int = SAMPLE_ROWS.dim
#: A segment of one env's episode (feature.segments' SEGMENT_FIELDS), gorge_chase's
#: shapes; FIELD_DIMS declares each field's width as 15.0.1's create_cls does, so the
#: platform's framework packs a segment into the same row as SampleData2NumpyData below.
SampleData = create_cls("SampleData", **dict.fromkeys(SEGMENT_FIELDS))
SampleData.FIELD_DIMS = {name: int(np.prod(shape, dtype=np.int64)) for name, shape in SAMPLE_ROWS.fields}

(observation_process, action_process, sample_process, SampleData2NumpyData,
 NumpyData2SampleData) = segment_protocol(SampleData, SAMPLE_ROWS, MAP_SHAPE, STATE_DIM, observation_process,
                                          action_process)
