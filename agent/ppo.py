"""The PPO update (clipped surrogate, CleanRL style): `ppo_loss` is the objective of one
minibatch, `ppo_update` runs epochs × minibatches over one batch of frames (the Agent flattens
its segments' frames and adds their values, advantages and returns, agent.gae). A recurrent
model's batch is sequences instead (Agent.sequence_batch: (N, T, ...) with each one's initial
core state and a `train` mask): minibatches are then whole sequences, unrolled from their
stored state, and the loss reads their `train` frames (CleanRL's recurrent PPO).

Linear schedules (learning rate, entropy coefficient) run over `schedule_samples` learned
frames; the caller passes `progress` = frames learned so far / schedule_samples (clipped to 1).
With `value_norm` the critic learns returns standardised by running statistics (`ValueNorm`);
values handed to GAE are de-normalised by the Agent, so returns stay in reward units everywhere
outside the critic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from agent.limits import MAX_COUNT, MAX_PASSES, MAX_VISITS, check_at_most
from agent.model import conv_input
from agent.value_norm import ValueNorm
from feature.definition import SEGMENT_FRAMES


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
                             "schedule_samples": MAX_COUNT, "unstuck_visits": MAX_VISITS})
        for key in ("clip_coef", "vf_coef", "ent_coef", "ent_coef_final", "max_grad_norm", "adam_eps"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} must be >= 0, got {getattr(self, key)}")
        if self.target_kl is not None and self.target_kl <= 0:
            raise ValueError(f"target_kl must be > 0 (or unset), got {self.target_kl}")

    def max_frames(self, samples: int) -> int:
        """The most frames `samples` samples hold (a segment an episode end cut holds fewer)."""
        return samples * self.num_steps


def scheduled(start: float, final: float, schedule: str, progress: float) -> float:
    return start if schedule == "constant" else start + (final - start) * min(max(progress, 0.0), 1.0)


def ppo_loss(new_log_prob, entropy, new_value, old_log_prob, old_value, advantage, ret, cfg: PPOConfig,
             ent_coef: float) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Loss of one minibatch. Values and returns in the critic's units (normalised with value_norm)."""
    log_ratio = new_log_prob - old_log_prob
    ratio = log_ratio.exp()
    surrogate = torch.min(ratio * advantage, ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef) * advantage)
    if cfg.dual_clip is not None:  # bound how far a bad action's huge ratio can push the loss
        surrogate = torch.where(advantage < 0, torch.max(surrogate, cfg.dual_clip * advantage), surrogate)
    policy_loss = -surrogate.mean()
    if cfg.clip_vloss:
        clipped = old_value + (new_value - old_value).clamp(-cfg.clip_coef, cfg.clip_coef)
        value_loss = 0.5 * torch.max((new_value - ret) ** 2, (clipped - ret) ** 2).mean()
    else:
        value_loss = 0.5 * ((new_value - ret) ** 2).mean()
    entropy_mean = entropy.mean()
    loss = policy_loss - ent_coef * entropy_mean + cfg.vf_coef * value_loss
    with torch.no_grad():
        stats = {
            "policy_loss": policy_loss.detach(),
            "value_loss": value_loss.detach(),
            "entropy": entropy_mean.detach(),
            "approx_kl": ((ratio - 1) - log_ratio).mean(),  # low-variance KL estimator (Schulman)
            "clip_frac": ((ratio - 1).abs() > cfg.clip_coef).float().mean(),
        }
    return loss, stats


def minibatch_forward(model: nn.Module, batch: dict[str, torch.Tensor], maps: torch.Tensor, idx: torch.Tensor):
    """The model on minibatch `idx` of a batch of frames or of sequences: (logits, values) of
    the frames the loss reads, and `pick`, which takes the same frames of any per-frame entry."""
    if "train" not in batch:
        logits, values = model(maps[idx], batch["state"][idx], batch["legal"][idx])
        return logits, values, lambda x: x[idx]
    train = batch["train"][idx]
    logits, values = model.sequence(maps[idx], batch["state"][idx], batch["legal"][idx], batch["core_state"][idx])
    return logits[train], values[train], lambda x: x[idx][train]


def ppo_update(model: nn.Module, optimizer: torch.optim.Optimizer, batch: dict[str, torch.Tensor], cfg: PPOConfig,
               progress: float, value_norm: ValueNorm | None, generator: torch.Generator) -> dict[str, float]:
    """Epochs × minibatches of PPO over `batch`, one entry per frame (map, state, legal, action,
    log_prob, value, advantage, ret), or per sequence with `core_state` and `train` (module
    docstring); `value` is what value clipping keeps the new values near."""
    lr = scheduled(cfg.learning_rate, cfg.lr_final, cfg.lr_schedule, progress)
    ent_coef = scheduled(cfg.ent_coef, cfg.ent_coef_final, cfg.ent_schedule, progress)
    for group in optimizer.param_groups:
        group["lr"] = lr
    train = batch.get("train")  # sequences: the frames the loss reads; frames: every one

    def trained(x: torch.Tensor) -> torch.Tensor:
        return x if train is None else x[train]

    returns, old_values = batch["ret"], batch["value"]
    if value_norm is not None:
        value_norm.update(trained(returns))
        returns, old_values = value_norm.normalize(returns), value_norm.normalize(old_values)
    advantage = batch["advantage"]
    if cfg.norm_adv and trained(advantage).numel() > 1:
        advantage = (advantage - trained(advantage).mean()) / (trained(advantage).std() + 1e-8)
    n = len(advantage)  # frames, or sequences
    maps = batch["map"] if train is not None else conv_input(batch["map"])  # frames: converted once per batch
    mb_size = math.ceil(n / cfg.num_minibatches)
    if cfg.minibatch_size:  # frames; whole sequences of about as many frames
        mb_size = cfg.minibatch_size if train is None else max(1, cfg.minibatch_size // train.shape[1])

    sums: dict[str, float] = {}
    minibatches, skipped, stop = 0, 0, False
    for _ in range(cfg.update_epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, mb_size):
            idx = order[start:start + mb_size]
            logits, new_value, pick = minibatch_forward(model, batch, maps, idx)
            dist = torch.distributions.Categorical(logits=logits)
            loss, stats = ppo_loss(dist.log_prob(pick(batch["action"])), dist.entropy(), new_value,
                                   pick(batch["log_prob"]), pick(old_values), pick(advantage), pick(returns), cfg,
                                   ent_coef)
            optimizer.zero_grad()
            loss.backward()
            stats["grad_norm"] = nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            if not (torch.isfinite(loss) and torch.isfinite(stats["grad_norm"])):
                optimizer.zero_grad()  # a non-finite loss or gradient is never applied
                skipped += 1
                continue
            optimizer.step()
            for key, value in stats.items():
                sums[key] = sums.get(key, 0.0) + float(value)
            minibatches += 1
            if cfg.target_kl is not None and float(stats["approx_kl"]) > cfg.target_kl:
                stop = True
                break
        if stop:
            break

    metrics = {key: value / minibatches for key, value in sums.items()} if minibatches else {}
    batch_returns, batch_values = trained(batch["ret"]), trained(batch["value"])
    ret_var = batch_returns.var(unbiased=False)
    if ret_var > 0:  # undefined when every return is the same: left out, since NaN reads as a broken update
        metrics["explained_variance"] = float(1 - (batch_returns - batch_values).var(unbiased=False) / ret_var)
    metrics.update(lr=lr, ent_coef=ent_coef, minibatches=float(minibatches), early_stop=float(stop),
                   skipped_minibatches=float(skipped))
    return metrics
