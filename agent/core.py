"""The policy's recurrent core ([model] core = "lstm" | "gru"): one LSTM or GRU layer between a
backbone's hidden layer and its head, so the policy can remember what earlier steps of the
episode showed (a chest seen and left, a dead end).

Its state travels as one flat float32 vector per env (`state_size` numbers: an LSTM's h then c,
a GRU's h): the agent hands it out with each action (ActData.core_state), the episode loop hands
it back with the next observation of the same episode (episodes.runner), a new episode starts
from zeros, and each training segment stores the state it started from (feature.back_to_the_realm.ppo_definition).
Acting steps it one frame at a time (as a cell); the learner unrolls a whole segment from the
stored state.
Both are the same `forward` over (B, T, F) features, in fp32 whatever the learner's autocast.
"""
from __future__ import annotations

import torch
from torch import nn

from agent.model_options import CORES, core_state_size


class RecurrentCore(nn.Module):
    def __init__(self, kind: str, in_features: int, size: int):
        super().__init__()
        if kind not in ("lstm", "gru"):
            raise ValueError(f"model.core: got {kind!r}, allowed: {' | '.join(CORES)}")
        self.kind, self.size = kind, size
        self.rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(in_features, size, batch_first=True)
        for name, param in self.rnn.named_parameters():  # CleanRL's recurrent PPO: orthogonal, zero bias
            if name.startswith("bias"):
                nn.init.zeros_(param)
            else:
                nn.init.orthogonal_(param, 1.0)

    @property
    def state_size(self) -> int:
        return core_state_size(self.kind, self.size)

    def forward(self, features: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """features (B, T, F), state (B, state_size) before the first step -> (outputs (B, T,
        size), state (B, state_size) after the last step)."""
        with torch.autocast(features.device.type, enabled=False):
            features, state = features.float(), state.float()
            if features.shape[1] == 1:
                out, state = self._cell(features[:, 0], state)
                return out[:, None], state
            if self.kind == "gru":
                out, h = self.rnn(features, state[None].contiguous())
                return out, h[0]
            h, c = state.split(self.size, dim=-1)
            out, (h, c) = self.rnn(features, (h[None].contiguous(), c[None].contiguous()))
            return out, torch.cat([h[0], c[0]], dim=-1)

    def _cell(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One step (acting) with the layer's own weights as a cell: the same numbers as the layer
        on a one-frame sequence, without the sequence kernel's fixed cost (~3x the step on CPU)."""
        rnn = self.rnn
        weights = (rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0)
        if self.kind == "gru":
            h = torch.gru_cell(x, state.contiguous(), *weights)
            return h, h
        h, c = torch.lstm_cell(x, tuple(state.split(self.size, dim=-1)), *weights)
        return h, torch.cat([h, c], dim=-1)
