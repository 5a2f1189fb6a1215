"""From frames to replay rows: GAE (sample_process), SampleData <-> float32 rows, and the data
classes registered under the platform's names."""
import numpy as np
import pytest

from feature import layout
from feature.definition import (SAMPLE_DIM, ActData, Frame, NumpyData2SampleData, ObsData,
                                SampleData, SampleData2NumpyData, sample_process)


# --- sample_process (GAE) --------------------------------------------------------------------------

def _frames(rewards, values, terminated_last=False):
    obs = ObsData(map=np.zeros(layout.MAP_SHAPE, np.float32), state=np.zeros(layout.STATE_DIM, np.float32),
                  legal=np.ones(16, np.float32))
    n = len(rewards)
    return [Frame(obs=obs, act=ActData(action=i % 16, log_prob=-0.5, value=v), reward=r,
                  terminated=terminated_last and i == n - 1) for i, (r, v) in enumerate(zip(rewards, values))]


def _hand_gae(rewards, values, next_values, not_done, gamma, lam):
    # Written out step by step, independent of the implementation's loop.
    deltas = [r + gamma * nv * nd - v for r, v, nv, nd in zip(rewards, values, next_values, not_done)]
    adv = [0.0] * len(rewards)
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = deltas[t] + gamma * lam * not_done[t] * running
        adv[t] = running
    return adv


def test_gae_truncated_chunk_bootstraps_from_next_value():
    gamma, lam = 0.9, 0.8
    rewards, values, bootstrap = [1.0, 0.0, 2.0], [0.5, 1.0, 1.5], 3.0
    samples = sample_process(_frames(rewards, values), bootstrap, gamma, lam)
    # by hand: deltas = 1+.9*1-.5 = 1.4, 0+.9*1.5-1 = .35, 2+.9*3-1.5 = 3.2
    # A2 = 3.2; A1 = .35 + .72*3.2 = 2.654; A0 = 1.4 + .72*2.654 = 3.31088
    expected = [3.31088, 2.654, 3.2]
    np.testing.assert_allclose([s.advantage for s in samples], expected, rtol=1e-6)
    np.testing.assert_allclose([s.ret for s in samples], np.add(expected, values), rtol=1e-6)
    assert expected == pytest.approx(_hand_gae(rewards, values, [1.0, 1.5, 3.0], [1, 1, 1], gamma, lam))


def test_gae_terminated_chunk_ignores_bootstrap():
    gamma, lam = 0.9, 0.8
    rewards, values = [1.0, 0.0, 2.0], [0.5, 1.0, 1.5]
    a = sample_process(_frames(rewards, values, terminated_last=True), 123.0, gamma, lam)
    b = sample_process(_frames(rewards, values, terminated_last=True), -7.0, gamma, lam)
    # last step: delta = 2 - 1.5 = .5 (no future); A1 = .35 + .72*.5 = .71; A0 = 1.4 + .72*.71 = 1.9112
    np.testing.assert_allclose([s.advantage for s in a], [1.9112, 0.71, 0.5], rtol=1e-6)
    assert [s.advantage for s in a] == [s.advantage for s in b]


def test_gae_terminal_inside_chunk_stops_the_backup():
    gamma, lam = 0.99, 0.95
    frames = _frames([1.0, 5.0, 1.0], [0.0, 0.0, 0.0])
    frames[0].terminated = True
    samples = sample_process(frames, 10.0, gamma, lam)
    assert samples[0].advantage == pytest.approx(1.0)  # nothing after the terminal step leaks back
    assert samples[2].advantage == pytest.approx(1.0 + gamma * 10.0)


def test_sample_process_copies_obs_and_action():
    frames = _frames([0.0, 0.0], [1.0, 2.0])
    samples = sample_process(frames, 0.0, 0.99, 0.95)
    assert [s.action for s in samples] == [0, 1]
    assert samples[0].log_prob == np.float32(-0.5) and samples[1].value == np.float32(2.0)


# --- SampleData <-> numpy ----------------------------------------------------------------------

def _random_sample(rng) -> SampleData:
    def f32(shape):  # random bit patterns of finite float32 values, signs and tiny values included
        return (rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 30, shape)).astype(np.float32)
    return SampleData(map=f32(layout.MAP_SHAPE), state=f32((layout.STATE_DIM,)),
                      legal=rng.integers(0, 2, 16).astype(np.float32), action=int(rng.integers(0, 16)),
                      log_prob=np.float32(f32(())), value=np.float32(f32(())),
                      advantage=np.float32(f32(())), ret=np.float32(f32(())))


def _assert_bit_identical(a: SampleData, b: SampleData):
    for name in ("map", "state", "legal", "log_prob", "value", "advantage", "ret"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert x.dtype == y.dtype == np.float32, name
        assert x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert a.action == b.action and type(b.action) is int


def test_sample_numpy_round_trip_is_bit_identical():
    rng = np.random.default_rng(1)
    for _ in range(20):
        sample = _random_sample(rng)
        row = SampleData2NumpyData(sample)
        assert row.shape == (SAMPLE_DIM,) and row.dtype == np.float32
        back = NumpyData2SampleData(row)
        _assert_bit_identical(sample, back)
        assert SampleData2NumpyData(back).tobytes() == row.tobytes()


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


@pytest.mark.parametrize("module", ["feature.definition", "feature.dqn_definition"])
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
