"""Packages that use torch and Python in ways the official templates do not still train here,
and when their own code fails the terminal names the failure itself: copies of the official
back_to_the_realm_v2 packages, changed as a competitor would, run through `./train.sh`."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.official_packages import train
from tests.test_kaiwu_v2_package import copy_package
from workflow.checkpoints import ckpt_files
from workflow.host.kaiwu_package import describe_failure
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


def use_an_undefined_name(feature_py: Path, function: str) -> int:
    """`math` used in the feature code without its import; returns the 1-based line."""
    lines = feature_py.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith(f"def {function}("))
    indent = lines[at + 1][:len(lines[at + 1]) - len(lines[at + 1].lstrip())]
    lines.insert(at + 1, f"{indent}scale = math.floor(2.5)")
    feature_py.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return at + 2


@pytest.mark.slow
def test_a_bug_in_the_feature_code_is_named_on_the_terminal_not_the_workflow_wrapper(tmp_path):
    package = copy_package(tmp_path, "28.1.1")
    line = use_an_undefined_name(package / "agent_dqn" / "feature" / "preprocessor.py", "feature_process")
    result = train(package, tmp_path / "runs", "--train-test", "--set", 'app.algo="dqn"', timeout_s=120)
    assert result.returncode == 1
    failed = next(row for row in result.stderr.splitlines() if "package code failed at" in row)
    assert (f"package code failed at agent_dqn/feature/preprocessor.py:{line} in feature_process: "
            "NameError: name 'math' is not defined") in failed
    assert "RuntimeError: workflow error at agent_dqn/workflow/train_workflow.py" in failed  # the wrapper comes after


def test_the_failure_chain_is_followed_through_causes_and_suppressed_contexts(tmp_path):
    code = tmp_path / "pkg" / "agent_x"
    code.mkdir(parents=True)
    (code / "flow.py").write_text(
        "def inner():\n    return {}['key']\n\n"
        "def middle():\n    try:\n        inner()\n    except KeyError as e:\n        raise ValueError('bad') from e\n\n"
        "def outer():\n    try:\n        middle()\n    except Exception:\n        raise RuntimeError('workflow error') from None\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("flow", code / "flow.py")
    flow = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(flow)
    with pytest.raises(RuntimeError) as caught:
        flow.outer()
    assert describe_failure(caught.value, tmp_path / "pkg", ("agent_x/",)) == (
        "agent_x/flow.py:2 in inner: KeyError: 'key' (raised on as ValueError: bad at agent_x/flow.py:8 in middle; "
        "then RuntimeError: workflow error at agent_x/flow.py:14 in outer)")
    assert describe_failure(caught.value, tmp_path / "elsewhere") is None  # not the package's failure


def test_a_failure_in_the_projects_own_package_code_is_named_at_its_file_and_line():
    """The project's agents are hosted from the repository root: a bug in feature/ is named where it is."""
    from feature.back_to_the_realm.observation import observation_process
    from workflow.host.kaiwu_package import PROJECT_CODE, REPO_ROOT

    with pytest.raises(AttributeError) as caught:
        observation_process(object())
    source = (REPO_ROOT / "feature" / "back_to_the_realm" / "observation.py").read_text().splitlines()
    line = next(i for i, text in enumerate(source, 1) if "f = obs.feature" in text)  # where it fails
    assert describe_failure(caught.value, REPO_ROOT, PROJECT_CODE).startswith(
        f"feature/back_to_the_realm/observation.py:{line} in observation_process: AttributeError")
