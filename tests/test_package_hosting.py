"""Packages that use torch and Python in ways the official templates do not still train here,
and when their own code fails the terminal names the failure itself: copies of the official
back_to_the_realm_v2 packages, changed as a competitor would, run through `./train.sh`."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.test_kaiwu_package import train
from tests.test_kaiwu_v2_package import copy_package
from workflow.checkpoints import ckpt_files
from workflow.host.trainee import non_finite_weights

LAZY_FC_LAYER = '''def make_fc_layer(in_features: int, out_features: int):
    return nn.LazyLinear(out_features)  # its input size comes with the first batch


def _official_make_fc_layer('''


def build_lazily(package: Path) -> None:
    """The PPO's layers become torch.nn.LazyLinear: uninitialised until the first forward."""
    model = package / "agent_ppo" / "model" / "model.py"
    text = model.read_text(encoding="utf-8")
    assert "def make_fc_layer(" in text
    model.write_text(text.replace("def make_fc_layer(", LAZY_FC_LAYER, 1), encoding="utf-8")


@pytest.mark.slow
def test_a_package_whose_network_is_built_lazily_trains_and_checkpoints(tmp_path):
    package = copy_package(tmp_path, "24.0.1")
    build_lazily(package)
    result = train(package, tmp_path / "runs", "--train-test", "--set", 'app.algo="ppo"')
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    ckpt_dir = tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_v2_ppo"
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)][:2] == [0, 1]


class _Odd(torch.nn.Module):
    """State the finite-weights check cannot read: lazy, integer, meta, sparse and extra state."""

    def __init__(self):
        super().__init__()
        self.lazy = torch.nn.LazyLinear(3)
        self.nan = torch.nn.Parameter(torch.tensor([1.0, float("nan")]))
        self.register_buffer("count", torch.tensor(7))
        self.register_buffer("meta", torch.empty(2, device="meta"))
        self.register_buffer("sparse", torch.eye(2).to_sparse())
        self.register_buffer("uninitialised", torch.nn.parameter.UninitializedBuffer())

    def get_extra_state(self):
        return {"note": "anything"}

    def set_extra_state(self, state):
        pass


def test_the_finite_weights_check_passes_over_what_it_cannot_read():
    agent = type("Agent", (), {})()
    agent.model = _Odd()
    assert non_finite_weights(agent) == ["model.nan"]
