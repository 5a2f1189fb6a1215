"""From frames to replay rows: a trajectory segment (sample_process), SampleData <-> float32
rows, and the data classes registered under the platform's names."""
import numpy as np
import pytest

from feature.back_to_the_realm import layout
from feature.back_to_the_realm.ppo_definition import (CORE_STATE_DIM, SAMPLE_DIM, SEGMENT_FRAMES, ActData, Frame, NumpyData2SampleData,
                                ObsData, SampleData, SampleData2NumpyData, sample_process)


def _obs(rng) -> ObsData:
    return ObsData(map=rng.random(layout.MAP_SHAPE, dtype=np.float32),
                   state=rng.random(layout.STATE_DIM, dtype=np.float32), legal=layout.legal_mask([1, 0]))


def _frames(n, seed=0, terminated_last=False):
    rng = np.random.default_rng(seed)
    return [Frame(obs=_obs(rng), act=ActData(action=i % 16, log_prob=-0.5 - i), reward=float(i) / 4,
                  terminated=terminated_last and i == n - 1) for i in range(n)]


# --- sample_process ------------------------------------------------------------------------------

def test_a_segment_carries_its_frames_padding_and_next_observation():
    frames = _frames(5, terminated_last=True)
    next_obs = _obs(np.random.default_rng(9))
    (segment,) = sample_process(frames, next_obs)
    assert segment.map.shape == (SEGMENT_FRAMES, *layout.MAP_SHAPE) and segment.mask.shape == (SEGMENT_FRAMES,)
    np.testing.assert_array_equal(segment.mask, [1] * 5 + [0] * (SEGMENT_FRAMES - 5))
    np.testing.assert_array_equal(segment.terminated[:5], [0, 0, 0, 0, 1])
    for t, frame in enumerate(frames):
        assert np.array_equal(segment.map[t], frame.obs.map) and np.array_equal(segment.state[t], frame.obs.state)
        assert np.array_equal(segment.legal[t], frame.obs.legal)
        assert segment.action[t] == frame.act.action and segment.log_prob[t] == np.float32(frame.act.log_prob)
        assert segment.reward[t] == np.float32(frame.reward)
    for name in ("map", "state", "legal", "action", "log_prob", "reward", "terminated"):
        assert not np.asarray(getattr(segment, name))[5:].any(), name  # padding is zeros
    assert np.array_equal(segment.next_map, next_obs.map) and np.array_equal(segment.next_state, next_obs.state)
    assert np.array_equal(segment.next_legal, next_obs.legal)


def test_a_segment_never_spans_an_episode_end_nor_its_row():
    next_obs = _obs(np.random.default_rng(1))
    with pytest.raises(ValueError, match="terminated frame must be the last"):
        sample_process(_frames(2, terminated_last=True) + _frames(1), next_obs)
    with pytest.raises(ValueError, match=f"1..{SEGMENT_FRAMES} frames, got 0"):
        sample_process([], next_obs)
    with pytest.raises(ValueError, match=f"got {SEGMENT_FRAMES + 1}"):
        sample_process(_frames(SEGMENT_FRAMES + 1), next_obs)
    (full,) = sample_process(_frames(SEGMENT_FRAMES), next_obs)
    assert full.mask.all()


def test_a_segment_stores_the_core_state_of_its_first_frame_and_its_burn_in():
    """The recurrent state a segment starts from is its first frame's (zeros when that frame
    began the episode, or without a core); burn_in counts leading warm-up frames, one at least
    is left to train on."""
    next_obs = _obs(np.random.default_rng(1))
    (fresh,) = sample_process(_frames(3), next_obs)
    assert fresh.core_state.shape == (CORE_STATE_DIM,) and not fresh.core_state.any() and fresh.burn_in == 0
    frames = _frames(4)
    frames[0].obs.core_state = np.arange(1, 11, dtype=np.float32)
    frames[1].obs.core_state = np.full(10, 7.0, dtype=np.float32)
    (continued,) = sample_process(frames, next_obs, burn_in=2)
    np.testing.assert_array_equal(continued.core_state[:10], np.arange(1, 11))
    assert not continued.core_state[10:].any() and continued.burn_in == 2
    with pytest.raises(ValueError, match="burn_in must leave a frame to train on: 0..3, got 4"):
        sample_process(frames, next_obs, burn_in=4)
    frames[0].obs.core_state = np.zeros(CORE_STATE_DIM + 1, dtype=np.float32)
    with pytest.raises(ValueError, match=f"a row keeps {CORE_STATE_DIM}"):
        sample_process(frames, next_obs)


