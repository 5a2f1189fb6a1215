"""The [model], [ppo] and [dqn] sections as dataclasses, with their checks. Torch-free: the
launcher and the tools validate a config (and name a bad key) without importing torch, and the
networks (agent.model, agent.core, agent.heads) and updates (agent.ppo, agent.dqn) read them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.limits import (MAX_BACKBONE_PARAMS, MAX_CHUNK_FRAMES, MAX_CORE_SIZE, MAX_COUNT, MAX_PASSES, MAX_VISITS,
                          check_at_most)
from feature.definition import SEGMENT_FRAMES
from feature.layout import MAP_CHANNELS, MAP_SIZE, STATE_DIM

#: (map channels, map size, state size) of the 2024 features; another package's features (the v2
#: package's feature.layout_v2) hand the model their own
INPUT_SHAPE = (MAP_CHANNELS, MAP_SIZE, STATE_DIM)
CORES = ("none", "lstm", "gru")  # agent.core
ACTION_HEADS = ("joint", "factored")  # agent.heads


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

    @property
    def core_state_size(self) -> int:
        """Numbers of the model's whole recurrent state: one core per backbone."""
        return core_state_size(self.core, self.core_size) * (1 if self.share_backbone else 2)

    def validate(self, input_shape: tuple[int, int, int] = INPUT_SHAPE):
        """Ranges, and that the conv tower fits `input_shape` (map channels, map size, state size)."""
        map_channels, map_size, state_dim = input_shape
        if self.core not in CORES:
            raise ValueError(f"core: got {self.core!r}, allowed: {' | '.join(CORES)}")
        if self.action_head not in ACTION_HEADS:
            raise ValueError(f"action_head: got {self.action_head!r}, allowed: {' | '.join(ACTION_HEADS)}")
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


