"""The learner on a GPU (`[app] device = "cuda"`): an update on the GPU moves the weights as the
CPU's does, a checkpoint written there loads on the CPU where the aisrv act, `auto` picks bf16, and
local mode trains each game's package there. Skipped where torch sees no GPU: run
`pytest tests/test_cuda.py` on a machine with one (docs/BENCHMARKS.md, "The learner on a GPU")."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch

from agent.checkpoint_io import checkpoint_file, train_state_file
from agent.back_to_the_realm.ppo_agent import Agent
from fake_obs import rows_from
from games import GAMES
from feature.back_to_the_realm.ppo_definition import NumpyData2SampleData
from workflow.config import load_config
from workflow.precision import autocast, resolve_precision

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")
TINY = ["model.channels=[8, 8]", "model.kernel_sizes=[5, 3]", "model.strides=[2, 2]", "model.hidden_size=32",
        "ppo.update_epochs=2", "ppo.num_minibatches=2"]


@pytest.fixture(autouse=True)
def full_fp32_matmuls():
    """TF32 rounds a GPU's fp32 matmuls and convolutions to 10 mantissa bits: off, so that fp32
    on the GPU is compared with fp32 on the CPU."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def samples(cfg, seed: int) -> list:
    """Segments as an aisrv sends them, played by an agent of `cfg` (tests/fake_obs.rows_from)."""
    return [NumpyData2SampleData(row) for row in rows_from(Agent(settings=cfg, seed=5), n=64, seed=seed, segment=16)]


def tensors_in(tree):
    """Every tensor of a loaded checkpoint (dicts and lists nested)."""
    if torch.is_tensor(tree):
        yield tree
    elif isinstance(tree, dict):
        for value in tree.values():
            yield from tensors_in(value)
    elif isinstance(tree, (list, tuple)):
        for value in tree:
            yield from tensors_in(value)


def weights(agent) -> dict[str, torch.Tensor]:
    return {name: value.detach().cpu().clone() for name, value in agent.model.state_dict().items()}


@pytest.mark.parametrize("options", [[], ['model.core="lstm"', "model.core_size=16"],
                                     ['model.action_head="factored"', "model.share_backbone=false"],
                                     ["ppo.value_norm=true"]],
                         ids=["default", "lstm", "factored_two_towers", "value_norm"])
def test_an_update_on_the_gpu_moves_the_weights_as_on_the_cpu(options):
    cfg = load_config(None, TINY + options)
    cpu, gpu = Agent(settings=cfg, seed=3), Agent(settings=cfg, seed=3, device="cuda")
    assert all(p.is_cuda for p in gpu.model.parameters())
    start = weights(cpu)
    assert all(torch.equal(a, b) for a, b in zip(start.values(), weights(gpu).values()))
    for step in range(2):
        batch = samples(cfg, seed=step)
        on_cpu, on_gpu = cpu.learn(batch), gpu.learn(batch)
        for key, value in on_cpu.items():
            if isinstance(value, float):
                assert on_gpu[key] == pytest.approx(value, rel=2e-3, abs=2e-4), key
    moved = [name for name, value in weights(cpu).items() if not torch.equal(value, start[name])]
    assert moved  # the updates did something to compare
    for name, value in weights(cpu).items():
        assert torch.allclose(weights(gpu)[name], value, rtol=1e-3, atol=1e-4), name


def test_a_gpu_checkpoint_is_cpu_tensors_and_acts_alike_on_the_cpu(tmp_path):
    from test_agent import obs_batch

    cfg = load_config(None, TINY)
    gpu = Agent(settings=cfg, seed=3, device="cuda")
    gpu.learn(samples(cfg, seed=0))
    gpu.save_model(str(tmp_path), id=1)
    for file in (checkpoint_file(tmp_path, 1), train_state_file(tmp_path, 1)):  # weights, optimizer state
        tensors = list(tensors_in(torch.load(file, map_location=None, weights_only=True)))
        assert tensors and all(t.device.type == "cpu" for t in tensors), file.name
    obs = obs_batch(32, seed=7)
    for agent_type in ("player", "aisrv"):  # an aisrv leaves the training state; a player reads it
        cpu = Agent(agent_type=agent_type, settings=cfg, seed=4)
        cpu.load_model(str(tmp_path), id=1)
        assert [a.action for a in cpu.exploit(obs)] == [a.action for a in gpu.exploit(obs)], agent_type
    resumed = Agent(settings=cfg, seed=4, device="cuda")  # the learner resuming on the GPU: optimizer state too
    resumed.load_model(str(tmp_path), id=1)
    batch = samples(cfg, seed=1)
    assert resumed.learn(batch)["loss/policy"] == pytest.approx(gpu.learn(batch)["loss/policy"], rel=1e-5, abs=1e-7)


