"""The project's robot_vacuum PPO from a run to a platform package and back: `./train.sh --config
conf/robot_vacuum.toml` (a tiny model, two train steps, 40-step episodes), tools/evaluate.py on its
checkpoint, tools/export_kaiwu.py --kaiwu-version 13 (a 13.0.1 package: kaiwu.json, the
registration files, the run's episodes as train_env_conf.toml), the export's train test through
`./train.sh --package`, and tools/evaluate.py --package, which plays the same episodes as the
project's checkpoint did and scores them the same."""
from __future__ import annotations

import json
import subprocess

import pytest
import toml

from tests.conftest import REPO_ROOT
from tool_runs import run_tool
from workflow import platforms

CONF = REPO_ROOT / "conf" / "robot_vacuum.toml"
#: held-out generated maps 11-20; its episodes end when the battery (200) runs out, so they are short
PRESET = ("--preset", "vacuum-generated-heldout", "--episodes", "2", "--no-planner", "--workers", "1")


def _run(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)


def _scores(out) -> list[tuple[int, float]]:
    return [(e["seed"], e["total_score"]) for e in json.loads((out / "results.json").read_text())["episodes"]]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A run of `./train.sh --config conf/robot_vacuum.toml` (two small train steps, 40-step
    episodes, hidden size 32) and its last checkpoint."""
    root = tmp_path_factory.mktemp("vacuum_export")
    result = _run("./train.sh", "--config", str(CONF), "--set", f'app.run_dir="{root}"', "--set", 'app.run_name="r"',
                  "--set", "app.max_train_steps=2", "--set", "app.replay_buffer_capacity=8", "--set",
                  "app.train_batch_size=4", "--set", "app.envs_per_aisrv=2", "--set", "curriculum_vacuum.max_step=40",
                  "--set", "model.hidden_size=32")
    assert result.returncode == 0, result.stdout + result.stderr
    ckpts = sorted((root / "r" / "ckpt" / "robot_vacuum_ppo").glob("model.ckpt-*.pkl"),
                   key=lambda p: int(p.name.split("-")[1][:-4]))
    assert ckpts, f"no checkpoint in {root / 'r' / 'ckpt'}"
    return root, ckpts[-1]


@pytest.mark.slow
def test_train_evaluate_export_train_test_and_score_the_export(trained):
    root, ckpt = trained
    result = run_tool("tools/evaluate.py", "--ckpt", str(ckpt), *PRESET, "--out", str(root / "eval"))
    assert result.returncode == 0, result.stderr
    project_scores = _scores(root / "eval")
    assert [seed for seed, _ in project_scores] == [0, 1] and all(score > 0 for _, score in project_scores)

    package = root / "package"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(package),
                      "--kaiwu-version", "13")
    assert result.returncode == 0, result.stderr
    assert "information: the agent reads env_obs's extra_info.frame_state ([features_vacuum] global_info" in result.stdout
    assert json.loads((package / "kaiwu.json").read_text()) == {"version": "13.0.1-comp-normal-lite.26comp",
                                                                 "project_code": "robot_vacuum"}
    assert platforms.detect(package).name == "13"
    algo_conf = toml.loads((package / "conf" / "algo_conf_robot_vacuum.toml").read_text())
    assert algo_conf == {"ppo": {"actor_agent": "agent_ppo.agent.Agent", "learner_agent": "agent_ppo.agent.Agent",
                                 "aisrv_agent": "agent_ppo.agent.Agent",
                                 "train_workflow": "agent_ppo.workflow.train_workflow.workflow",
                                 "eval_workflow": "tools.eval.workflow.eval_workflow.workflow",
                                 "exam_workflow": "tools.eval.workflow.exam_workflow.workflow"}}
    app_conf = toml.loads((package / "conf" / "app_conf_robot_vacuum.toml").read_text())
    assert app_conf["robot_vacuum"]["policies"]["train_one"]["algo"] == "ppo"
    app = toml.loads((package / "conf" / "configure_app.toml").read_text())["app"]
    assert (app["app"], app["algo"], app["eval_model_id"]) == ("robot_vacuum", "ppo", int(ckpt.name[11:-4]))
    env_conf = toml.loads((package / "agent_ppo" / "conf" / "train_env_conf.toml").read_text())["env_conf"]
    assert env_conf == {"map": list(range(1, 9)), "map_random": True, "robot_count": 4, "charger_count": 4,
                        "max_step": 40, "battery_max": 200}  # the run's [curriculum_vacuum] with its --set
    settings = json.loads((package / "agent_ppo" / "conf" / "settings.json").read_text())
    assert settings["model"]["hidden_size"] == 32
    assert settings["features_vacuum"] == toml.loads(CONF.read_text())["features_vacuum"]  # the run's, key for key
    for name in ("memory.py", "layout.py", "observation.py", "reward.py"):
        assert (package / "agent_ppo" / "feature" / "robot_vacuum" / name).is_file(), name
    assert (package / "ckpt" / ckpt.name).is_file()
    from export.code import foreign_imports

    for file in package.rglob("*.py"):  # only the platform's modules, numpy, torch and the package
        assert foreign_imports(file.read_text(), "agent_ppo") == [], file

    result = _run("./train.sh", "--package", str(package), "--train-test", "--set", f'app.run_dir="{root}"', "--set",
                  'app.run_name="exported"', "--set", "app.max_train_steps=2", "--set", "app.replay_buffer_capacity=8",
                  "--set", "app.train_batch_size=4")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    assert f"package {package}, algorithm ppo" in result.stderr

    result = run_tool("tools/evaluate.py", "--package", str(package), *PRESET, "--out",
                      str(root / "eval_package"))
    assert result.returncode == 0, result.stderr
    assert _scores(root / "eval_package") == project_scores  # the package's own exploit acts as the project's agent


def test_a_robot_vacuum_checkpoint_exports_to_its_own_platform_version_only(trained, tmp_path):
    _, ckpt = trained
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(tmp_path / "p"),
                      "--kaiwu-version", "15")
    assert result.returncode == 2
    assert "--kaiwu-version 15: a gorge_chase package; the checkpoint is of the project's robot_vacuum ppo" in \
        result.stderr
    assert not (tmp_path / "p").exists()
