"""Throughput of the default network on this machine's CPU.

    python tools/bench_model.py [--threads 1] [--seconds 3]

Prints one `name: value` line per figure:
  predict_b{1,16,64}_samples_per_s  Agent.predict on ObsData lists (stacking, forward, sampling):
                                    what the episode loop pays per step
  train_b256_samples_per_s          forward + backward + Adam step on minibatches of 256
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agent.agent import Agent
from agent.config import Settings
from feature.definition import ObsData
from feature.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM, legal_mask


def _timed(fn, seconds: float, repeats: int = 5) -> float:
    """Calls per second of `fn`: the best of `repeats` windows sharing `seconds` (after a warm-up
    call). The best window is the least disturbed by other work on a shared machine."""
    fn()
    best = 0.0
    for _ in range(repeats):
        calls, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / repeats or calls < 2:
            fn()
            calls += 1
        best = max(best, calls / elapsed)
    return best


def bench_predict(agent: Agent, batch: int, seconds: float) -> float:
    rng = np.random.default_rng(0)
    obs = [ObsData(map=rng.random(MAP_SHAPE, dtype=np.float32), state=rng.random(STATE_DIM, dtype=np.float32),
                   legal=legal_mask([1, 1])) for _ in range(batch)]
    return batch * _timed(lambda: agent.predict(obs), seconds)


def bench_train(agent: Agent, batch: int, seconds: float) -> float:
    g = torch.Generator().manual_seed(0)
    map_t, state = torch.rand((batch,) + MAP_SHAPE, generator=g), torch.rand((batch, STATE_DIM), generator=g)
    legal, action = torch.ones(batch, NUM_ACTIONS), torch.randint(0, NUM_ACTIONS, (batch,), generator=g)
    ret = torch.randn(batch, generator=g)
    model, opt = agent.model, agent.optimizer
    model.train()

    def step():
        logits, value = model(map_t, state, legal)
        log_prob = torch.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(1)
        loss = -log_prob.mean() + 0.5 * ((value - ret) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()

    return batch * _timed(step, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per figure")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    agent = Agent(settings=Settings(), seed=0)
    params = sum(p.numel() for p in agent.model.parameters())
    print(f"threads: {args.threads}")
    print(f"parameters: {params}")
    for batch in (1, 16, 64):
        print(f"predict_b{batch}_samples_per_s: {bench_predict(agent, batch, args.seconds):.0f}")
    print(f"train_b256_samples_per_s: {bench_train(agent, 256, args.seconds):.0f}")


if __name__ == "__main__":
    main()
