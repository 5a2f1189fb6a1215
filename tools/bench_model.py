"""Throughput of the network on this machine, in both precisions, and how much of the machine the
PPO update uses.

    python tools/bench_model.py [--threads 2] [--seconds 3] [--config conf/leaderboard.toml] [--set ppo.update_epochs=2]
                                [--device cuda]

Prints one `name: value` line per figure:
  precision_auto                    what `[app] precision = "auto"` picks here, and why
  predict_b{1,16,64}_samples_per_s  Agent.predict on ObsData lists (stacking, forward, sampling):
                                    what the episode loop pays per step (fp32, as the aisrv run it)
  predict_b{1,16,64}_bf16_samples_per_s  the same under bf16 autocast
  update_flop_per_frame             FLOPs of the learner's PPO update per trained frame (epochs x
                                    forward + backward over the config's batch, train_batch_size
                                    full segments of ppo.num_steps frames, and minibatches)
  matmul_{fp32,bf16}_gflop_per_s    this machine's dense matmul peak (2048 x 2048; 8192 on a GPU), same threads
  update_{fp32,bf16}_frames_per_s   frames per second through ppo_update
  update_{fp32,bf16}_gflop_per_s    what the update reaches
  flop_ratio_{fp32,bf16}            update / matmul peak of the same precision
  advantages_{fp32,bf16}_frames_per_s  the learner's pass before ppo_update (Agent.update_batch:
                                    the critic on every frame and bootstrap observation, GAE)
  update speed-up bf16/fp32         (last line) the learner's gain from bf16 on this machine

The two precisions are timed in alternating windows (best window each), so other work on a
shared machine weighs on both alike. `--device cuda` measures the network where `[app] device`
puts the learner (predict stays on the CPU, where the aisrv act); each window then waits for the
GPU's queued work before it is timed.
"""
from __future__ import annotations

import argparse
import time
from typing import Callable

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from agent.back_to_the_realm.ppo_agent import Agent
from agent.ppo import ppo_update
from feature.back_to_the_realm.ppo_definition import CORE_STATE_DIM, SEGMENT_FRAMES, ObsData
from feature.back_to_the_realm.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM, legal_mask
from workflow.allocator import keep_freed_memory
from workflow.config import load_config
from workflow.precision import Precision, autocast, resolve_precision

MATMUL_SIZE = {"cpu": 2048, "cuda": 8192}  # a GPU's peak needs a larger product
FP32, BF16 = Precision(torch.float32, "measured"), Precision(torch.bfloat16, "measured")


def _rates(fns: dict[str, Callable[[], None]], seconds: float, repeats: int = 5,
           sync: Callable[[], None] = lambda: None) -> dict[str, float]:
    """Calls per second of each function: the best of `repeats` windows of `seconds / repeats`
    each, the functions' windows alternating (after a warm-up call each). The best window is the
    least disturbed by other work on a shared machine; alternating spreads that work over all.
    `sync` waits for a device's queued work after each call: else a GPU's launch queue fills with
    a thousand calls that the window's clock never saw run."""
    for fn in fns.values():
        fn()
        sync()
    best = dict.fromkeys(fns, 0.0)
    for _ in range(repeats):
        for name, fn in fns.items():
            calls, start = 0, time.perf_counter()
            while (elapsed := time.perf_counter() - start) < seconds / repeats or calls < 2:
                fn()
                sync()
                calls += 1
            best[name] = max(best[name], calls / elapsed)
    return best


def device_sync(device: str) -> Callable[[], None]:
    """What waits for `device`'s queued kernels (nothing on the CPU)."""
    return (lambda: torch.cuda.synchronize(device)) if device.startswith("cuda") else (lambda: None)


def bench_predict(agent: Agent, batch: int, seconds: float) -> dict[str, float]:
    """Samples per second of Agent.predict on `batch` observations, fp32 and under bf16 autocast."""
    rng = np.random.default_rng(0)
    obs = [ObsData(map=rng.random(MAP_SHAPE, dtype=np.float32), state=rng.random(STATE_DIM, dtype=np.float32),
                   legal=legal_mask([1, 1])) for _ in range(batch)]

    def predict(precision):
        def call():
            with autocast(precision, "cpu"):
                agent.predict(obs)
        return call
    rates = _rates({"fp32": predict(FP32), "bf16": predict(BF16)}, seconds)
    return {name: batch * rate for name, rate in rates.items()}


def segment_batch(segments: int, frames: int, device: str = "cpu") -> dict[str, torch.Tensor]:
    """`segments` synthetic segments of `frames` frames each, as Agent.learn stacks them, on `device`."""
    g = torch.Generator().manual_seed(0)
    shape = (segments, SEGMENT_FRAMES)
    mask = (torch.arange(SEGMENT_FRAMES) < frames).float().expand(shape)
    batch = {"map": torch.rand(shape + MAP_SHAPE, generator=g), "state": torch.rand(shape + (STATE_DIM,), generator=g),
             "legal": torch.ones(shape + (NUM_ACTIONS,)), "action": torch.randint(0, NUM_ACTIONS, shape, generator=g),
             "log_prob": torch.full(shape, -float(np.log(NUM_ACTIONS))), "reward": torch.randn(shape, generator=g),
             "terminated": torch.zeros(shape), "mask": mask, "next_map": torch.rand((segments,) + MAP_SHAPE, generator=g),
             "next_state": torch.rand((segments, STATE_DIM), generator=g), "next_legal": torch.ones(segments, NUM_ACTIONS),
             "core_state": torch.zeros(segments, CORE_STATE_DIM), "burn_in": torch.zeros(segments, dtype=torch.long)}
    return {name: value.to(device) for name, value in batch.items()}


