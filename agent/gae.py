"""Generalised advantage estimation (Schulman et al. 2016) over a batch of trajectory segments,
vectorised over the segments: the learner runs it on every batch with its current critic's
values (Agent.learn), so advantages never go stale with the weights that produced a sample.
"""
from __future__ import annotations

import torch


def valid_frames(mask: torch.Tensor) -> torch.Tensor:
    """The (N, T) bool mask of the frames of N segments; ValueError unless each segment's frames
    come first and it has at least one (what sample_process writes)."""
    valid = mask > 0.5
    if not bool(valid[:, 0].all()) or bool((valid[:, 1:] & ~valid[:, :-1]).any()):
        raise ValueError("a segment's mask must mark at least one frame, its frames first (1 ... 1 0 ... 0)")
    return valid


def gae(rewards: torch.Tensor, values: torch.Tensor, bootstrap_values: torch.Tensor, terminated: torch.Tensor,
        mask: torch.Tensor, gamma: float, gae_lambda: float) -> torch.Tensor:
    """Advantages (N, T) of N segments of T frames (0 on padding).

    `rewards`, `values`, `terminated` (1: no future after this frame), `mask` (1: a frame, 0:
    padding; a segment's frames come first): (N, T). `bootstrap_values` (N,): V of the
    observation after each segment's last frame, used unless that frame is terminated. A
    terminated frame stops the backup wherever it is.
    """
    n, t_max = rewards.shape
    valid = mask > 0.5
    not_done = 1.0 - terminated.to(rewards.dtype)
    # V(s_{t+1}): the next frame's value inside the segment, the bootstrap value after its last frame
    next_valid = torch.cat([valid[:, 1:], valid.new_zeros(n, 1)], dim=1)
    next_values = torch.cat([values[:, 1:], values.new_zeros(n, 1)], dim=1)
    next_values = torch.where(next_valid, next_values, bootstrap_values[:, None].to(values.dtype))
    zero = rewards.new_zeros(())
    deltas = torch.where(valid, rewards + gamma * not_done * next_values - values, zero)  # padding: whatever it holds
    advantages = torch.zeros_like(rewards)
    running = rewards.new_zeros(n)
    for t in range(t_max - 1, -1, -1):
        running = torch.where(valid[:, t], deltas[:, t] + gamma * gae_lambda * not_done[:, t] * running, zero)
        advantages[:, t] = running
    return advantages
