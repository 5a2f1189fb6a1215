"""tools/export_kaiwu.py: the project's agent and a checkpoint as a platform code package that
needs nothing of the toolkit, trains through `./train.sh --package` and is scored by
tools/evaluate.py; its checkpoint is a state dict the platform's way of loading reads."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import toml
import torch

from agent.agent import Agent
from agent.algorithms import PACKAGE_FOLDERS
from agent.config import Settings
from agent.model import ActorCritic, ModelConfig
from tests.conftest import REPO_ROOT

TINY_CONFIG = """
include = ["{repo}/conf/configure_app.toml"]
[app]
train_batch_size = 4
replay_buffer_capacity = 8
dump_model_freq = 3
[model]
channels = [4]
kernel_sizes = [5]
strides = [4]
hidden_size = 16
[reward]
win = 12.5
[curriculum]
chest_num = 1
max_step = 60
"""

#: Imports the exported package with the toolkit's own top-level names blocked and the repository
#: off sys.path: only the package, the platform's modules (kaiwu_agent, kaiwudrl), numpy and torch.
IMPORT_CHECK = r"""
import importlib.abc, json, sys
package, platform_dir, repo, algo = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
BLOCKED = set(json.loads(sys.argv[5]))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"the exported package imported {name}")
        return None
def toolkit(path):  # the repository's own files, not its virtual environment's packages
    return path.startswith(repo) and not path.startswith(repo + "/.venv")
sys.meta_path.insert(0, Block())
sys.path = [package, platform_dir] + [p for p in sys.path if p and not toolkit(p)]
import torch
from importlib import import_module
from kaiwudrl.common.config.config_control import CONFIG
CONFIG.load({"app": "back_to_the_realm", "algo": algo})
config = import_module(algo + ".config")
definition = import_module(algo + ".feature.definition")
agent = import_module(algo + ".algorithm.agent").Agent(agent_type="learner", device=torch.device("cpu"))
agent.load_model(path=package + "/ckpt", id="latest")
import_module(algo + ".train_workflow")
inside = [m.__file__ for m in list(sys.modules.values())
          if getattr(m, "__file__", None) and toolkit(m.__file__)
          and not m.__file__.startswith((repo + "/kaiwu_agent", repo + "/kaiwudrl"))]
print(json.dumps({"sample_dim": config.Config.SAMPLE_DIM, "win": agent.settings.reward.win,
                  "hidden": agent.settings.model.hidden_size, "toolkit_modules": inside}))
"""


def run_tool(*args: str, timeout_s: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout_s)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, Path]:
    """A checkpoint of a small agent, saved where a run keeps it, and its exported package."""
    root = tmp_path_factory.mktemp("export")
    config = root / "tiny.toml"
    config.write_text(TINY_CONFIG.format(repo=REPO_ROOT))
    settings = Settings.from_dict({k: v for k, v in toml.loads(config.read_text()).items()
                                   if k in ("model", "ppo", "reward", "curriculum")})
    agent = Agent(agent_type="learner", settings=settings, seed=0)
    ckpt = agent.save_model(root / "ckpt", 7)
    out = root / "package"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(out), "--config", str(config))
    assert result.returncode == 0, result.stderr
    return ckpt, out


def test_the_package_has_the_platforms_layout_and_the_runs_settings(exported):
    ckpt, out = exported
    for name in ("conf/configure_app.toml", "kaiwu.json", "ppo/config.py", "ppo/feature/definition.py",
                 "ppo/algorithm/agent.py", "ppo/model/model.py", "ppo/train_workflow.py", "ppo/settings.json",
                 "ckpt/model.ckpt-7.pkl", "ckpt/model.ckpt-7.train.pt"):
        assert (out / name).is_file(), name
    app = toml.loads((out / "conf" / "configure_app.toml").read_text())["app"]
    assert app["algo"] == "ppo" and app["eval_model_id"] == 7 and app["train_batch_size"] == 4
    assert json.loads((out / "kaiwu.json").read_text())["project_code"] == "back_to_the_realm"
    settings = json.loads((out / "ppo" / "settings.json").read_text())
    assert settings["reward"]["win"] == 12.5 and settings["model"]["hidden_size"] == 16
    model = ActorCritic(ModelConfig(channels=[4], kernel_sizes=[5], strides=[4], hidden_size=16))
    model.load_state_dict(torch.load(out / "ckpt" / "model.ckpt-7.pkl"))  # the platform's way of loading


def import_alone(out: Path, algo: str, tmp_path: Path) -> dict:
    """IMPORT_CHECK's report on the package at `out`."""
    platform = tmp_path / "platform"  # the platform's modules alone, as the platform would provide them
    platform.mkdir()
    for name in ("kaiwu_agent", "kaiwudrl"):
        (platform / name).symlink_to(REPO_ROOT / name)
    blocked = json.dumps(list(PACKAGE_FOLDERS) + ["realm", "workflow", "tools"])
    result = run_tool("-c", IMPORT_CHECK, str(out), str(platform), str(REPO_ROOT), algo, blocked)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_package_imports_nothing_of_the_toolkit(exported, tmp_path):
    _, out = exported
    report = import_alone(out, "ppo", tmp_path)
    assert report["toolkit_modules"] == []
    assert report["win"] == 12.5 and report["hidden"] == 16  # its settings.json, not the defaults


