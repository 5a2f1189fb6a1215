"""The learner's precision: what "auto" picks, and that a bf16 update keeps fp32 weights, optimizer
state, outputs and checkpoints while moving the weights as the fp32 update does."""
import copy
import subprocess
import sys

import numpy as np
import pytest
import torch

from feature.back_to_the_realm.layout import INPUT_SHAPE
from agent.back_to_the_realm.ppo_agent import Agent
from agent.model import ActorCritic, ModelConfig, QNetwork
from fake_obs import rows_from
from feature.back_to_the_realm.ppo_definition import NumpyData2SampleData
from feature.back_to_the_realm.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM
from workflow.config import REPO_ROOT, ConfigError, load_config
from workflow.precision import autocast, resolve_precision

KAIWU_2024 = REPO_ROOT.parent / "shared" / "kaiwu"
BF16 = resolve_precision("bf16", "cpu")
FP32 = resolve_precision("fp32", "cpu")


def test_set_precisions_and_bad_values():
    assert BF16.dtype == torch.bfloat16 and BF16.name == "bf16" and str(BF16) == "bf16 (set)"
    assert FP32.dtype == torch.float32 and FP32.name == "fp32"
    with pytest.raises(ValueError, match=r"precision: got 'fp16', allowed: 'auto', 'fp32', 'bf16'"):
        resolve_precision("fp16", "cpu")
    with pytest.raises(ConfigError, match="precision"):
        load_config(None, ['app.precision="half"'])


def test_auto_follows_the_cpus_bf16_units_and_the_onednn_cap(monkeypatch):
    import workflow.precision as precision

    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.setattr(precision, "cpu_bf16_units", lambda: ["amx_bf16"])
    picked = resolve_precision("auto", "cpu")
    assert picked.dtype == torch.bfloat16 and "amx_bf16" in picked.reason
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")  # the kernels an AVX2-only CPU gets: bf16 emulated, slower
    picked = resolve_precision("auto", "cpu")
    assert picked.dtype == torch.float32 and "ONEDNN_MAX_CPU_ISA=AVX2" in picked.reason
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "avx512_core_amx")
    assert resolve_precision("auto", "cpu").dtype == torch.bfloat16
    monkeypatch.setattr(precision, "cpu_bf16_units", lambda: [])
    picked = resolve_precision("auto", "cpu")
    assert picked.dtype == torch.float32 and "no bf16" in picked.reason


