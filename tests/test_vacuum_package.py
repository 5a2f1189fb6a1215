"""robot_vacuum code packages (13.0.1, the 2026 season's second game) train here unchanged: the
official agent_ppo, copied from ../shared/kaiwu_vacuum, passes `./train.sh --package DIR
--train-test` with real processes and a real reverb server, trains on with --resume, its
checkpoints are read back by its own load_model in a fresh process, and one is evaluated and
rendered with its own exploit; the package is left byte for byte as it was. One trained run is
shared by the module."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.official_packages import (KAIWU_VACUUM, check_a_bad_env_conf_stops_the_run, check_the_diy_template_stops,
                                     copy_official, fingerprint, set_conf_line, tool, train, weight_sums)
from workflow import platforms
from workflow.host.kaiwu_package import package_layout
from workflow.platforms.v13 import PLATFORM_ROOT
from workflow.schema import ConfigError

#: a handful of small train steps
SMALL = ("--set", "app.max_train_steps=3", "--set", "app.replay_buffer_capacity=16", "--set", "app.train_batch_size=4")


def copy_package(dest: Path) -> Path:
    return copy_official(KAIWU_VACUUM, dest, "agent_ppo")


@pytest.fixture
def package(tmp_path) -> Path:
    return copy_package(tmp_path / "package")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(package, runs dir, fingerprint before, the train test's result): the official ppo after
    `--train-test` with three small train steps."""
    root = tmp_path_factory.mktemp("vacuum")
    package = copy_package(root / "package")
    before = fingerprint(package)
    result = train(package, root / "runs", "--train-test", *SMALL)
    return package, root / "runs", before, result


def ckpt_dir(runs: Path) -> Path:
    return runs / "r" / "ckpt" / "robot_vacuum_ppo"


def test_the_version_is_read_from_kaiwu_json_or_the_layout(package):
    assert json.loads((package / "kaiwu.json").read_text())["project_code"] == "robot_vacuum"
    assert platforms.detect(package).name == "13"
    (package / "kaiwu.json").unlink()
    assert platforms.detect(package).name == "13"  # conf/algo_conf_robot_vacuum.toml beside agent_*
    root, layout = package_layout(package, "ppo", "13")
    assert (layout.agent, layout.workflow, layout.config, layout.agent_class, layout.workflow_function) == (
        "agent_ppo.agent", "agent_ppo.workflow.train_workflow", "agent_ppo.conf.conf", "Agent", "workflow")
    with pytest.raises(ConfigError, match=r"app.algo = 'dqn'.*registers diy, ppo"):
        package_layout(package, "dqn", "13")
    assert platforms.get("13").app_defaults(package) == {"app": "robot_vacuum", "algo": "ppo"}


def test_the_platforms_root_modules_are_the_engines_with_the_games_checks(tmp_path):
    """13.0.1's common_python and tools: the engine's create_cls (declared widths), its disaster
    recovery, and read_usr_conf with robot_vacuum's keys (a gorge_chase key is refused)."""
    official_conf = KAIWU_VACUUM / "agent_ppo" / "conf" / "train_env_conf.toml"
    if not official_conf.is_file():
        pytest.skip(f"the platform's package is not at {KAIWU_VACUUM}")
    sys.path.insert(0, str(PLATFORM_ROOT))
    try:
        for name in [m for m in sys.modules if m == "tools" or m.startswith(("tools.", "common_python"))]:
            del sys.modules[name]
        from common_python.utils.common_func import create_cls
        from common_python.utils.workflow_disaster_recovery import handle_disaster_recovery
        from tools.metrics_utils import ENV_NAMES
        from tools.train_env_conf_validate import read_usr_conf
    finally:
        sys.path.remove(str(PLATFORM_ROOT))
        for name in [m for m in sys.modules if m == "tools" or m.startswith(("tools.", "common_python"))]:
            del sys.modules[name]
    Sample = create_cls("VacuumTestSample", obs=3, act=1)
    protocols, width = platforms.get("13").sample_rows({"SampleData": Sample}, object)
    assert width == 4 and protocols["SampleData2NumpyData"](Sample(obs=np.arange(3), act=np.ones(1))).tolist() == [
        0, 1, 2, 1]
    errors = []
    log = type("Log", (), {"error": lambda self, message: errors.append(message)})()
    assert handle_disaster_recovery({"observation": None, "extra_info": {"result_code": 0}}, log)
    assert "clean_score" in ENV_NAMES and "treasures_collected" not in ENV_NAMES
    good = tmp_path / "good.toml"
    good.write_text(official_conf.read_text(encoding="utf-8"))
    assert read_usr_conf(str(good), log)["env_conf"]["battery_max"] == 200
    set_conf_line(good, "monster_interval", "100")
    assert read_usr_conf(str(good), log) is None and "monster_interval" in errors[-1]


