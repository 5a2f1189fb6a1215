"""Throughput of the network on this machine's CPU, and how much of the machine the PPO update uses.

    python tools/bench_model.py [--threads 2] [--seconds 3] [--config conf/leaderboard.toml] [--set ppo.update_epochs=2]

Prints one `name: value` line per figure:
  predict_b{1,16,64}_samples_per_s  Agent.predict on ObsData lists (stacking, forward, sampling):
                                    what the episode loop pays per step
  update_flop_per_sample            FLOPs of the learner's PPO update per trained sample (epochs x
                                    forward + backward over the config's batch and minibatches)
  update_samples_per_s              samples per second through Agent.learn's update
  update_gflop_per_s                what the update reaches
  matmul_gflop_per_s                this machine's dense fp32 matmul rate, same threads, same run
  flop_ratio                        update / matmul (last line): the share of the machine the learner uses
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from agent.agent import Agent
from agent.ppo import ppo_update
from feature.definition import ObsData
from feature.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM, legal_mask
from workflow.config import load_config

MATMUL_SIZE = 1024


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


def update_batch(batch: int) -> dict[str, torch.Tensor]:
    """A synthetic batch with the fields and shapes Agent.learn hands ppo_update."""
    g = torch.Generator().manual_seed(0)
    return {"map": torch.rand((batch,) + MAP_SHAPE, generator=g), "state": torch.rand((batch, STATE_DIM), generator=g),
            "legal": torch.ones(batch, NUM_ACTIONS), "action": torch.randint(0, NUM_ACTIONS, (batch,), generator=g),
            "log_prob": torch.full((batch,), -float(np.log(NUM_ACTIONS))), "value": torch.zeros(batch),
            "advantage": torch.randn(batch, generator=g), "ret": torch.randn(batch, generator=g)}


def bench_update(agent: Agent, batch_size: int, seconds: float) -> tuple[float, float]:
    """(FLOPs per trained sample, samples per second) of ppo_update on `batch_size` samples."""
    batch, cfg = update_batch(batch_size), agent.ppo_cfg
    agent.model.train()

    def update():
        ppo_update(agent.model, agent.optimizer, batch, cfg, 0.0, None, agent.shuffle_generator)

    counter = FlopCounterMode(display=False)
    with counter:
        update()
    return counter.get_total_flops() / batch_size, batch_size * _timed(update, seconds, repeats=3)


def bench_matmul(seconds: float, n: int = MATMUL_SIZE) -> float:
    """Dense fp32 matmul FLOP/s (2 n^3 per product) on the current torch threads."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(n, n, generator=g), torch.rand(n, n, generator=g)
    out = torch.empty(n, n)
    return 2 * n ** 3 * _timed(lambda: torch.mm(a, b, out=out), seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: the config's "
                                                                    "app.torch_num_threads, the learner's)")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per figure")
    parser.add_argument("--config", default=None, help="TOML config whose [model] [ppo] and batch size to measure "
                                                       "(default conf/configure_app.toml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    args = parser.parse_args()
    cfg = load_config(args.config, args.overrides)
    threads = args.threads or cfg.app.torch_num_threads
    torch.set_num_threads(threads)
    agent = Agent(settings=cfg, seed=0)
    print(f"threads: {threads}")
    print(f"parameters: {sum(p.numel() for p in agent.model.parameters())}")
    for batch in (1, 16, 64):
        print(f"predict_b{batch}_samples_per_s: {bench_predict(agent, batch, args.seconds):.0f}")
    flop_per_sample, samples_per_s = bench_update(agent, cfg.app.train_batch_size, args.seconds * 3)
    matmul = bench_matmul(args.seconds)
    print(f"update_flop_per_sample: {flop_per_sample / 1e6:.1f}M")
    print(f"update_samples_per_s: {samples_per_s:.0f}")
    print(f"update_gflop_per_s: {flop_per_sample * samples_per_s / 1e9:.1f}")
    print(f"matmul_gflop_per_s: {matmul / 1e9:.1f}")
    print(f"flop_ratio: {flop_per_sample * samples_per_s / matmul:.3f}")


if __name__ == "__main__":
    main()
