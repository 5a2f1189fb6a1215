"""The networks: CNN over the local maps, state vector joined after the conv tower (PPO's
ActorCritic, the DQN package's QNetwork).

    map (C, 51, 51) -> conv tower -> flatten -+
                                              +-> concat -> Linear(hidden) -> ReLU -> head
    state (STATE_DIM,) ----------------------+

With `core = "lstm" | "gru"` a recurrent core (agent.core) sits between each backbone's hidden
layer and its head, and the model is run over sequences with the state each one starts from
(`step` when acting, `sequence` / `sequence_value` when learning). `action_head` picks the
policy head (agent.heads: "joint" or "factored"); both give logits over the 16 actions.

One backbone feeds both heads (`share_backbone=True`, the default: half the update's FLOPs, and
on the leaderboard task it learns at least as well per train step); with `share_backbone=False`
the actor and the critic each own one, so value regression cannot disturb the policy's
features. Input sizes are the package's features' (a game's layout), so a new feature needs no edit here.
Illegal actions get a large negative logit, so they are never sampled and carry no gradient.

The conv towers keep their weights and inputs channels-last (NHWC), the layout oneDNN's fast
convolutions use. Under the learner's bf16 autocast (workflow.precision) only the conv towers,
~90 % of the FLOPs, run in bf16: the hidden layer that reads the state vector and the heads stay
fp32. The state holds positions and distances whose small differences matter and bf16's 8-bit
mantissa blurs them (a position x/128 to ~1/4 cell): with the whole network in bf16 the
near-end task needed twice the env steps and failed on 1 seed of 10. Outputs are fp32, so
losses and log-probabilities are too.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from agent.core import RecurrentCore
from agent.heads import action_head
from agent.model_options import ModelConfig  # noqa: F401 (its home is agent.model_options)
from agent.value_norm import ValueNorm
from feature.segments import NUM_ACTIONS

MASKED_LOGIT = -1e8  # exp() underflows to exactly 0; finite, so no NaN in softmax or entropy



#: [model] conv_layout -> the conv towers' memory format
MEMORY_FORMATS = {"channels_last": torch.channels_last, "plain": torch.contiguous_format}


def conv_input(map_tensor: torch.Tensor, memory_format: torch.memory_format) -> torch.Tensor:
    """The map batch as the conv towers read it, converted once for both backbones: in the towers'
    layout and, under autocast, already in the autocast dtype, in channels-last (the bf16 kernels'
    fast layout) whatever the towers keep."""
    device = map_tensor.device.type
    if torch.is_autocast_enabled(device):
        map_tensor = map_tensor.to(torch.get_autocast_dtype(device))
        memory_format = torch.channels_last
    return map_tensor.contiguous(memory_format=memory_format)


def full_precision(tensor: torch.Tensor):
    """A context that turns autocast off on `tensor`'s device: the layers inside run in fp32."""
    return torch.autocast(tensor.device.type, enabled=False)