@pytest.mark.slow
def test_the_official_ppo_passes_the_train_test_and_trains_a_few_steps(trained):
    package, runs, before, result = trained
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    ids = sorted(int(p.name.split("-")[1].split(".")[0]) for p in ckpt_dir(runs).glob("model.ckpt-*.pkl"))
    assert ids[0] == 0 and ids[-1] >= 1
    assert fingerprint(package) == before


@pytest.mark.slow
def test_its_checkpoints_load_in_a_fresh_process_with_its_own_load_model(trained):
    package, runs, _, result = trained
    assert result.returncode == 0, result.stderr
    sums = weight_sums(package, "robot_vacuum", "ppo", ckpt_dir(runs), 0, 1, platform_root=PLATFORM_ROOT)
    assert sums["0"] != sums["1"]  # trained weights


SHORT = json.dumps({"env_conf": {"map": [1, 2], "max_step": 60}})


@pytest.mark.slow
def test_a_checkpoint_is_evaluated_and_rendered_with_its_own_exploit(trained, tmp_path):
    package, runs, before, result = trained
    assert result.returncode == 0, result.stderr
    ckpt = ckpt_dir(runs) / "model.ckpt-1.pkl"
    out = tool("tools/evaluate.py", "--package", str(package), "--ckpt", str(ckpt), "--episodes", "2",
               "--usr-conf", SHORT, "--quiet", "--out", str(tmp_path / "eval"))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = (tmp_path / "eval" / "episodes.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2 and "ckpt 1" in out.stdout and "robot_vacuum" in out.stdout
    summary = (tmp_path / "eval" / "summary.csv").read_text().splitlines()
    assert summary[2].startswith("planner,") and float(summary[2].split(",")[3]) > 0  # the reference scores
    episodes = json.loads((tmp_path / "eval" / "results.json").read_text())["episodes"]
    maps = [episode["usr_conf"]["env_conf"]["map"] for episode in episodes if episode["policy"] != "planner"]
    assert maps == [[1], [2]]  # one map per episode, in the list's order
    picture = tmp_path / "episode.png"
    out = tool("tools/render.py", "--package", str(package), "--ckpt", str(ckpt), "--usr-conf", SHORT,
               "--png", str(picture))
    assert out.returncode == 0, out.stdout + out.stderr
    assert picture.stat().st_size > 0
    assert fingerprint(package) == before


@pytest.mark.slow
def test_a_run_resumes_from_its_newest_checkpoint(trained):
    package, runs, before, result = trained
    assert result.returncode == 0, result.stderr
    newest = max(int(p.name.split("-")[1].split(".")[0]) for p in ckpt_dir(runs).glob("model.ckpt-*.pkl"))
    more = train(package, runs, "--resume", "--set", "app.aisrv_num=1", "--set", "app.dump_model_freq=1",
                 "--set", f"app.max_train_steps={newest + 2}", "--set", "app.replay_buffer_capacity=16",
                 "--set", "app.train_batch_size=4")
    assert more.returncode == 0, more.stdout + more.stderr
    assert (ckpt_dir(runs) / f"model.ckpt-{newest + 2}.pkl").is_file()
    assert fingerprint(package) == before


@pytest.mark.slow
def test_the_diy_template_stops_naming_the_missing_checkpoint(package, tmp_path):
    """The official diy is a template: its save_model writes nothing, so the run stops saying so."""
    check_the_diy_template_stops(package, tmp_path / "runs")


@pytest.mark.parametrize("key, value", [("robot_count", "5"), ("battery_max", "50"), ("charger_count", "0")])
def test_a_bad_train_env_conf_stops_before_anything_starts_naming_file_and_key(package, tmp_path, key, value):
    set_conf_line(package / "agent_ppo" / "conf" / "train_env_conf.toml", key, value)
    check_a_bad_env_conf_stops_the_run(package, tmp_path / "runs", named=key)
