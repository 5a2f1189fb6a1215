"""The PPO packages' samples, whatever the game: the observation and answer (`ObsData`,
`ActData`), a trajectory segment of up to SEGMENT_FRAMES frames as one replay row (its fields,
`segment_rows` for a game's sizes, `segment_samples`), and a game's protocol functions over
them (`segment_protocol`). Each game's definition.py makes its SampleData and rows with these
for its feature sizes; the learner values every frame and bootstraps with its current critic
(agent.gae), so a segment carries no advantages.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from feature.rows import RowLayout, protocol_converters
from kaiwu_agent.utils.common_func import Frame, attached, create_cls

#: Frames one segment row has room for. The platform needs `Config.SAMPLE_DIM` when config.py
#: is imported, before any run's settings are known (and one process may host several runs: the
#: tests, the local trainer), so the row is sized by this constant rather than by `[ppo]
#: num_steps`, which is validated to be <= it (agent.ppo_options.PPOConfig). Shorter segments are padded
#: and the learner skips the padding; a num_steps above it means raising it here.
SEGMENT_FRAMES = 128

#: Numbers a segment row keeps for the recurrent state its first frame was acted from (a
#: policy with `[model] core`; agent.core): fixed like SEGMENT_FRAMES, the state's own size is
#: validated to fit (agent.model_options.ModelConfig) and the rest is zeros. A row without a core
#: carries zeros here, 0.08 % of its width.
CORE_STATE_DIM = 1024

#: The action space every game's PPO package shares: 8 moves (action d walks in direction d, d ×
#: 45° counter-clockwise from +x), then 8 flashes or talents in the same directions.
NUM_MOVES = 8
NUM_FLASHES = 8
NUM_ACTIONS = NUM_MOVES + NUM_FLASHES

#: The policy's answer for one observation: `action` 0..15 (sent to the env) and `log_prob`
#: log π(action | obs) under the policy that chose it (the behaviour policy of PPO's ratio);
#: `core_state`: a recurrent policy's state after this step (float32 array; None without a core),
#: which the next observation of the episode brings back (ObsData.core_state).
ActData = create_cls("ActData", action=None, log_prob=None, core_state=None)

#: What the network sees at one step: `map` (channels, height, width) float32 (the game's map
#: channels), `state` (state size,) float32 (its state blocks), `legal` (actions,) float32,
#: 1 = action allowed. `core_state`: a recurrent policy's state before
#: this step, as its previous answer in the same episode handed it out (None: the episode's
#: first step, or a policy without memory; episodes.runner carries it, agent.core says why).
ObsData = create_cls("ObsData", map=None, state=None, legal=None, core_state=None)


@attached
def action_process(act_data) -> int:
    """ActData -> the int action env.step takes."""
    return int(act_data.action)


#: One training sample: a segment of up to SEGMENT_FRAMES consecutive frames of one env's
#: episode, frame t at index t. Per frame: `map`, `state`, `legal` (the observation), `action`,
#: `log_prob` (behaviour policy), `reward` (shaped), `terminated` (1: the episode ended in a
#: terminal state after this frame; only the last valid frame can be), `mask` (1 for the
#: frames, 0 for the padding after them). `next_map`, `next_state`, `next_legal`: the
#: observation after the last frame, whose value the learner bootstraps from when the segment
#: was cut mid-episode or the step limit truncated it (ignored when the last frame terminated).
#: `core_state` (CORE_STATE_DIM,): a recurrent policy's state before frame 0 (zeros at an
#: episode's start and without a core), `burn_in`: how many leading frames repeat the previous
#: segment's last ones only to warm that state up (the learner trains on the rest; 0 without).
#: Every number travels as float32 (the actions too: 0..15 is exact).
SEGMENT_FIELDS = ("map", "state", "legal", "action", "log_prob", "reward", "terminated", "mask", "next_map",
                  "next_state", "next_legal", "core_state", "burn_in")
# A Frame (the platform's attribute bag) holds one env step until its segment is sent:
# Frame(obs=ObsData, act=ActData, reward=shaped reward after `act`, terminated=the episode
# reached a terminal state after this step, so nothing is bootstrapped past it).

def segment_rows(map_shape: tuple, state_dim: int, num_actions: int) -> RowLayout:
    """The flat float32 layout of one segment (SEGMENT_FIELDS in order) for a game's feature sizes."""
    return RowLayout((
        ("map", (SEGMENT_FRAMES, *map_shape)),
        ("state", (SEGMENT_FRAMES, state_dim)),
        ("legal", (SEGMENT_FRAMES, num_actions)),
        ("action", (SEGMENT_FRAMES,)),
        ("log_prob", (SEGMENT_FRAMES,)),
        ("reward", (SEGMENT_FRAMES,)),
        ("terminated", (SEGMENT_FRAMES,)),
        ("mask", (SEGMENT_FRAMES,)),
        ("next_map", map_shape),
        ("next_state", (state_dim,)),
        ("next_legal", (num_actions,)),
        ("core_state", (CORE_STATE_DIM,)),
        ("burn_in", ()),
    ), int_fields=("action", "burn_in"))



