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

import torch
from torch import nn

from agent.ppo_options import PPOConfig  # noqa: F401 (its home is agent.ppo_options)
from agent.value_norm import ValueNorm



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
    maps = batch["map"] if train is not None else model.conv_input(batch["map"])  # frames: converted once per batch
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
