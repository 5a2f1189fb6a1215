"""The DQN-family update: Double DQN targets over n-step returns, a Huber loss weighted by
prioritized replay's importance-sampling weights, and the new priorities |TD error|.

A sample (feature.back_to_the_realm.dqn_plus_definition) carries the n-step return R = sum_k gamma^k r_{t+k} and the
factor `discount` that multiplies the bootstrap: gamma^m after m steps when the episode went on
(the chunk ended or the step limit truncated it), 0 when it terminated. So

    y = R + discount * Q_target(s', argmax_{a legal in s'} Q_online(s', a))       (Double DQN)
    y = R + discount * max_{a legal in s'} Q_target(s', a)                         (double = false)

Illegal actions of s' are excluded from the argmax and the max. The target network is copied
from the online one every `target_update_interval` train steps ("hard") or moved toward it by
`tau` every step ("soft").
"""
from __future__ import annotations


import torch
from torch import nn
from torch.nn import functional as F

from agent.dqn_options import DQNConfig  # noqa: F401 (its home is agent.dqn_options)



NEG_INF = float("-inf")


def masked_argmax(q: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """argmax over the legal actions (legal: 1 allowed, 0 not) -> (B,) long."""
    return q.masked_fill(legal < 0.5, NEG_INF).argmax(dim=1)


def td_target(ret: torch.Tensor, discount: torch.Tensor, next_q_target: torch.Tensor, next_legal: torch.Tensor,
              next_q_online: torch.Tensor | None) -> torch.Tensor:
    """y = R + discount * Q_target(s', a*), a* chosen by `next_q_online` (Double DQN) or, when it
    is None, by the target values themselves; a* is always a legal action of s'."""
    chooser = next_q_online if next_q_online is not None else next_q_target
    best = masked_argmax(chooser, next_legal)
    return ret + discount * next_q_target.gather(1, best.unsqueeze(1)).squeeze(1)


def dqn_update(model: nn.Module, target_model: nn.Module, optimizer: torch.optim.Optimizer,
               batch: dict[str, torch.Tensor], cfg: DQNConfig) -> tuple[dict[str, float], torch.Tensor]:
    """One gradient step on one batch -> (statistics, replay priority per sample: |TD error|,
    capped at cfg.priority_clip when that is set)."""
    with torch.no_grad():
        next_q_target = target_model(batch["next_map"], batch["next_state"])
        next_q_online = model(batch["next_map"], batch["next_state"]) if cfg.double else None
        target = td_target(batch["ret"], batch["discount"], next_q_target, batch["next_legal"], next_q_online)
    q = model(batch["map"], batch["state"]).gather(1, batch["action"].unsqueeze(1)).squeeze(1)
    td = target - q
    weight = batch.get("is_weight")
    per_sample = F.huber_loss(q, target, reduction="none", delta=cfg.huber_delta)
    loss = (per_sample * weight).mean() if weight is not None else per_sample.mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
    optimizer.step()
    td_abs = td.detach().abs()
    stats = {"loss": float(loss.detach()), "q": float(q.detach().mean()), "target": float(target.mean()),
             "td_abs": float(td_abs.mean()), "grad_norm": float(grad_norm)}
    return stats, td_abs.clamp(max=cfg.priority_clip) if cfg.priority_clip > 0 else td_abs


@torch.no_grad()
def sync_target(model: nn.Module, target_model: nn.Module, cfg: DQNConfig, train_step: int) -> None:
    """Move the target network after train step `train_step` (1-based)."""
    if cfg.target_update == "soft":
        for target, online in zip(target_model.parameters(), model.parameters()):
            target.lerp_(online, cfg.tau)
    elif train_step % cfg.target_update_interval == 0:
        target_model.load_state_dict(model.state_dict())
