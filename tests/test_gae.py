"""GAE over a batch of segments (agent.gae) against a plain per-segment loop."""
import numpy as np
import pytest
import torch

from agent.gae import gae, valid_frames


def reference_gae(rewards, values, bootstrap_value, terminated, gamma, lam):
    """One segment's frames (no padding), backed up one frame at a time: a terminated frame has
    no future, the last frame bootstraps from `bootstrap_value` unless it terminated."""
    advantages = [0.0] * len(rewards)
    next_value, next_advantage = float(bootstrap_value), 0.0
    for t in reversed(range(len(rewards))):
        not_done = 0.0 if terminated[t] else 1.0
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        next_advantage = delta + gamma * lam * not_done * next_advantage
        advantages[t] = next_advantage
        next_value = values[t]
    return advantages


def padded(segments, t_max, fill=0.0):
    """Per-segment lists -> (N, t_max) float64 tensor, `fill` in the padding."""
    out = torch.full((len(segments), t_max), fill, dtype=torch.float64)
    for i, seg in enumerate(segments):
        out[i, :len(seg)] = torch.tensor(seg, dtype=torch.float64)
    return out


def run(segments, t_max, gamma, lam, pad=0.0):
    """segments: (rewards, values, bootstrap, terminated) each; -> (N, t_max) advantages."""
    mask = padded([[1.0] * len(s[0]) for s in segments], t_max)
    return gae(padded([s[0] for s in segments], t_max, pad), padded([s[1] for s in segments], t_max, pad),
               torch.tensor([s[2] for s in segments], dtype=torch.float64),
               padded([[float(x) for x in s[3]] for s in segments], t_max), mask, gamma, lam)


def test_truncated_segment_bootstraps_from_the_next_value():
    gamma, lam = 0.9, 0.8
    (adv,) = run([([1.0, 0.0, 2.0], [0.5, 1.0, 1.5], 3.0, [0, 0, 0])], 3, gamma, lam)
    # deltas = 1+.9*1-.5 = 1.4, 0+.9*1.5-1 = .35, 2+.9*3-1.5 = 3.2
    # A2 = 3.2; A1 = .35 + .72*3.2 = 2.654; A0 = 1.4 + .72*2.654 = 3.31088
    np.testing.assert_allclose(adv.numpy(), [3.31088, 2.654, 3.2], rtol=1e-12)


def test_terminated_segment_ignores_the_bootstrap():
    gamma, lam = 0.9, 0.8
    a = run([([1.0, 0.0, 2.0], [0.5, 1.0, 1.5], 123.0, [0, 0, 1])], 3, gamma, lam)
    b = run([([1.0, 0.0, 2.0], [0.5, 1.0, 1.5], -7.0, [0, 0, 1])], 3, gamma, lam)
    # last: delta = 2 - 1.5 = .5 (no future); A1 = .35 + .72*.5 = .71; A0 = 1.4 + .72*.71 = 1.9112
    np.testing.assert_allclose(a[0].numpy(), [1.9112, 0.71, 0.5], rtol=1e-12)
    assert torch.equal(a, b)


def test_a_terminal_frame_stops_the_backup():
    gamma, lam = 0.99, 0.95
    (adv,) = run([([1.0, 5.0, 1.0], [0.0, 0.0, 0.0], 10.0, [1, 0, 0])], 3, gamma, lam)
    assert adv[0].item() == pytest.approx(1.0)  # nothing after the terminal frame leaks back
    assert adv[2].item() == pytest.approx(1.0 + gamma * 10.0)


@pytest.mark.parametrize("pad", [0.0, 1e6, float("nan")])
def test_padding_is_ignored_and_gets_zero(pad):
    gamma, lam = 0.9, 0.8
    short = ([1.0, 0.0], [0.5, 1.0], 3.0, [0, 0])
    adv = run([short], 5, gamma, lam, pad=pad)[0]
    np.testing.assert_allclose(adv[:2].numpy(), reference_gae(*short, gamma, lam), rtol=1e-12)
    assert torch.equal(adv[2:], torch.zeros(3, dtype=torch.float64))


def test_a_batch_of_random_segments_matches_the_reference():
    rng = np.random.default_rng(0)
    gamma, lam, t_max = 0.995, 0.95, 16
    segments = []
    for i in range(40):
        n = int(rng.integers(1, t_max + 1))
        ends = i % 3  # 0: cut mid-episode, 1: truncated (both bootstrap), 2: terminated
        segments.append((rng.normal(size=n).tolist(), rng.normal(size=n).tolist(), float(rng.normal() * 5),
                         [int(ends == 2 and t == n - 1) for t in range(n)]))
    adv = run(segments, t_max, gamma, lam, pad=float("nan"))
    for i, seg in enumerate(segments):
        np.testing.assert_allclose(adv[i, :len(seg[0])].numpy(), reference_gae(*seg, gamma, lam), rtol=1e-10,
                                   atol=1e-12)
        assert not adv[i, len(seg[0]):].any()
    float32 = gae(*(x.float() for x in (padded([s[0] for s in segments], t_max),
                                          padded([s[1] for s in segments], t_max),
                                          torch.tensor([s[2] for s in segments]),
                                          padded([[float(x) for x in s[3]] for s in segments], t_max),
                                          padded([[1.0] * len(s[0]) for s in segments], t_max))), gamma, lam)
    assert float32.dtype == torch.float32
    np.testing.assert_allclose(float32.numpy(), torch.nan_to_num(adv).numpy(), rtol=1e-4, atol=1e-4)


def test_valid_frames_wants_the_frames_first():
    assert valid_frames(torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])).tolist() == [[True, True, False],
                                                                                      [True, False, False]]
    for bad in ([[1.0, 0.0, 1.0]], [[0.0, 0.0, 0.0]], [[0.0, 1.0, 1.0]]):
        with pytest.raises(ValueError, match="frames first"):
            valid_frames(torch.tensor(bad))
