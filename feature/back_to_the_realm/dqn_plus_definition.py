"""Kaiwu's data classes and protocol functions for the DQN package (`dqn_plus`).

The observation is the PPO package's (`ObsData`, `observation_process` from
feature.back_to_the_realm.observation), so both algorithms see the same features and, through feature.back_to_the_realm.reward, the
same shaped reward. What differs is the sample: one n-step transition

    (s_t, a_t, R = sum_{k<m} gamma^k r_{t+k}, discount, s_{t+m})

with m = n_step, or fewer where the episode's frames run out. `discount` is what multiplies
the bootstrap value of s_{t+m}: gamma^m when the episode goes on after the window (a chunk
boundary, or the step limit truncated it: the game would have continued), 0 when it
terminated inside the window. The next observation travels in the row, as the platform's own
DQN samples carry theirs.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from feature.back_to_the_realm.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM
from feature.back_to_the_realm.observation import ObsData, action_process, observation_process
from feature.rows import RowLayout, protocol_converters
from kaiwu_agent.utils.common_func import Frame, attached, create_cls

__all__ = ["ObsData", "ActData", "SampleData", "observation_process", "action_process", "sample_process",
           "SampleData2NumpyData", "NumpyData2SampleData", "SAMPLE_ROWS", "SAMPLE_DIM", "Frame"]

#: The agent's answer: `action` 0..15, `q` the online network's value of that action (random or greedy).
ActData = create_cls("ActData", action=None, q=None)

#: One n-step transition (see the module docstring); every number travels as float32.
SampleData = create_cls("SampleData", map=None, state=None, legal=None, action=None, ret=None, discount=None,
                        next_map=None, next_state=None, next_legal=None)

# A Frame holds one env step: Frame(obs=ObsData before the action, act=ActData, reward=shaped
# reward, next_obs=ObsData after it, terminated=the episode reached a terminal state).

SAMPLE_ROWS = RowLayout((
    ("map", MAP_SHAPE),
    ("state", (STATE_DIM,)),
    ("legal", (NUM_ACTIONS,)),
    ("action", ()),
    ("ret", ()),
    ("discount", ()),
    ("next_map", MAP_SHAPE),
    ("next_state", (STATE_DIM,)),
    ("next_legal", (NUM_ACTIONS,)),
), int_fields=("action",))
SAMPLE_DIM: int = SAMPLE_ROWS.dim


@attached
def sample_process(list_game_data: Sequence[Frame], n_step: int = 3, gamma: float = 0.99,
                   final: bool = True) -> list[SampleData]:
    """Consecutive frames of one env -> n-step samples (the episode loop passes [dqn] n_step, gamma).

    final=True: the frames end here (the episode terminated or was truncated): every frame
    becomes a sample, its window cut at the last frame. final=False: the episode goes on, so
    only the frames with a full window of n_step frames become samples (len - n_step + 1 of
    them); the caller keeps the last n_step - 1 frames and passes them again with the next ones.
    A terminated frame may only be the last one.
    """
    frames = list(list_game_data)
    for frame in frames[:-1]:
        if frame.terminated:
            raise ValueError("sample_process: a terminated frame must be the last of its chunk")
    count = len(frames) if final else max(0, len(frames) - n_step + 1)
    samples = []
    for t in range(count):
        window = frames[t:t + n_step]
        ret = sum(gamma ** k * float(frame.reward) for k, frame in enumerate(window))
        last = window[-1]
        discount = 0.0 if last.terminated else gamma ** len(window)
        samples.append(SampleData(
            map=frames[t].obs.map, state=frames[t].obs.state, legal=frames[t].obs.legal,
            action=int(frames[t].act.action), ret=np.float32(ret), discount=np.float32(discount),
            next_map=last.next_obs.map, next_state=last.next_obs.state, next_legal=last.next_obs.legal,
        ))
    return samples


#: SampleData <-> (SAMPLE_DIM,) float32 rows in SAMPLE_ROWS order (feature.rows).
SampleData2NumpyData, NumpyData2SampleData = (attached(f) for f in protocol_converters(SAMPLE_ROWS, SampleData))
