"""The PPO package's model options end to end: conf/smoke.toml with a recurrent core and the
factored head trains through the real training system, resumes, and its checkpoint is
evaluated, rendered and exported (the export loads and plays with nothing of the toolkit)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from test_export_kaiwu import IMPORT_CHECK_18, import_alone, run_tool

sys.path.insert(0, str(REPO_ROOT / "tools"))
import evaluate  # noqa: E402
import render  # noqa: E402

OPTIONS = ["--set", 'model.core="lstm"', "--set", "model.core_size=16", "--set", 'model.action_head="factored"',
           "--set", "model.burn_in=8"]
SHORT_CONF = json.dumps({"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 2, "max_step": 60}})


def launch(run_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "workflow.launcher", "--config", str(REPO_ROOT / "conf" / "smoke.toml"),
           "--set", f'app.run_dir="{run_dir}"', "--set", 'app.run_name="opts"', *OPTIONS, *extra]
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """The newest checkpoint of a short run with the options, after a resume."""
    run_dir = tmp_path_factory.mktemp("runs")
    first = launch(run_dir, "--set", "app.max_train_steps=5")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    resumed = launch(run_dir, "--resume", "--set", "app.max_train_steps=10")
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    ckpts = sorted((run_dir / "opts" / "ckpt").rglob("model.ckpt-*.pkl"), key=lambda p: int(p.stem.split("-")[1]))
    assert ckpts and int(ckpts[-1].stem.split("-")[1]) >= 10
    return ckpts[-1]


@pytest.mark.slow
def test_the_run_trains_resumes_and_records_its_options(trained):
    progress = json.loads(trained.with_name(trained.name.replace(".pkl", ".progress.json")).read_text())
    assert progress["model"] == {"core": "lstm", "core_size": 16, "action_head": "factored"}
    assert progress["train_step"] >= 10


def test_the_checkpoint_is_evaluated_and_rendered(trained, tmp_path):
    rc = evaluate.main(["--ckpt", str(trained), "--usr-conf", SHORT_CONF, "--episodes", "2", "--workers", "1",
                        "--quiet", "--no-planner", "--out", str(tmp_path / "eval")])
    assert rc == 0
    assert (tmp_path / "eval" / "results.json").is_file()
    rc = render.main(["--ckpt", str(trained), "--usr-conf", SHORT_CONF, "--png", str(tmp_path / "ep.png")])
    assert rc == 0 and (tmp_path / "ep.png").stat().st_size > 0


@pytest.mark.slow
def test_the_export_loads_and_plays_alone_on_either_platform(trained, tmp_path):
    out = tmp_path / "package"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(trained), "--out", str(out))
    assert result.returncode == 0, result.stderr
    (tmp_path / "2024").mkdir()
    assert import_alone(out, "ppo", tmp_path / "2024")["toolkit_modules"] == []

    out18 = tmp_path / "package18"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(trained), "--out", str(out18), "--kaiwu-version", "18")
    assert result.returncode == 0, result.stderr
    platform = tmp_path / "platform"
    platform.mkdir()
    for name in ("kaiwu_agent", "kaiwudrl"):
        (platform / name).symlink_to(REPO_ROOT / "kaiwu_platform" / "base" / name)
    blocked = json.dumps(["feature", "agent", "episodes", "realm", "workflow"])
    played = run_tool("-c", IMPORT_CHECK_18, str(out18), str(REPO_ROOT / "kaiwu_platform" / "v18"), str(platform), str(REPO_ROOT),
                      "ppo", blocked)
    assert played.returncode == 0, played.stderr
    report = json.loads(played.stdout.strip().splitlines()[-1])
    assert report["toolkit_modules"] == [] and 0 <= report["action"] < 16 and report["steps"] > 0 and report["rows"]