def test_the_package_trains_through_train_sh_and_is_scored_by_evaluate(exported, tmp_path):
    _, out = exported
    result = subprocess.run(["./train.sh", "--package", str(out), "--set", f'app.run_dir="{tmp_path / "runs"}"',
                             "--set", 'app.run_name="r"', "--train-test"], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    trained = tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_ppo"
    assert (trained / "model.ckpt-1.pkl").is_file() and (trained / "model.ckpt-1.train.pt").is_file()

    scored = run_tool("tools/evaluate.py", "--package", str(out), "--episodes", "2", "--workers", "1", "--quiet",
                      "--usr-conf", '{"diy": {"treasure_num": 2, "max_step": 40}}', "--out", str(tmp_path / "eval"))
    assert scored.returncode == 0, scored.stderr
    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert any("model.ckpt-7.pkl" in json.dumps(entry) for entry in results.values()) or "model.ckpt-7" in scored.stdout
    trained_scored = run_tool("tools/evaluate.py", "--package", str(out), "--ckpt", str(trained / "model.ckpt-1.pkl"),
                              "--episodes", "1", "--workers", "1", "--quiet", "--no-planner",
                              "--usr-conf", '{"diy": {"treasure_num": 1, "max_step": 30}}',
                              "--out", str(tmp_path / "eval2"))
    assert trained_scored.returncode == 0, trained_scored.stderr


@pytest.mark.parametrize("case, message", [
    ("not-a-checkpoint", "not a checkpoint file"),
    ("out-not-empty", "exists and is not empty"),
    ("bad-algo", "--algo"),
])
def test_bad_input_exits_2_naming_it_and_writes_nothing(exported, tmp_path, case, message):
    ckpt, _ = exported
    out = tmp_path / "out"
    args = ["--ckpt", str(ckpt), "--out", str(out), "--config", str(ckpt.parent.parent / "tiny.toml")]
    if case == "not-a-checkpoint":
        args[1] = str(tmp_path / "model.ckpt-3.txt")
    elif case == "out-not-empty":
        out.mkdir()
        (out / "keep.txt").write_text("mine")
    else:
        args += ["--algo", "My-Algo"]
    result = run_tool("tools/export_kaiwu.py", *args)
    assert result.returncode == 2 and message in result.stderr
    if case == "out-not-empty":
        assert [p.name for p in out.iterdir()] == ["keep.txt"]
    else:
        assert not out.exists()


def test_the_dqn_package_exports_too_and_passes_the_platforms_train_test(tmp_path):
    """A dqn_plus checkpoint (the run's app.algo says so) becomes a dqn_plus/ package with its
    own definition.py, importable alone, trained by ./train.sh --package --train-test."""
    from agent.dqn_agent import Agent as DQNAgent
    from agent.dqn_config import Settings as DQNSettings

    config = tmp_path / "tiny_dqn.toml"
    config.write_text(TINY_CONFIG.format(repo=REPO_ROOT).replace("[app]", '[app]\nalgo = "dqn_plus"\n'
                                                                  'algorithm_on_policy_or_off_policy = "off-policy"\n'
                                                                  'reverb_sampler = "reverb.selectors.Prioritized"')
                      + "[dqn]\nn_step = 2\n")
    data = toml.loads(config.read_text())
    agent = DQNAgent(agent_type="learner", settings=DQNSettings.from_dict(
        {k: v for k, v in data.items() if k in ("model", "dqn", "reward", "curriculum")}), seed=0)
    ckpt = agent.save_model(tmp_path / "ckpt", 4)
    out = tmp_path / "package"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(out), "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "dqn_plus" / "settings.json").read_text())["dqn"]["n_step"] == 2
    assert "def sample_process(list_game_data, n_step" in (out / "dqn_plus" / "feature" / "definition.py").read_text().replace(
        "list_game_data: Sequence[Frame], n_step: int", "list_game_data, n_step")
    report = import_alone(out, "dqn_plus", tmp_path)
    assert report["toolkit_modules"] == [] and report["hidden"] == 16 and report["win"] == 12.5
    app = toml.loads((out / "conf" / "configure_app.toml").read_text())["app"]
    assert app["algo"] == "dqn_plus" and app["reverb_sampler"] == "reverb.selectors.Prioritized"
    trained = subprocess.run(["./train.sh", "--package", str(out), "--set", f'app.run_dir="{tmp_path / "runs"}"',
                              "--set", 'app.run_name="r"', "--train-test"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=300)
    assert trained.returncode == 0, trained.stdout[-2000:] + trained.stderr[-3000:]
    assert (tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_dqn_plus" / "model.ckpt-1.pkl").is_file()
