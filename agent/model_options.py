"""The [model] section as a dataclass, with its checks, and the names it allows. Torch-free (as
agent.ppo_options and agent.dqn_options): the launcher and the tools validate a config, and name
a bad key, without importing torch; the networks (agent.model, agent.core, agent.heads) read it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.limits import MAX_BACKBONE_PARAMS, MAX_CORE_SIZE

CORES = ("none", "lstm", "gru")  # agent.core
ACTION_HEADS = ("joint", "factored")  # agent.heads
CONV_LAYOUTS = ("channels_last", "plain")  # agent.model.MEMORY_FORMATS


def core_state_size(kind: str, size: int) -> int:
    """Numbers in one core's state: an LSTM's h and c, a GRU's h, nothing without a core."""
    return {"none": 0, "lstm": 2 * size, "gru": size}[kind]


@dataclass
class ModelConfig:
    channels: list[int] = field(default_factory=lambda: [16, 32, 32])
    kernel_sizes: list[int] = field(default_factory=lambda: [5, 3, 3])
    strides: list[int] = field(default_factory=lambda: [2, 2, 2])
    hidden_size: int = 256
    share_backbone: bool = True
    # recurrent core after the hidden layer (agent.core): "none", or an LSTM / GRU of core_size units
    core: Literal["none", "lstm", "gru"] = "none"
    core_size: int = 128
    # leading frames of a segment that continues an episode which only warm the core's state up
    # (no loss on them): the episode loop repeats the previous segment's last burn_in frames
    burn_in: int = 0
    action_head: Literal["joint", "factored"] = "joint"  # agent.heads
    # the conv towers' memory layout: channels-last (NHWC), oneDNN's fast one for towers of 16+
    # channels; "plain" (NCHW) runs a few-channel tower on a large map faster in fp32 (autocast's
    # bf16 towers read channels-last either way). The same function, to float rounding
    # (docs/04-model-options.md)
    conv_layout: Literal["channels_last", "plain"] = "channels_last"

    @property
    def core_state_size(self) -> int:
        """Numbers of the model's whole recurrent state: one core per backbone."""
        return core_state_size(self.core, self.core_size) * (1 if self.share_backbone else 2)

    def validate(self, input_shape: tuple[int, int, int] | None = None):
        """Ranges; with `input_shape` (map channels, map size, state size: a game's features, which
        its package's settings hand over) also that the conv tower fits it."""
        if self.core not in CORES:
            raise ValueError(f"core: got {self.core!r}, allowed: {' | '.join(CORES)}")
        if self.action_head not in ACTION_HEADS:
            raise ValueError(f"action_head: got {self.action_head!r}, allowed: {' | '.join(ACTION_HEADS)}")
        if self.conv_layout not in CONV_LAYOUTS:
            raise ValueError(f"conv_layout: got {self.conv_layout!r}, allowed: {' | '.join(CONV_LAYOUTS)}")
        if not 1 <= self.core_size <= MAX_CORE_SIZE:
            raise ValueError(f"core_size must be in 1..{MAX_CORE_SIZE}, got {self.core_size}")
        if self.burn_in < 0:
            raise ValueError(f"burn_in must be >= 0, got {self.burn_in}")
        if self.burn_in and self.core == "none":
            raise ValueError(f"burn_in = {self.burn_in} warms a recurrent core up: it needs core = \"lstm\" or \"gru\"")
        if not self.channels:
            raise ValueError("channels needs at least one conv layer")
        if not len(self.channels) == len(self.kernel_sizes) == len(self.strides):
            raise ValueError(f"channels, kernel_sizes and strides need one entry per conv layer, got "
                             f"{len(self.channels)}, {len(self.kernel_sizes)}, {len(self.strides)}")
        if min(self.channels + self.kernel_sizes + self.strides + [self.hidden_size]) < 1:
            raise ValueError("channels, kernel_sizes, strides and hidden_size must be >= 1")
        if input_shape is not None:
            self._check_fits(*input_shape)

    def _check_fits(self, map_channels: int, map_size: int, state_dim: int) -> None:
        if max(self.kernel_sizes + self.strides) > map_size:
            raise ValueError(f"kernel_sizes and strides must be <= {map_size} (the map's width), got "
                             f"{self.kernel_sizes}, {self.strides}")
        size, in_ch, params = map_size, map_channels, 0
        for out_ch, k, s in zip(self.channels, self.kernel_sizes, self.strides):
            size = (size - k) // s + 1
            if size < 1:
                raise ValueError(f"the conv tower shrinks the {map_size}×{map_size} map below 1×1; "
                                 f"use smaller kernels or strides")
            params, in_ch = params + (in_ch * k * k + 1) * out_ch, out_ch
        params += (in_ch * size * size + state_dim + 1) * self.hidden_size
        if params > MAX_BACKBONE_PARAMS:
            raise ValueError(f"channels {self.channels} and hidden_size {self.hidden_size} make a backbone of "
                             f"{params:,} parameters: at most {MAX_BACKBONE_PARAMS:,}")
