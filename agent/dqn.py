"""The DQN-family update: Double DQN targets over n-step returns, a Huber loss weighted by
prioritized replay's importance-sampling weights, and the new priorities |TD error|.

A sample (feature.dqn_definition) carries the n-step return R = sum_k gamma^k r_{t+k} and the
factor `discount` that multiplies the bootstrap: gamma^m after m steps when the episode went on
(the chunk ended or the step limit truncated it), 0 when it terminated. So

    y = R + discount * Q_target(s', argmax_{a legal in s'} Q_online(s', a))       (Double DQN)
    y = R + discount * max_{a legal in s'} Q_target(s', a)                         (double = false)

Illegal actions of s' are excluded from the argmax and the max. The target network is copied
from the online one every `target_update_interval` train steps ("hard") or moved toward it by
`tau` every step ("soft").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn
from torch.nn import functional as F

from agent.limits import MAX_CHUNK_FRAMES, MAX_COUNT, MAX_VISITS, check_at_most


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
