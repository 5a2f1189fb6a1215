"""The [dqn] section as a dataclass, with its checks. Torch-free: see agent.model_options."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