def bench_update(agent: Agent, segments: int, seconds: float,
                 precisions: tuple[Precision, ...] = (FP32,)) -> tuple[float, dict[str, float]]:
    """(FLOPs per trained frame, {precision: frames per second}) of ppo_update on a batch of
    `segments` full segments, built and run as the learner does (Agent.learn's batch,
    workflow.precision.autocast)."""
    device = str(agent.device)
    batch, frames = agent.update_batch(segment_batch(segments, agent.ppo_cfg.num_steps, device))
    cfg = agent.ppo_cfg
    agent.model.train()

    def update(precision):
        def call():
            with autocast(precision, device):
                ppo_update(agent.model, agent.optimizer, batch, cfg, 0.0, None, agent.shuffle_generator)
        return call

    counter = FlopCounterMode(display=False)
    with counter:
        update(FP32)()
    rates = _rates({p.name: update(p) for p in precisions}, seconds, repeats=3, sync=device_sync(device))
    return counter.get_total_flops() / frames, {name: frames * rate for name, rate in rates.items()}


def bench_advantages(agent: Agent, segments: int, seconds: float,
                     precisions: tuple[Precision, ...] = (FP32,)) -> dict[str, float]:
    """{precision: frames per second} of the learner's value and GAE pass (Agent.update_batch) on
    `segments` full segments of the config's ppo.num_steps frames."""
    device = str(agent.device)
    batch = segment_batch(segments, agent.ppo_cfg.num_steps, device)
    frames = agent.ppo_cfg.max_frames(segments)

    def advantages(precision):
        def call():
            with autocast(precision, device):
                agent.update_batch(batch)
        return call
    rates = _rates({p.name: advantages(p) for p in precisions}, seconds, repeats=3, sync=device_sync(device))
    return {name: frames * rate for name, rate in rates.items()}


def bench_matmul(seconds: float, bf16_native: bool, device: str = "cpu") -> dict[str, float]:
    """Dense matmul FLOP/s (2 n^3 per product) in fp32 and bf16 on `device` (the current torch
    threads on the CPU). Emulated bf16 (no bf16 units) runs at well under 1 GFLOP/s: it is
    measured on n / 4."""
    n = MATMUL_SIZE["cuda" if device.startswith("cuda") else "cpu"]
    g = torch.Generator().manual_seed(0)
    fns, flops = {}, {}
    for name, dtype, size in (("fp32", torch.float32, n), ("bf16", torch.bfloat16, n if bf16_native else n // 4)):
        a, b = (torch.rand(size, size, generator=g, dtype=dtype).to(device) for _ in range(2))
        out = torch.empty(size, size, dtype=dtype, device=device)
        fns[name] = (lambda a, b, out: lambda: torch.mm(a, b, out=out))(a, b, out)
        flops[name] = 2 * size ** 3
    return {name: flops[name] * rate for name, rate in _rates(fns, seconds, sync=device_sync(device)).items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: the config's "
                                                                    "app.torch_num_threads, the learner's)")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per figure")
    parser.add_argument("--config", default=None, help="TOML config whose [model] [ppo] and batch size to measure "
                                                       "(default conf/configure_app.toml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--device", default=None, help="where the update runs (default: the config's app.device)")
    args = parser.parse_args(argv)
    overrides = args.overrides + ([f"app.device={args.device!r}"] if args.device else [])
    cfg = load_config(args.config, overrides)
    device = cfg.app.device
    threads = args.threads or cfg.app.torch_num_threads
    torch.set_num_threads(threads)
    memory = keep_freed_memory()  # as the learner runs
    actor = Agent(settings=cfg, seed=0)  # predict runs where the aisrv act: on the CPU
    agent = Agent(settings=cfg, seed=0, device=device)
    print(f"threads: {threads}")
    if device.startswith("cuda"):  # torch's defaults: the "fp32" update's convolutions run in TF32
        print(f"device: {device} ({torch.cuda.get_device_name(device)}), TF32 convolutions "
              f"{torch.backends.cudnn.allow_tf32}, TF32 matmuls {torch.backends.cuda.matmul.allow_tf32}")
    else:
        print(f"device: {device}")
    print(memory)
    print(f"parameters: {sum(p.numel() for p in agent.model.parameters())}")
    auto = resolve_precision("auto", device)
    print(f"precision_auto: {auto}")
    for batch in (1, 16, 64):
        rates = bench_predict(actor, batch, args.seconds)
        print(f"predict_b{batch}_samples_per_s: {rates['fp32']:.0f}")
        print(f"predict_b{batch}_bf16_samples_per_s: {rates['bf16']:.0f}")
    flop_per_frame, update = bench_update(agent, cfg.app.train_batch_size, args.seconds * 6, (FP32, BF16))
    advantages = bench_advantages(agent, cfg.app.train_batch_size, args.seconds * 2, (FP32, BF16))
    matmul = bench_matmul(args.seconds, bf16_native=auto.dtype == torch.bfloat16, device=device)
    print(f"update_flop_per_frame: {flop_per_frame / 1e6:.1f}M")
    for name in ("fp32", "bf16"):
        print(f"matmul_{name}_gflop_per_s: {matmul[name] / 1e9:.1f}")
        print(f"update_{name}_frames_per_s: {update[name]:.0f}")
        print(f"update_{name}_gflop_per_s: {flop_per_frame * update[name] / 1e9:.1f}")
        print(f"flop_ratio_{name}: {flop_per_frame * update[name] / matmul[name]:.3f}")
        print(f"advantages_{name}_frames_per_s: {advantages[name]:.0f}")
    print(f"update speed-up bf16/fp32: {update['bf16'] / update['fp32']:.2f}")


if __name__ == "__main__":
    main()
