"""Return statistics for a normalised critic: a module of the model (its buffers travel in the
state dict), so every package whose network carries one needs it, not only PPO's update."""
from __future__ import annotations

import torch
from torch import nn


class ValueNorm(nn.Module):
    """Running mean/variance of returns (parallel Welford), float64 buffers of the model, so they
    travel in its state dict. Identity (mean 0, variance 1) until the first update."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros((), dtype=torch.float64))
        self.register_buffer("var", torch.ones((), dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        x = x.detach().double().reshape(-1)
        n = x.numel()
        if n == 0:
            return
        b_mean, b_var = x.mean(), x.var(unbiased=False)
        total = self.count + n
        delta = b_mean - self.mean
        new_mean = self.mean + delta * n / total
        new_var = (self.var * self.count + b_var * n + delta**2 * self.count * n / total) / total
        self.mean.copy_(new_mean)
        self.var.copy_(new_var)
        self.count.copy_(total)

    @property
    def std(self) -> torch.Tensor:
        return torch.sqrt(self.var).clamp_min(1e-4)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return ((x.double() - self.mean) / self.std).to(x.dtype)

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        return (x.double() * self.std + self.mean).to(x.dtype)
