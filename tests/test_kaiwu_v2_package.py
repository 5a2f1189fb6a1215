"""back_to_the_realm_v2 code packages (the 2025 competition's game, 24.0.1 and 28.1.1) train here
unchanged: `./train.sh --package DIR --train-test` with real processes and a real reverb server,
for every official algorithm, from copies of ../shared/kaiwu_v2 (checked to be left as they were);
checkpoints are read back by the package's own load_model, and one is evaluated and rendered
with the package's own exploit."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.official_packages import (KAIWU_V2, check_a_bad_env_conf_stops_the_run, check_the_diy_template_stops,
                                     copy_official, fingerprint, set_conf_line, tool, train, weight_sums)
from workflow import platforms
from workflow.host.kaiwu_package import package_layout
from workflow.platforms.v2 import PLATFORM_ROOT
from workflow.schema import ConfigError

VERSIONS = {"24.0.1": "v2-24", "28.1.1": "v2-28"}


def copy_package(tmp_path: Path, version: str) -> Path:
    return copy_official(KAIWU_V2 / f"package_{version}", tmp_path / f"package_{version}", "agent_dqn")


@pytest.fixture
def package24(tmp_path) -> Path:
    return copy_package(tmp_path, "24.0.1")


@pytest.fixture
def package28(tmp_path) -> Path:
    return copy_package(tmp_path, "28.1.1")


def test_the_version_is_read_from_kaiwu_json_or_the_layout(package24, package28):
    assert platforms.detect(package24).name == "v2-24" and platforms.detect(package28).name == "v2-28"
    for package in (package24, package28):
        expected = platforms.detect(package).name
        (package / "kaiwu.json").unlink()
        assert platforms.detect(package).name == expected  # conf/algo_conf_back_to_the_realm_v2.toml beside agent_*
    assert list(platforms.VERSIONS)[:2] == ["v2-28", "v2-24"]  # newest first
    root, layout = package_layout(package24, "target_dqn", "v2-24")
    assert (layout.agent, layout.workflow, layout.config, layout.kaiwu_version) == (
        "agent_target_dqn.agent", "agent_target_dqn.workflow.train_workflow", "agent_target_dqn.conf.conf", "v2-24")
    with pytest.raises(ConfigError, match=r"app.algo = 'ppo'.*registers diy, dqn"):
        package_layout(package28, "ppo", "v2-28")
    # 28.1.1's configure_app.toml names neither the app nor the algorithm: app_conf's policy does
    assert platforms.get("v2-28").app_defaults(package28) == {"app": "back_to_the_realm_v2", "algo": "dqn"}


def test_predict_answers_and_the_env_as_each_family_expects():
    v24, v28 = platforms.get("v2-24"), platforms.get("v2-28")
    assert v24.predict_answer(["act"], 7) == (["act"], 7)  # act_data, model_version = agent.predict(...)
    assert v28.predict_answer(["act"], 7) == ["act"]  # act_data = agent.predict(...); act_data[0]
    observation_process, action_process = v28.eval_protocol(None, None)
    assert observation_process("o", "e") == {"obs": "o", "extra_info": "e"} and action_process(9) == 9
    from episodes.protocol import env_protocol
    from realm import make_env
    from workflow.config import load_config

    cfg = load_config(REPO_ROOT / "conf" / "back_to_the_realm_v2.toml", ['env.reveal_end_pos="found"', "env.map_seed=2"])
    env = make_env(**cfg.env.make_kwargs(platforms.get("v2-24")), seed=1)
    assert type(env).PROTOCOL == "v2" and env.reveal_end_pos == "found"
    obs, extra_info = env.reset()
    result = env.step(0)
    outcome = env_protocol(env, v24.env_protocol).step(result)
    assert (outcome.terminated, outcome.truncated, outcome.won, outcome.score.total_score) == (False, False, False, 0.0)
    with pytest.raises(ConfigError, match="reveal_end_pos"):
        load_config(REPO_ROOT / "conf" / "back_to_the_realm_v2.toml", ['env.reveal_end_pos="never"'])


def test_the_platform_modules_are_on_the_path_of_a_v2_package_only():
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "from arena_proto.back_to_the_realm_v2.custom_pb2 import RelativeDirection, RelativeDistance, Observation;"
            "from tools.train_env_conf_validate import read_usr_conf; from tools.metrics_utils import get_training_metrics;"
            "o = Observation(); o.frame_state.heroes.add(hero_id=1).pos.x = 5;"
            "print(RelativeDirection.RELATIVE_DIRECTION_NONE, RelativeDirection.SouthEast, RelativeDistance.VeryLarge,"
            " Observation.FromString(o.SerializeToString()).frame_state.heroes[0].pos.x, get_training_metrics())")
    out = subprocess.run([sys.executable, "-c", code, str(PLATFORM_ROOT)], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "8", "5", "5", "False"]
    assert not (REPO_ROOT / "tools" / "train_env_conf_validate.py").exists()  # the project's tools/ stays its own


def load_with_package(package: Path, algo: str, ckpt_dir: Path, *ids: int) -> dict[str, float]:
    return weight_sums(package, "back_to_the_realm_v2", algo, ckpt_dir, *ids, platform_root=PLATFORM_ROOT)


def short_episode() -> str:
    """28.1.1's episode settings with 150 steps: a one-step-trained agent rarely finishes."""
    from realm.back_to_the_realm_v2.presets import v2_preset

    usr_conf = v2_preset("v2-28-fixed")
    usr_conf["env_conf"]["map_cherry"]["max_step"] = 150
    return json.dumps(usr_conf)


