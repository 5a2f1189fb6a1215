"""The platform's own packages (../shared/) as the tests use them: a copy to train (the original is
never written), and its checkpoints read back by the package's own `load_model` in a fresh
process, as the platform would."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tool_runs import forked_run, run_tool

SHARED = REPO_ROOT.parent / "shared"
KAIWU_2024 = SHARED / "kaiwu"
KAIWU_18 = SHARED / "kaiwu18" / "package"
KAIWU_V2 = SHARED / "kaiwu_v2"  # package_24.0.1, package_28.1.1
KAIWU_GORGE = SHARED / "kaiwu_gorge" / "package_15.0.1"
KAIWU_VACUUM = SHARED / "kaiwu_vacuum" / "package_13.0.1"


def fingerprint(root: Path) -> dict[str, str]:
    """An md5 per file under `root`: a package's copy is checked to be left as it was."""
    return {str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def train(package: Path, run_dir: Path, *args: str, timeout_s: float = 300) -> subprocess.CompletedProcess:
    """`./train.sh --package` on `package`, its run under `run_dir`/r."""
    cmd = ["./train.sh", "--package", str(package), "--set", f'app.run_dir="{run_dir}"', "--set", 'app.run_name="r"', *args]
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout_s)


#: A script under tools/ (or any python arguments) run from the repository root (tests/tool_runs.py).
tool = run_tool


def small_replay(batch: int) -> list[str]:
    """`--set` arguments for a few small train steps on one aisrv: a 16-row replay, `batch` rows a step."""
    return ["--set", "app.replay_buffer_capacity=16", "--set", "app.preload_ratio=8",
            "--set", f"app.train_batch_size={batch}", "--set", "app.aisrv_num=1", "--set", "app.max_minutes=5"]


def check_the_diy_template_stops(package: Path, runs: Path) -> None:
    """The official diy is a template: its save_model writes nothing, so its train test fails, saying
    so (the platform's train_test.py never sees a model), and the package is left as it was."""
    before = fingerprint(package)
    result = train(package, runs, "--train-test", "--set", 'app.algo="diy"', timeout_s=120)
    assert result.returncode != 0
    assert "diy Agent.save_model" in result.stderr and "wrote no file named model.ckpt-0" in result.stderr
    assert "train test FAILED" in result.stderr
    assert fingerprint(package) == before


def set_conf_line(conf: Path, key: str, value: str) -> None:
    """`key = value` in a package's TOML file: its line replaced, or appended where it has none."""
    lines = conf.read_text(encoding="utf-8").splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith(f"{key} =")), None)
    if at is None:
        lines.append(f"{key} = {value}")
    else:
        lines[at] = f"{key} = {value}"
    conf.write_text("\n".join(lines) + "\n", encoding="utf-8")


def check_a_bad_env_conf_stops_the_run(package: Path, runs: Path, named: str) -> None:
    """Exit 2 naming train_env_conf.toml and the key `named`, before any run directory exists."""
    result = train(package, runs, timeout_s=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "train_env_conf.toml" in result.stderr and f"'{named}'" in result.stderr
    assert not runs.exists()


def train_dqn_four_steps(package: Path, runs: Path, read_back, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    """(the result, the run's directory) of the official dqn trained 4 steps with a checkpoint every 2:
    checkpoints 0, 2 and 4, whose weights differ read back by the package's own load_model
    (`read_back(package, algo, ckpt_dir, *ids)`)."""
    result = train(package, runs, "--set", 'app.algo="dqn"', "--set", "app.dump_model_freq=2",
                   "--set", "app.max_train_steps=4", *args)
    assert result.returncode == 0, result.stdout + result.stderr
    ckpt_dir = runs / "r" / "ckpt" / "back_to_the_realm_dqn"
    assert sorted(int(p.name.split("-")[1].split(".")[0]) for p in ckpt_dir.glob("model.ckpt-*.pkl")) == [0, 2, 4]
    sums = read_back(package, "dqn", ckpt_dir, 0, 4)
    assert sums["0"] != sums["4"]  # trained weights, read back by the package's own load_model
    return result, runs / "r"


def copy_official(source: Path, dest: Path, marker: str) -> Path:
    """`source` copied to `dest`; the test is skipped when `source/marker` is not there."""
    if not (source / marker).is_dir():
        pytest.skip(f"the platform's package is not at {source}")
    shutil.copytree(source, dest)
    return dest


LOAD_SCRIPT = """
import json, sys, torch
from importlib import import_module
from kaiwudrl.common.config.config_control import CONFIG
package, platform, app, algo, agent_module, ckpt_dir = sys.argv[1:7]
CONFIG.load({"algo": algo, "app": app})
sys.path[:0] = [package] + ([platform] if platform else [])
class Log:
    def info(self, *args, **kwargs):
        pass
agent = import_module(agent_module).Agent(agent_type="learner", device=torch.device("cpu"), logger=Log())
model = agent.model if hasattr(agent, "model") else agent.algorithm.model
sums = {}
for i in sys.argv[7:]:
    agent.load_model(path=ckpt_dir, id=int(i))
    sums[i] = sum(float(v.double().abs().sum()) for v in model.state_dict().values() if v.is_floating_point())
print(json.dumps(sums))
"""


def weight_sums(package: Path, app: str, algo: str, ckpt_dir: Path, *ids: int, platform_root: Path | None = None,
                agent_module: str = "agent_{algo}.agent") -> dict[str, float]:
    """A weight checksum per checkpoint id, each loaded by the package's own Agent.load_model in a
    process that never imported the package (tool_runs.forked_run; `platform_root`: the version's
    root modules, put on the path after the package)."""
    out = forked_run(["-c", LOAD_SCRIPT, str(package), str(platform_root or ""), app, algo,
                      agent_module.format(algo=algo), str(ckpt_dir), *map(str, ids)], timeout_s=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])