def test_auto_is_fp32_for_a_package_whose_network_is_not_declared_bf16_ready(monkeypatch):
    import workflow.precision as precision
    from agent.back_to_the_realm.dqn_plus_agent import Agent as DQNAgent

    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.setattr(precision, "cpu_bf16_units", lambda: ["amx_bf16"])
    assert precision.package_bf16_ready(Agent) and precision.package_bf16_ready(DQNAgent)
    if not (KAIWU_2024 / "dqn").is_dir():
        pytest.skip(f"the platform's package is not at {KAIWU_2024}")
    # the platform's own package, written for fp32 (loaded in a process of its own: it goes on sys.path)
    probe = ("from workflow.host.kaiwu_package import KaiwuPackage; from workflow.precision import package_bf16_ready; "
             f"print(package_bf16_ready(KaiwuPackage.load({str(KAIWU_2024)!r}, 'dqn', {{}}).agent_class))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False"
    picked = resolve_precision("auto", "cpu", False)
    assert picked.dtype == torch.float32 and "bf16_ready" in picked.reason
    assert resolve_precision("bf16", "cpu", False).dtype == torch.bfloat16  # forced: any package


def test_this_cpus_flags_are_read():
    flags = open("/proc/cpuinfo").read()
    from workflow.precision import cpu_bf16_units
    assert cpu_bf16_units() == [f for f in ("amx_bf16", "avx512_bf16") if f" {f}" in flags]


@pytest.mark.parametrize("network", ["actor_critic", "q_network"])
def test_networks_hand_back_fp32_under_autocast(network):
    cfg = ModelConfig(channels=[8, 8], kernel_sizes=[5, 3], strides=[2, 2], hidden_size=32)
    model = ActorCritic(cfg, INPUT_SHAPE) if network == "actor_critic" else QNetwork(cfg, INPUT_SHAPE)
    x, s, legal = torch.rand((3,) + MAP_SHAPE), torch.rand(3, STATE_DIM), torch.ones(3, NUM_ACTIONS)
    with autocast(BF16, "cpu"):
        out = model(x, s, legal) if network == "actor_critic" else (model(x, s),)
    assert all(o.dtype == torch.float32 for o in out)
    with torch.no_grad():
        reference = model(x, s, legal) if network == "actor_critic" else (model(x, s),)
    for low, full in zip(out, reference):  # bf16 keeps ~3 significant digits
        assert torch.allclose(low, full, rtol=0.05, atol=0.05)


def test_only_the_conv_towers_run_in_bf16():
    """The layers reading the state vector (positions, distances) and the heads stay fp32, with
    the actor's and the critic's own towers."""
    model = ActorCritic(ModelConfig(channels=[8, 8], kernel_sizes=[5, 3], strides=[2, 2], hidden_size=32,
                                    share_backbone=False), INPUT_SHAPE)
    dtypes = {}
    for name, module in model.named_modules():
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
            module.register_forward_hook(lambda m, i, o, name=name: dtypes.__setitem__(name, o.dtype))
    with autocast(BF16, "cpu"):
        model(torch.rand((2,) + MAP_SHAPE), torch.rand(2, STATE_DIM), torch.ones(2, NUM_ACTIONS))
    convs = {n: d for n, d in dtypes.items() if ".conv." in n}
    assert len(convs) == 4 and set(convs.values()) == {torch.bfloat16}
    assert len(dtypes) == 8 and {d for n, d in dtypes.items() if n not in convs} == {torch.float32}


def _samples(agent, seed: int) -> list:
    """Segments as an aisrv sends them (tests/fake_obs.rows_from), back as SampleData."""
    return [NumpyData2SampleData(row) for row in rows_from(agent, n=64, seed=seed, segment=16)]


def test_a_bf16_update_keeps_fp32_state_and_moves_the_weights_as_fp32_does(tmp_path):
    cfg = load_config(None, ["model.channels=[8, 8]", "model.kernel_sizes=[5, 3]", "model.strides=[2, 2]",
                             "model.hidden_size=32", "ppo.update_epochs=1", "ppo.num_minibatches=1"])
    full, low = Agent(settings=cfg, seed=3), Agent(settings=cfg, seed=3)
    samples = _samples(Agent(settings=cfg, seed=5), seed=1)
    start = copy.deepcopy(full.model.state_dict())
    full.learn(samples)
    with autocast(BF16, "cpu"):
        metrics = low.learn(samples)
    assert all(np.isfinite(v) for v in metrics.values())
    assert all(p.dtype == torch.float32 for p in low.model.parameters())
    assert all(t.dtype == torch.float32 for state in low.optimizer.state.values() for t in state.values()
               if torch.is_tensor(t) and t.is_floating_point())
    # one Adam step moves each weight by about the learning rate: the bf16 step points the same way
    names = [name for name in start if "value_norm" not in name]
    a = torch.cat([(full.model.state_dict()[name] - start[name]).flatten() for name in names])
    b = torch.cat([(low.model.state_dict()[name] - start[name]).flatten() for name in names])
    assert torch.nn.functional.cosine_similarity(a, b, dim=0) > 0.9
    assert b.abs().max() < 3 * cfg.ppo.learning_rate  # Adam's first step: |Δw| <= lr (fp32 master weights)

    low.save_model(str(tmp_path), id=1)
    restored = Agent(settings=cfg, seed=4)
    restored.load_model(str(tmp_path), id=1)
    for name, value in restored.model.state_dict().items():
        assert value.dtype == low.model.state_dict()[name].dtype
        assert torch.equal(value, low.model.state_dict()[name])


def test_a_device_this_torch_cannot_use_is_named(monkeypatch):
    """`app.device = "cuda"` on a CPU-only torch, a machine without a GPU, or past its GPUs: a
    ValueError naming the key and what is allowed, before the learner builds anything."""
    import workflow.precision as precision
    from workflow.precision import check_device

    check_device("cpu")
    monkeypatch.setattr(precision.torch.version, "cuda", None)
    with pytest.raises(ValueError, match=r"app.device = 'cuda': this torch .* built without CUDA; allowed here: 'cpu'"):
        check_device("cuda")
    monkeypatch.setattr(precision.torch.version, "cuda", "12.8")
    monkeypatch.setattr(precision.torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"app.device = 'cuda:0': torch sees no GPU on this machine"):
        check_device("cuda:0")
    monkeypatch.setattr(precision.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(precision.torch.cuda, "device_count", lambda: 2)
    check_device("cuda:1")
    with pytest.raises(ValueError, match=r"app.device = 'cuda:2': this machine has 2 GPU\(s\).*'cuda:0' to 'cuda:1'"):
        check_device("cuda:2")


def test_local_mode_refuses_a_device_it_cannot_use(monkeypatch):
    import workflow.precision as precision
    from workflow.host.local_trainer import train_local

    monkeypatch.setattr(precision.torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="app.device = 'cuda'"):
        train_local(load_config(None, ['app.device="cuda"']), max_updates=1)