def evaluate_and_render(package: Path, ckpt: Path, tmp_path: Path) -> None:
    out = tool("tools/evaluate.py", "--package", str(package), "--ckpt", str(ckpt), "--episodes", "2",
               "--usr-conf", short_episode(), "--quiet", "--out", str(tmp_path / "eval"))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = (tmp_path / "eval" / "episodes.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2 and "ckpt 1" in out.stdout and "planner" in out.stdout
    summary = (tmp_path / "eval" / "summary.csv").read_text().splitlines()
    assert summary[2].startswith("planner,") and float(summary[2].split(",")[3]) > 0  # the planner scores
    picture, gif = tmp_path / "episode.png", tmp_path / "episode.gif"
    out = tool("tools/render.py", "--package", str(package), "--ckpt", str(ckpt), "--usr-conf", short_episode(),
               "--png", str(picture), "--gif", str(gif), "--frame-stride", "10")
    assert out.returncode == 0, out.stdout + out.stderr
    assert picture.stat().st_size > 0 and gif.stat().st_size > 0 and "steps 150" in out.stdout


# (version, algo, without kaiwu.json): every official algorithm; one recognised from its layout alone.
TRAINED = [("24.0.1", "dqn", False), ("24.0.1", "target_dqn", True), ("24.0.1", "ppo", False),
           ("28.1.1", "dqn", False)]


@pytest.mark.slow
@pytest.mark.parametrize("version, algo, no_manifest", TRAINED, ids=[f"{v}-{a}" for v, a, _ in TRAINED])
def test_official_algorithm_passes_the_train_test_and_its_load_model_reads_the_checkpoints(
        tmp_path, version, algo, no_manifest):
    package = copy_package(tmp_path, version)
    if no_manifest:
        (package / "kaiwu.json").unlink()
    before = fingerprint(package)
    result = train(package, tmp_path / "runs", "--train-test", "--set", f'app.algo="{algo}"')
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    ckpt_dir = tmp_path / "runs" / "r" / "ckpt" / f"back_to_the_realm_v2_{algo}"
    sums = load_with_package(package, algo, ckpt_dir, 0, 1)
    assert sums["0"] != sums["1"]  # trained weights, read back by the package's own load_model
    assert fingerprint(package) == before  # the package is used as it is
    if (version, algo) == ("28.1.1", "dqn"):
        evaluate_and_render(package, ckpt_dir / "model.ckpt-1.pkl", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["24.0.1", "28.1.1"])
def test_the_diy_template_stops_naming_the_missing_checkpoint(tmp_path, version):
    """The official diy is a template: its save_model writes nothing (and its workflow plays no
    step), so its train test fails, saying so, as the platform's train_test.py never sees a model."""
    check_the_diy_template_stops(copy_package(tmp_path, version), tmp_path / "runs")


@pytest.mark.parametrize("key, value, named", [
    ("max_step", "2001", "max_step"),  # out of range
    ("treasure_pos", "[[80, 50], [80, 50]]", "treasure_pos"),  # a repeat
    ("start", "[0, 0]", "start"),  # a wall of the run's map
    ("treasure_num", "3", "treasure_num"),  # an unknown key
])
def test_a_bad_env_conf_stops_before_anything_starts_naming_file_and_key(package28, tmp_path, key, value, named):
    set_conf_line(package28 / "agent_dqn" / "conf" / "train_env_conf.toml", key, value)
    check_a_bad_env_conf_stops_the_run(package28, tmp_path / "runs", named)


@pytest.mark.parametrize("first_line, said", [
    ("import no_such_module_here", "failed at agent_ppo/agent.py:1 in <module>: ModuleNotFoundError"),
    ("import os; os._exit(3)", "ended its process (exit code 3) without an answer"),
])
def test_a_package_that_fails_to_import_stops_before_anything_starts_naming_where(package24, tmp_path, first_line,
                                                                                  said):
    """The launcher imports the package in a child of its fork server (so the launcher never imports
    torch); what the child raises, or its dying, reaches the terminal and nothing is started."""
    agent_py = package24 / "agent_ppo" / "agent.py"
    agent_py.write_text(first_line + "\n" + agent_py.read_text())
    result = train(package24, tmp_path / "runs", "--train-test", "--set", 'app.algo="ppo"', timeout_s=120)
    assert result.returncode == 2 and said in result.stderr, result.stderr
    assert not (tmp_path / "runs").exists()