# --- SampleData <-> numpy ----------------------------------------------------------------------

def _random_segment(rng) -> SampleData:
    def f32(shape):  # random bit patterns of finite float32 values, signs and tiny values included
        return (rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 30, shape)).astype(np.float32)
    n = int(rng.integers(1, SEGMENT_FRAMES + 1))
    mask = (np.arange(SEGMENT_FRAMES) < n).astype(np.float32)
    return SampleData(map=f32((SEGMENT_FRAMES, *layout.MAP_SHAPE)), state=f32((SEGMENT_FRAMES, layout.STATE_DIM)),
                      legal=rng.integers(0, 2, (SEGMENT_FRAMES, 16)).astype(np.float32),
                      action=rng.integers(0, 16, SEGMENT_FRAMES), log_prob=f32(SEGMENT_FRAMES),
                      reward=f32(SEGMENT_FRAMES), terminated=np.float32(rng.integers(0, 2)) * (np.arange(SEGMENT_FRAMES) == n - 1),
                      mask=mask, next_map=f32(layout.MAP_SHAPE), next_state=f32((layout.STATE_DIM,)),
                      next_legal=rng.integers(0, 2, 16).astype(np.float32), core_state=f32((CORE_STATE_DIM,)),
                      burn_in=int(rng.integers(0, n)))


FLOAT_FIELDS = ("map", "state", "legal", "log_prob", "reward", "terminated", "mask", "next_map", "next_state",
                "next_legal", "core_state")


def _assert_bit_identical(a: SampleData, b: SampleData):
    for name in FLOAT_FIELDS:
        x, y = np.asarray(getattr(a, name), dtype=np.float32), np.asarray(getattr(b, name))
        assert y.dtype == np.float32, name
        assert x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert b.action.dtype == np.int64 and np.array_equal(a.action, b.action)
    assert type(b.burn_in) is int and b.burn_in == a.burn_in


def test_segment_numpy_round_trip_is_bit_identical():
    rng = np.random.default_rng(1)
    segments = [_random_segment(rng) for _ in range(3)] + sample_process(_frames(7, terminated_last=True), _obs(rng))
    for segment in segments:
        row = SampleData2NumpyData(segment)
        assert row.shape == (SAMPLE_DIM,) and row.dtype == np.float32
        back = NumpyData2SampleData(row)
        _assert_bit_identical(segment, back)
        assert SampleData2NumpyData(back).tobytes() == row.tobytes()


def test_a_row_handed_as_a_tensor_reads_as_the_numpy_row():
    """The 2025 platforms' learners hand NumpyData2SampleData float32 torch tensors (on a GPU
    learner, CUDA ones: tests/test_cuda.py)."""
    import torch

    segment = _random_segment(np.random.default_rng(2))
    row = SampleData2NumpyData(segment)
    _assert_bit_identical(segment, NumpyData2SampleData(torch.from_numpy(row.copy())))


def test_numpy_to_sample_rejects_wrong_rows():
    with pytest.raises(ValueError, match="float32"):
        NumpyData2SampleData(np.zeros(SAMPLE_DIM, dtype=np.float64))
    with pytest.raises(ValueError, match=str(SAMPLE_DIM)):
        NumpyData2SampleData(np.zeros(SAMPLE_DIM - 1, dtype=np.float32))


REGISTRY_CHECK = """
import importlib, sys
definition = importlib.import_module(sys.argv[1])
from kaiwu_agent.agent.protocol import protocol
names = ("ObsData", "ActData", "SampleData", "observation_process", "action_process", "sample_process",
         "SampleData2NumpyData", "NumpyData2SampleData")
missing = [n for n in names if getattr(protocol, n) is not getattr(definition, n)]
assert not missing, missing
"""


@pytest.mark.parametrize("module", ["feature.back_to_the_realm.ppo_definition", "feature.back_to_the_realm.dqn_plus_definition"])
def test_data_classes_are_the_platforms_create_cls_and_registered(module):
    """Importing a package's definition registers its classes and functions under the platform's
    names (in a fresh process: the registry is per process, the last package imported wins)."""
    import subprocess
    import sys
    from pathlib import Path

    with pytest.raises(AttributeError):
        ObsData(mapp=1)
    result = subprocess.run([sys.executable, "-c", REGISTRY_CHECK, module], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
