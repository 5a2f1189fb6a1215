"""The networks: CNN over the local maps, state vector joined after the conv tower (PPO's
ActorCritic, the DQN package's QNetwork).

    map (C, 51, 51) -> conv tower -> flatten -+
                                              +-> concat -> Linear(hidden) -> ReLU -> head
    state (STATE_DIM,) ----------------------+

The actor and the critic each own such a backbone (`share_backbone=False`, the default: value
regression then cannot disturb the policy's features); with `share_backbone=True` one backbone
feeds both heads. Input sizes come from feature.layout, so a new feature needs no edit here.
Illegal actions get a large negative logit, so they are never sampled and carry no gradient.

The conv towers keep their weights and inputs channels-last (NHWC), the layout oneDNN's fast
convolutions use, and the networks hand back fp32 outputs whatever precision the learner runs
the update in (workflow.precision), so losses and log-probabilities are always fp32.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from agent.value_norm import ValueNorm
from feature.layout import MAP_CHANNELS, MAP_SIZE, NUM_ACTIONS, STATE_DIM

MASKED_LOGIT = -1e8  # exp() underflows to exactly 0; finite, so no NaN in softmax or entropy


@dataclass
class ModelConfig:
    channels: list[int] = field(default_factory=lambda: [16, 32, 32])
    kernel_sizes: list[int] = field(default_factory=lambda: [5, 3, 3])
    strides: list[int] = field(default_factory=lambda: [2, 2, 2])
    hidden_size: int = 256
    share_backbone: bool = False

    def validate(self):
        if not self.channels:
            raise ValueError("channels needs at least one conv layer")
        if not len(self.channels) == len(self.kernel_sizes) == len(self.strides):
            raise ValueError(f"channels, kernel_sizes and strides need one entry per conv layer, got "
                             f"{len(self.channels)}, {len(self.kernel_sizes)}, {len(self.strides)}")
        if min(self.channels + self.kernel_sizes + self.strides + [self.hidden_size]) < 1:
            raise ValueError("channels, kernel_sizes, strides and hidden_size must be >= 1")
        size = MAP_SIZE
        for k, s in zip(self.kernel_sizes, self.strides):
            size = (size - k) // s + 1
            if size < 1:
                raise ValueError(f"the conv tower shrinks the {MAP_SIZE}×{MAP_SIZE} map below 1×1; "
                                 f"use smaller kernels or strides")


def conv_input(map_tensor: torch.Tensor) -> torch.Tensor:
    """The map batch as the conv towers read it: channels-last and, under autocast, already in
    the autocast dtype, converted once for both backbones instead of once per convolution."""
    device = map_tensor.device.type
    if torch.is_autocast_enabled(device):
        map_tensor = map_tensor.to(torch.get_autocast_dtype(device))
    return map_tensor.contiguous(memory_format=torch.channels_last)


def layer_init(layer: nn.Module, gain: float) -> nn.Module:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class Backbone(nn.Module):
    """Conv tower over the map, then one hidden layer over [conv features, state]."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        layers, in_ch, size = [], MAP_CHANNELS, MAP_SIZE
        for out_ch, k, s in zip(cfg.channels, cfg.kernel_sizes, cfg.strides):
            layers += [layer_init(nn.Conv2d(in_ch, out_ch, k, stride=s), math.sqrt(2)), nn.ReLU()]
            in_ch, size = out_ch, (size - k) // s + 1
        self.conv = nn.Sequential(*layers).to(memory_format=torch.channels_last)
        self.fc = nn.Sequential(layer_init(nn.Linear(in_ch * size * size + STATE_DIM, cfg.hidden_size), math.sqrt(2)),
                                nn.ReLU())

    def forward(self, map_tensor: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        features = self.conv(conv_input(map_tensor))  # a no-op when the caller converted it already
        # flattened in (C, H, W) order whatever the layout, as the first hidden layer expects
        return self.fc(torch.cat([features.flatten(1), state.to(features.dtype)], dim=1))


class ActorCritic(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.actor_backbone = Backbone(cfg)
        self.critic_backbone = None if cfg.share_backbone else Backbone(cfg)
        self.policy_head = layer_init(nn.Linear(cfg.hidden_size, NUM_ACTIONS), 0.01)
        self.value_head = layer_init(nn.Linear(cfg.hidden_size, 1), 1.0)
        self.value_norm = ValueNorm()  # return statistics (ppo.value_norm); identity when unused

    def forward(self, map_tensor: torch.Tensor, state: torch.Tensor, legal: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """-> (masked logits (B, NUM_ACTIONS), value (B,)). `legal` is 1 for allowed actions."""
        map_tensor = conv_input(map_tensor)
        actor_features = self.actor_backbone(map_tensor, state)
        critic_features = actor_features if self.critic_backbone is None else self.critic_backbone(map_tensor, state)
        return self._masked_logits(actor_features, legal), self.value_head(critic_features).squeeze(-1).float()

    def policy(self, map_tensor: torch.Tensor, state: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        """-> masked logits (B, NUM_ACTIONS), the actor alone (acting needs no value)."""
        return self._masked_logits(self.actor_backbone(map_tensor, state), legal)

    def value(self, map_tensor: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """-> value (B,), the critic alone (the learner's GAE pass needs no policy)."""
        backbone = self.actor_backbone if self.critic_backbone is None else self.critic_backbone
        return self.value_head(backbone(map_tensor, state)).squeeze(-1).float()

    def _masked_logits(self, actor_features: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        logits = self.policy_head(actor_features)
        return torch.where(legal > 0.5, logits.float(), torch.full_like(logits, MASKED_LOGIT, dtype=torch.float32))


class QNetwork(nn.Module):
    """Action values for the DQN package: one backbone, then a dueling head
    Q(s, a) = V(s) + A(s, a) - mean_a A(s, a) (Wang et al. 2016), or a plain linear head.
    Illegal actions are not masked here: the agent masks them where it takes a max or argmax."""

    def __init__(self, cfg: ModelConfig, dueling: bool = True):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.dueling = dueling
        self.backbone = Backbone(cfg)
        self.advantage_head = layer_init(nn.Linear(cfg.hidden_size, NUM_ACTIONS), 0.01)
        self.value_head = layer_init(nn.Linear(cfg.hidden_size, 1), 1.0) if dueling else None

    def forward(self, map_tensor: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """-> Q (B, NUM_ACTIONS)."""
        features = self.backbone(map_tensor, state)
        advantage = self.advantage_head(features).float()
        if self.value_head is None:
            return advantage
        return self.value_head(features).float() + advantage - advantage.mean(dim=1, keepdim=True)