def layer_init(layer: nn.Module, gain: float) -> nn.Module:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class Backbone(nn.Module):
    """Conv tower over the map, then one hidden layer over [conv features, state]."""

    def __init__(self, cfg: ModelConfig, input_shape: tuple[int, int, int]):
        super().__init__()
        in_ch, size, state_dim = input_shape
        layers = []
        for out_ch, k, s in zip(cfg.channels, cfg.kernel_sizes, cfg.strides):
            layers += [layer_init(nn.Conv2d(in_ch, out_ch, k, stride=s), math.sqrt(2)), nn.ReLU()]
            in_ch, size = out_ch, (size - k) // s + 1
        self.memory_format = MEMORY_FORMATS[cfg.conv_layout]
        self.conv = nn.Sequential(*layers).to(memory_format=self.memory_format)
        self.fc = nn.Sequential(layer_init(nn.Linear(in_ch * size * size + state_dim, cfg.hidden_size), math.sqrt(2)),
                                nn.ReLU())

    def forward(self, map_tensor: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """-> fp32 features (B, hidden_size)."""
        features = self.conv(conv_input(map_tensor, self.memory_format))  # a no-op when the caller converted it already
        with full_precision(state):
            # flattened in (C, H, W) order whatever the layout, as the first hidden layer expects
            return self.fc(torch.cat([features.flatten(1).float(), state.float()], dim=1))


class ActorCritic(nn.Module):
    def __init__(self, cfg: ModelConfig, input_shape: tuple[int, int, int]):
        """`input_shape`: (map channels, map size, state size) of the package's features."""
        super().__init__()
        cfg.validate(input_shape)
        self.cfg = cfg
        self.actor_backbone = Backbone(cfg, input_shape)
        self.critic_backbone = None if cfg.share_backbone else Backbone(cfg, input_shape)
        self.actor_core = self.critic_core = None
        head_features = cfg.hidden_size
        if cfg.core != "none":
            self.actor_core = RecurrentCore(cfg.core, cfg.hidden_size, cfg.core_size)
            if self.critic_backbone is not None:
                self.critic_core = RecurrentCore(cfg.core, cfg.hidden_size, cfg.core_size)
            head_features = cfg.core_size
        self.policy_head = action_head(cfg.action_head, head_features)
        self.value_head = layer_init(nn.Linear(head_features, 1), 1.0)
        self.value_norm = ValueNorm()  # return statistics (ppo.value_norm); identity when unused

    @property
    def value_backbone(self) -> Backbone:
        """The backbone the value head reads: the critic's own, or the shared one."""
        return self.actor_backbone if self.critic_backbone is None else self.critic_backbone

    def conv_input(self, map_tensor: torch.Tensor) -> torch.Tensor:
        """The map batch in the layout (and, under autocast, the dtype) the conv towers read."""
        return conv_input(map_tensor, self.actor_backbone.memory_format)

    @property
    def recurrent(self) -> bool:
        return self.actor_core is not None

    @property
    def core_state_size(self) -> int:
        """Numbers of one env's recurrent state (the actor's core, then the critic's); 0 without a core."""
        return self.cfg.core_state_size

    # --- frames (no core) ------------------------------------------------------------------------------

    def forward(self, map_tensor: torch.Tensor, state: torch.Tensor, legal: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """-> (masked logits (B, NUM_ACTIONS), value (B,)). `legal` is 1 for allowed actions."""
        map_tensor = self.conv_input(map_tensor)
        actor_features = self.actor_backbone(map_tensor, state)
        critic_features = actor_features if self.critic_backbone is None else self.critic_backbone(map_tensor, state)
        return self._masked_logits(actor_features, legal), self._value(critic_features)

    def policy(self, map_tensor: torch.Tensor, state: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        """-> masked logits (B, NUM_ACTIONS), the actor alone (acting needs no value)."""
        return self._masked_logits(self.actor_backbone(map_tensor, state), legal)

    def value(self, map_tensor: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """-> value (B,), the critic alone (the learner's GAE pass needs no policy)."""
        return self._value(self.value_backbone(map_tensor, state))

    # --- sequences (a recurrent core) ------------------------------------------------------------------

    def step(self, map_tensor: torch.Tensor, state: torch.Tensor, legal: torch.Tensor, core_state: torch.Tensor
             ) -> tuple[torch.Tensor, torch.Tensor]:
        """Acting, one frame per env: -> (masked logits (B, NUM_ACTIONS), the core state after
        it (B, core_state_size)). The critic's core steps too, so a segment can store its state."""
        seq = (map_tensor[:, None], state[:, None], legal[:, None])
        logits, _, core_state = self._unroll(*seq, core_state, policy=True, value=self.critic_core is not None)
        return logits[:, 0], core_state

    def sequence(self, map_tensor: torch.Tensor, state: torch.Tensor, legal: torch.Tensor, core_state: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        """Learning, N sequences of T frames ((N, T, ...)) from their initial core states (N,
        core_state_size): -> (masked logits (N, T, NUM_ACTIONS), values (N, T))."""
        logits, values, _ = self._unroll(map_tensor, state, legal, core_state, policy=True, value=True)
        return logits, values

    def sequence_value(self, map_tensor: torch.Tensor, state: torch.Tensor, core_state: torch.Tensor) -> torch.Tensor:
        """-> values (N, T) of N sequences, the critic alone (the learner's GAE pass)."""
        return self._unroll(map_tensor, state, None, core_state, policy=False, value=True)[1]

    def _unroll(self, map_tensor, state, legal, core_state, policy: bool, value: bool):
        """(logits or None, values or None, core state after the last frame) over (N, T, ...) frames."""
        if not self.recurrent:
            raise RuntimeError("this model has no recurrent core ([model] core = \"none\"): act and learn on frames")
        n, t = map_tensor.shape[:2]
        maps, states = self.conv_input(map_tensor.flatten(0, 1)), state.flatten(0, 1)
        actor_state, critic_state = core_state.split(
            [self.actor_core.state_size, core_state.shape[-1] - self.actor_core.state_size], dim=-1)

        def run(backbone, core, start):
            return core(backbone(maps, states).view(n, t, -1), start)

        logits = values = None
        if policy or self.critic_core is None:
            actor_out, actor_state = run(self.actor_backbone, self.actor_core, actor_state)
        if policy:
            logits = self._masked_logits(actor_out.flatten(0, 1), legal.flatten(0, 1)).view(n, t, -1)
        if value:
            if self.critic_core is None:
                critic_out = actor_out
            else:
                critic_out, critic_state = run(self.critic_backbone, self.critic_core, critic_state)
            values = self._value(critic_out.flatten(0, 1)).view(n, t)
        return logits, values, torch.cat([actor_state, critic_state], dim=-1)

    def initial_core_state(self, batch: int, device=None) -> torch.Tensor:
        """A new episode's core state: zeros (batch, core_state_size)."""
        return torch.zeros(batch, self.core_state_size, device=device)

    def _masked_logits(self, actor_features: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        with full_precision(actor_features):
            logits = self.policy_head(actor_features)
            return logits.masked_fill(~(legal > 0.5), MASKED_LOGIT)

    def _value(self, critic_features: torch.Tensor) -> torch.Tensor:
        with full_precision(critic_features):
            return self.value_head(critic_features).squeeze(-1)


class QNetwork(nn.Module):
    """Action values for the DQN package: one backbone, then a dueling head
    Q(s, a) = V(s) + A(s, a) - mean_a A(s, a) (Wang et al. 2016), or a plain linear head.
    Illegal actions are not masked here: the agent masks them where it takes a max or argmax."""

    def __init__(self, cfg: ModelConfig, input_shape: tuple[int, int, int], dueling: bool = True):
        """`input_shape`: (map channels, map size, state size) of the package's features."""
        super().__init__()
        cfg.validate(input_shape)
        if cfg.core != "none" or cfg.action_head != "joint":
            raise ValueError(f"model.core = {cfg.core!r}, model.action_head = {cfg.action_head!r}: the DQN package's "
                             "QNetwork has neither; they are options of the PPO package (core = \"none\", "
                             "action_head = \"joint\" here)")
        self.cfg = cfg
        self.dueling = dueling
        self.backbone = Backbone(cfg, input_shape)
        self.advantage_head = layer_init(nn.Linear(cfg.hidden_size, NUM_ACTIONS), 0.01)
        self.value_head = layer_init(nn.Linear(cfg.hidden_size, 1), 1.0) if dueling else None

    def forward(self, map_tensor: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """-> Q (B, NUM_ACTIONS)."""
        features = self.backbone(map_tensor, state)
        with full_precision(state):
            advantage = self.advantage_head(features)
            if self.value_head is None:
                return advantage
            return self.value_head(features) + advantage - advantage.mean(dim=1, keepdim=True)