def test_auto_picks_bf16_on_the_gpu_and_a_bf16_update_points_as_fp32s():
    picked = resolve_precision("auto", "cuda")
    assert picked.dtype == torch.bfloat16 and "GPU" in picked.reason
    cfg = load_config(None, TINY + ["ppo.update_epochs=1", "ppo.num_minibatches=1"])
    full, low = Agent(settings=cfg, seed=3, device="cuda"), Agent(settings=cfg, seed=3, device="cuda")
    start = copy.deepcopy(weights(full))
    batch = samples(cfg, seed=1)
    full.learn(batch)
    with autocast(picked, "cuda"):
        metrics = low.learn(batch)
    assert all(np.isfinite(v) for v in metrics.values() if isinstance(v, float))
    assert all(p.dtype == torch.float32 for p in low.model.parameters())
    names = [name for name in start if "value_norm" not in name]
    a = torch.cat([(weights(full)[name] - start[name]).flatten() for name in names])
    b = torch.cat([(weights(low)[name] - start[name]).flatten() for name in names])
    assert torch.nn.functional.cosine_similarity(a, b, dim=0) > 0.9


def test_the_dqn_update_on_the_gpu_matches_the_cpus():
    from agent.back_to_the_realm.dqn_plus_agent import Agent as DQNAgent
    from agent.back_to_the_realm.dqn_plus_config import Settings
    from agent.dqn import DQNConfig
    from feature.back_to_the_realm.dqn_plus_definition import sample_process
    from test_dqn import TINY as DQN_TINY, frames

    settings = Settings(model=DQN_TINY, dqn=DQNConfig(n_step=2))
    cpu = DQNAgent(agent_type="learner", settings=settings, seed=0)
    gpu = DQNAgent(agent_type="learner", device="cuda", settings=settings, seed=0)
    batch = sample_process(frames([1.0, 0.0, -1.0, 2.0, 0.5], terminated_last=True), n_step=2, gamma=0.9)
    for _ in range(3):
        on_cpu, on_gpu = cpu.learn(batch), gpu.learn(batch)
        assert on_gpu["loss/q"] == pytest.approx(on_cpu["loss/q"], rel=1e-4, abs=1e-6)
        assert np.allclose(np.asarray(on_gpu["priority"]), np.asarray(on_cpu["priority"]), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("game", list(GAMES))
def test_local_mode_trains_each_games_package_on_the_gpu(game, monkeypatch):
    """Local mode on the GPU for each game's package; then its batch as the distributed learner
    hands it over (the platform version's learn_rows: CUDA tensors for the 2025 versions) trains
    the same agent once more."""
    from tasks.small import small_ppo_config
    from workflow.host import local_trainer
    from workflow.host.kaiwu_package import KaiwuPackage

    batches = []
    train = local_trainer.LocalHandler._train
    monkeypatch.setattr(local_trainer.LocalHandler, "_train",
                        lambda self, agent, method, batch, *a, **k: batches.append(batch) or train(self, agent, method, batch, *a, **k))
    cfg = small_ppo_config(game, 0, 1e-3, {})
    cfg.app = dataclasses.replace(cfg.app, device="cuda", precision="auto")
    result = local_trainer.train_local(cfg, max_updates=2)
    assert len(result.updates) == 2 and result.stats.env_steps > 0
    assert all(p.is_cuda for p in result.agent.model.parameters())
    assert all(np.isfinite(v) for update in result.updates for v in update.values() if isinstance(v, float))

    package = KaiwuPackage.of_run(cfg, "local", None)
    to_row, from_row = package.protocol("SampleData2NumpyData"), package.protocol("NumpyData2SampleData")
    rows = package.platform.learn_rows(np.stack([to_row(sample) for sample in batches[-1]]), "cuda")
    result.agent.learn([from_row(row) for row in rows])
    assert len(result.updates) == 3
