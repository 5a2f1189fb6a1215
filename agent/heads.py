"""The policy's action heads. Both give logits over the game's 16 actions, so the sampling,
the log-probabilities, the entropy and the PPO loss downstream are one code path.

- "joint": one linear layer, a logit per action.
- "factored": a direction head (8) and a walk/flash head (2) whose log-probabilities add:
  action = mode × NUM_MOVES + direction (0..7 walk, 8..15 flash, feature.back_to_the_realm.layout). The 16 logits
  are dir[d] + mode[m], so softmax over the legal ones is the product of the two heads'
  distributions whenever the legal actions are a product (the game's are: every direction,
  flashes all or none), and "where to go" is learned once for walking and flashing. Entropy and
  KL of a product distribution are the heads' sums. The caller masks illegal actions on the 16
  logits, which for an illegal flash is the same as masking the walk/flash head.
"""
from __future__ import annotations

import torch
from torch import nn

from feature.segments import NUM_ACTIONS, NUM_FLASHES, NUM_MOVES

from agent.model_options import ACTION_HEADS  # noqa: F401 (its home is agent.model_options)


def init_head(layer: nn.Linear) -> nn.Linear:
    """Orthogonal with a small gain, zero bias: the first policy is near uniform."""
    nn.init.orthogonal_(layer.weight, 0.01)
    nn.init.zeros_(layer.bias)
    return layer


class FactoredHead(nn.Module):
    def __init__(self, in_features: int):
        super().__init__()
        if NUM_MOVES != NUM_FLASHES:
            raise ValueError("the factored head needs one flash per walking direction")
        self.direction = init_head(nn.Linear(in_features, NUM_MOVES))
        self.mode = init_head(nn.Linear(in_features, NUM_ACTIONS // NUM_MOVES))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """-> (B, NUM_ACTIONS) logits, dir[d] + mode[m] at action m × NUM_MOVES + d."""
        return (self.mode(features)[:, :, None] + self.direction(features)[:, None, :]).flatten(1)


def action_head(kind: str, in_features: int) -> nn.Module:
    """The [model] action_head's module (ACTION_HEADS)."""
    if kind == "joint":
        return init_head(nn.Linear(in_features, NUM_ACTIONS))
    if kind == "factored":
        return FactoredHead(in_features)
    raise ValueError(f"model.action_head: got {kind!r}, allowed: {' | '.join(ACTION_HEADS)}")
