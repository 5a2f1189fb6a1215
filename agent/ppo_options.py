"""The [ppo] section as a dataclass, with its checks. Torch-free: see agent.model_options.
It reads feature.segments' SEGMENT_FRAMES, which every game's PPO package shares."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent.limits import MAX_COUNT, MAX_PASSES, MAX_VISITS, check_at_most
from feature.segments import SEGMENT_FRAMES


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
    # back_to_the_realm_v2's agent: exploit() never takes a move or talent that lands on
    # the end it knows while chests are still live (reaching the end ends the episode), unless no
    # move is left (feature/back_to_the_realm_v2/layout.py's end_guard). Training's masks are unchanged.
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
                             "holds (feature.segments.SEGMENT_FRAMES)")
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


def check_ppo_sizes(model, ppo: PPOConfig, core_state_dim: int) -> None:
    """What every PPO package's settings check ([model] with [ppo]): the recurrent state fits a
    sample row, and a segment continued with burn-in frames keeps a frame to train on."""
    if model.core_state_size > core_state_dim:
        raise ValueError(f"model.core = {model.core!r} with model.core_size {model.core_size} (share_backbone = "
                         f"{model.share_backbone}) makes a state of {model.core_state_size} numbers; a sample row "
                         f"has room for {core_state_dim} (feature.segments.CORE_STATE_DIM): lower core_size")
    if model.burn_in >= ppo.num_steps:
        raise ValueError(f"model.burn_in ({model.burn_in}) must be < ppo.num_steps ({ppo.num_steps}): "
                         "a segment repeats burn_in frames of the one before and trains on the rest")
