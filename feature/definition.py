"""Kaiwu's data classes and protocol functions for PPO.

This is `<algo>/feature/definition.py` of a Kaiwu code package: the data classes are made with
the platform's `create_cls` and the protocol functions registered with `@attached`, under the
platform's names (`ObsData`, `ActData`, `SampleData`, `observation_process`, `action_process`,
`sample_process`, `SampleData2NumpyData`, `NumpyData2SampleData`). The observation
(`ObsData`, `observation_process`) is feature.observation's, shared with the DQN package; what
goes into its arrays is declared in `feature.layout`.

Data flow of one step: Observation --observation_process--> ObsData --agent.predict--> ActData
--action_process--> int action --env.step--> reward (feature.reward) --> Frame. A chunk of
Frames --sample_process (GAE)--> SampleData --SampleData2NumpyData--> flat float32 rows that
the replay server and the learner move around.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from feature.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM
from feature.observation import ObsData, action_process, observation_process  # noqa: F401 (the protocol's names)
from feature.rows import RowLayout, protocol_converters
from kaiwu_agent.utils.common_func import Frame, attached, create_cls

#: The policy's answer for one observation: `action` 0..15 (sent to the env), `log_prob`
#: log π(action | obs) under the policy that chose it, `value` the critic's estimate of the
#: return from this obs (in return units).
ActData = create_cls("ActData", action=None, log_prob=None, value=None)

#: One training sample; every number travels as float32 (the action too: 0..15 is exact).
#: `value` is the behaviour policy's estimate (for value clipping), `advantage` the GAE
#: advantage, `ret` the return target = advantage + value.
SampleData = create_cls("SampleData", map=None, state=None, legal=None, action=None, log_prob=None, value=None,
                        advantage=None, ret=None)

# A Frame (the platform's attribute bag) holds one env step until its chunk becomes samples:
# Frame(obs=ObsData, act=ActData, reward=shaped reward after `act`, terminated=the episode
# reached a terminal state after this step, so nothing is bootstrapped past it).

# Flat float32 layout of one SampleData: (field, shape) in order; derived from feature.layout.
SAMPLE_ROWS = RowLayout((
    ("map", MAP_SHAPE),
    ("state", (STATE_DIM,)),
    ("legal", (NUM_ACTIONS,)),
    ("action", ()),
    ("log_prob", ()),
    ("value", ()),
    ("advantage", ()),
    ("ret", ()),
), int_fields=("action",))
SAMPLE_LAYOUT = SAMPLE_ROWS.fields
SAMPLE_SLICES: dict[str, slice] = SAMPLE_ROWS.slices
SAMPLE_DIM: int = SAMPLE_ROWS.dim

# --- protocol functions -----------------------------------------------------------------------------

@attached
def sample_process(list_game_data: Sequence[Frame], bootstrap_value: float = 0.0, gamma: float = 0.99,
                   gae_lambda: float = 0.95) -> list[SampleData]:
    """A chunk of consecutive frames of one env -> samples with GAE advantages and returns
    (the episode loop passes the [ppo] gamma and gae_lambda).

    `bootstrap_value` is V(s') of the observation after the last frame. It is used when the
    chunk was cut mid-episode or the episode was truncated by the step limit (the game would
    have gone on), and ignored when the last frame is `terminated` (no future after the end).
    A terminated frame inside the chunk stops the backup there too. A chunk must not run past a
    truncated episode: flush it at the truncation with that episode's bootstrap value.
    """
    frames = list_game_data
    n = len(frames)
    advantages = np.zeros(n, dtype=np.float64)
    next_value = float(bootstrap_value)
    next_advantage = 0.0
    for t in range(n - 1, -1, -1):
        frame = frames[t]
        not_done = 0.0 if frame.terminated else 1.0
        value = float(frame.act.value)
        delta = float(frame.reward) + gamma * next_value * not_done - value
        next_advantage = delta + gamma * gae_lambda * not_done * next_advantage
        advantages[t] = next_advantage
        next_value = value
    samples = []
    for frame, adv in zip(frames, advantages):
        value = float(frame.act.value)
        samples.append(SampleData(
            map=frame.obs.map,
            state=frame.obs.state,
            legal=frame.obs.legal,
            action=int(frame.act.action),
            log_prob=np.float32(frame.act.log_prob),
            value=np.float32(value),
            advantage=np.float32(adv),
            ret=np.float32(adv + value),
        ))
    return samples


# --- SampleData <-> flat float32 ------------------------------------------------------------------

#: SampleData <-> (SAMPLE_DIM,) float32 rows in SAMPLE_ROWS order (feature.rows).
SampleData2NumpyData, NumpyData2SampleData = (attached(f) for f in protocol_converters(SAMPLE_ROWS, SampleData))