class PackedSegmentRows(RowLayout):
    """The segment layout whose `stack` also takes samples as the 2026 engine's framework (15.0.1,
    13.0.1) rebuilds them from its rows: each field flat (its declared width), maybe a torch tensor."""

    def stack(self, samples: Sequence) -> dict[str, np.ndarray]:
        def array(value, shape):
            detach = getattr(value, "detach", None)
            value = detach().cpu().numpy() if callable(detach) else value
            return np.asarray(value, dtype=np.float32).reshape(shape)

        return {name: np.stack([array(getattr(s, name), shape) for s in samples]) for name, shape in self.fields}


def packed_segment_sample(map_shape: tuple, state_dim: int, num_actions: int) -> tuple[type, PackedSegmentRows]:
    """(SampleData, its rows) for a game of the 2026 engine: a segment (SEGMENT_FIELDS) whose
    FIELD_DIMS declare each field's width as that engine's create_cls does, so the platform's
    framework packs a segment into the same row as the package's SampleData2NumpyData."""
    rows = PackedSegmentRows(segment_rows(map_shape, state_dim, num_actions).fields, int_fields=("action", "burn_in"))
    sample_class = create_cls("SampleData", **dict.fromkeys(SEGMENT_FIELDS))
    sample_class.FIELD_DIMS = {name: int(np.prod(shape, dtype=np.int64)) for name, shape in rows.fields}
    return sample_class, rows


def segment_protocol(sample_class: type, rows: RowLayout, map_shape: tuple, state_dim: int, observe, act) -> tuple:
    """A game's PPO protocol functions, registered under the platform's names (`@attached`):
    (observation_process, action_process, sample_process, SampleData2NumpyData,
    NumpyData2SampleData) over its observation (`observe`, `act`) and its segment rows."""
    num_actions = dict(rows.fields)["next_legal"][0]

    @attached
    def sample_process(list_game_data: Sequence[Frame], next_obs, burn_in: int = 0) -> list:
        """Consecutive frames of one env's episode and the observation after the last one -> [one
        SampleData segment] (segment_samples's rules)."""
        return segment_samples(list_game_data, next_obs, burn_in, sample_class, map_shape, state_dim, num_actions)

    to_rows, from_rows = (attached(f) for f in protocol_converters(rows, sample_class))
    return attached(observe), attached(act), sample_process, to_rows, from_rows


def segment_samples(list_game_data: Sequence[Frame], next_obs, burn_in: int, sample_class: type,
                    map_shape: tuple[int, ...], state_dim: int, num_actions: int) -> list:
    """Consecutive frames of one env's episode (1..SEGMENT_FRAMES of them) and the observation
    after the last one -> [one SampleData segment], padded to SEGMENT_FRAMES; the first
    `burn_in` frames were the previous segment's last (a recurrent policy's warm-up).

    The episode loop sends a segment when it reaches `[ppo] num_steps` frames or its episode
    ends (terminated or truncated), so a segment never spans two episodes: only its last frame
    may be terminated, and the only reset of a recurrent state is the zeros a segment that
    starts an episode stores.
    """
    frames = list(list_game_data)
    n = len(frames)
    if not 1 <= n <= SEGMENT_FRAMES:
        raise ValueError(f"sample_process: a segment holds 1..{SEGMENT_FRAMES} frames, got {n}")
    if any(frame.terminated for frame in frames[:-1]):
        raise ValueError("sample_process: a terminated frame must be the last of its segment")
    if not 0 <= burn_in < n:
        raise ValueError(f"sample_process: burn_in must leave a frame to train on: 0..{n - 1}, got {burn_in}")
    core_state = np.zeros(CORE_STATE_DIM, dtype=np.float32)
    if frames[0].obs.core_state is not None:
        start = np.asarray(frames[0].obs.core_state, dtype=np.float32).reshape(-1)
        if start.size > CORE_STATE_DIM:
            raise ValueError(f"sample_process: a core state of {start.size} numbers, a row keeps {CORE_STATE_DIM}")
        core_state[:start.size] = start

    def per_frame(get, shape=(), dtype=np.float32):
        out = np.zeros((SEGMENT_FRAMES, *shape), dtype=dtype)
        out[:n] = [get(frame) for frame in frames]
        return out

    return [sample_class(
        map=per_frame(lambda f: f.obs.map, map_shape),
        state=per_frame(lambda f: f.obs.state, (state_dim,)),
        legal=per_frame(lambda f: f.obs.legal, (num_actions,)),
        action=per_frame(lambda f: int(f.act.action), dtype=np.int64),
        log_prob=per_frame(lambda f: f.act.log_prob),
        reward=per_frame(lambda f: f.reward),
        terminated=per_frame(lambda f: float(bool(f.terminated))),
        mask=per_frame(lambda f: 1.0),
        next_map=np.asarray(next_obs.map, dtype=np.float32),
        next_state=np.asarray(next_obs.state, dtype=np.float32),
        next_legal=np.asarray(next_obs.legal, dtype=np.float32),
        core_state=core_state,
        burn_in=int(burn_in),
    )]