@dataclass
class PPOConfig:
    learning_rate: float = 2.5e-4
    lr_schedule: Literal["constant", "linear"] = "constant"
    lr_final: float = 0.0  # where "linear" ends
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_steps: int = 128  # frames of one env per sample (a trajectory segment), at most SEGMENT_FRAMES
    clip_coef: float = 0.2
    dual_clip: float | None = None  # c > 1 bounds the loss of negative-advantage samples by c·|A|
    clip_vloss: bool = True
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    ent_schedule: Literal["constant", "linear"] = "constant"
    ent_coef_final: float = 0.0  # where "linear" ends
    schedule_samples: int = 10_000_000  # learned frames over which linear schedules run
    norm_adv: bool = True  # standardise advantages over each batch
    update_epochs: int = 4
    num_minibatches: int = 4
    minibatch_size: int | None = None  # set: fixed minibatch size instead of num_minibatches
    max_grad_norm: float = 0.5
    target_kl: float | None = None  # stop the update once approx-KL of a minibatch exceeds it
    value_norm: bool = False
    adam_eps: float = 1e-5
    # exploit() (evaluation): "greedy" the most probable action; "sample" a draw as in training;
    # "unstuck" greedy, but a draw on a cell the hero already ended unstuck_visits steps on (a
    # greedy policy that loops keeps coming back to the same cells and never times out otherwise)
    exploit_policy: Literal["greedy", "sample", "unstuck"] = "unstuck"
    unstuck_visits: int = 2
    # back_to_the_realm_v2's agent (ppo_v2): exploit() never takes a move or talent that lands on
    # the end it knows while chests are still live (reaching the end ends the episode), unless no
    # move is left (feature/layout_v2.py's end_guard). Training's masks are unchanged.
    exploit_end_guard: bool = True
    # the guard lifts after this many steps without a chest (0: never): a young policy that loops
    # ends with the chests it has instead of running out of steps
    exploit_end_guard_patience: int = 0

    def validate(self):
        if self.learning_rate <= 0 or self.lr_final < 0:
            raise ValueError("learning_rate must be > 0 and lr_final >= 0")
        if not (0 <= self.gamma <= 1 and 0 <= self.gae_lambda <= 1):
            raise ValueError("gamma and gae_lambda must be in [0, 1]")
        if self.dual_clip is not None and self.dual_clip <= 1:
            raise ValueError(f"dual_clip must be > 1 (or unset), got {self.dual_clip}")
        for key in ("num_steps", "update_epochs", "num_minibatches", "schedule_samples", "unstuck_visits"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1, got {getattr(self, key)}")
        if self.num_steps > SEGMENT_FRAMES:
            raise ValueError(f"num_steps ({self.num_steps}) must be <= {SEGMENT_FRAMES}, the frames a sample row "
                             "holds (feature.definition.SEGMENT_FRAMES)")
        if self.minibatch_size is not None and self.minibatch_size < 1:
            raise ValueError(f"minibatch_size must be >= 1 (or unset), got {self.minibatch_size}")
        check_at_most(self, {"update_epochs": MAX_PASSES, "num_minibatches": MAX_PASSES, "minibatch_size": MAX_COUNT,
                             "schedule_samples": MAX_COUNT, "unstuck_visits": MAX_VISITS,
                             "exploit_end_guard_patience": MAX_COUNT})
        if self.exploit_end_guard_patience < 0:
            raise ValueError(f"exploit_end_guard_patience must be >= 0 (0: never lifts), got "
                             f"{self.exploit_end_guard_patience}")
        for key in ("clip_coef", "vf_coef", "ent_coef", "ent_coef_final", "max_grad_norm", "adam_eps"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} must be >= 0, got {getattr(self, key)}")
        if self.target_kl is not None and self.target_kl <= 0:
            raise ValueError(f"target_kl must be > 0 (or unset), got {self.target_kl}")

    def max_frames(self, samples: int) -> int:
        """The most frames `samples` samples hold (a segment an episode end cut holds fewer)."""
        return samples * self.num_steps


@dataclass
class DQNConfig:
    learning_rate: float = 2.5e-4
    adam_eps: float = 1.5e-4
    gamma: float = 0.99
    n_step: int = 3  # rewards summed before bootstrapping
    double: bool = True  # the online network chooses the next action, the target network values it
    dueling: bool = True  # V(s) + A(s, a) - mean A (agent.model.QNetwork)
    target_update: Literal["hard", "soft"] = "hard"
    target_update_interval: int = 250  # "hard": train steps between copies
    tau: float = 0.005  # "soft": target <- tau * online + (1 - tau) * target after every train step
    huber_delta: float = 1.0
    # learn()'s replay priority is |TD error| capped at priority_clip (0: uncapped). At huber_delta
    # it is the size of each sample's Huber-loss gradient: rare large errors (a timeout's terminal
    # penalty) cannot fill the prioritized batches with samples that move Q by at most delta.
    priority_clip: float = 0.0
    max_grad_norm: float = 10.0
    epsilon_start: float = 1.0  # epsilon-greedy exploration of predict(), linear in the run's learned samples
    epsilon_final: float = 0.05
    epsilon_decay_samples: int = 300_000
    chunk_frames: int = 64  # frames an env collects before they become samples (the last n_step - 1 wait for more)
    # exploit() (evaluation): "greedy" the legal action of the highest value; "unstuck" the same,
    # but a random legal action on a cell the hero already ended unstuck_visits steps on (greedy
    # Q-policies loop between a few cells until the step limit, and the game then scores 0)
    exploit_policy: Literal["greedy", "unstuck"] = "unstuck"
    unstuck_visits: int = 2

    def validate(self):
        if self.learning_rate <= 0 or self.adam_eps <= 0:
            raise ValueError("learning_rate and adam_eps must be > 0")
        if not 0 <= self.gamma <= 1:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma}")
        for key in ("n_step", "target_update_interval", "epsilon_decay_samples", "unstuck_visits"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1, got {getattr(self, key)}")
        if self.chunk_frames < self.n_step:
            raise ValueError(f"chunk_frames ({self.chunk_frames}) must be >= n_step ({self.n_step})")
        check_at_most(self, {"chunk_frames": MAX_CHUNK_FRAMES, "target_update_interval": MAX_COUNT,
                             "epsilon_decay_samples": MAX_COUNT, "unstuck_visits": MAX_VISITS})
        if not 0 < self.tau <= 1:
            raise ValueError(f"tau must be in (0, 1], got {self.tau}")
        if self.target_update not in ("hard", "soft"):
            raise ValueError(f"target_update: got {self.target_update!r}, allowed: 'hard', 'soft'")
        for key in ("epsilon_start", "epsilon_final"):
            if not 0 <= getattr(self, key) <= 1:
                raise ValueError(f"{key} must be in [0, 1], got {getattr(self, key)}")
        for key in ("huber_delta", "max_grad_norm"):
            if getattr(self, key) <= 0:
                raise ValueError(f"{key} must be > 0, got {getattr(self, key)}")
        if self.priority_clip < 0:
            raise ValueError(f"priority_clip must be >= 0 (0: uncapped), got {self.priority_clip}")

    def epsilon(self, samples_learned: int) -> float:
        progress = min(1.0, samples_learned / self.epsilon_decay_samples)
        return self.epsilon_start + (self.epsilon_final - self.epsilon_start) * progress
