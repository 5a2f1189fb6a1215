"""2025 code packages (Kaiwu 18.0.2) train here unchanged: `./train.sh --package DIR` with real
processes, a real reverb server and the official agent_dqn / agent_target_dqn from
../shared/kaiwu18/package (copied to a temporary directory; the copy is checked to be left as it was)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.official_packages import (KAIWU_18, KAIWU_2024, copy_official, fingerprint, small_replay, tool, train,
                                     train_dqn_four_steps, weight_sums)
from workflow import platforms
from workflow.checkpoints import ckpt_files
from workflow.host.kaiwu_package import KAIWU18_DIR, detect_kaiwu_version, package_layout
from workflow.schema import ConfigError

SMALL_REPLAY = small_replay(batch=2)


@pytest.fixture
def package(tmp_path) -> Path:
    return copy_official(KAIWU_18, tmp_path / "kaiwu18", "agent_dqn")


def load_with_package(package: Path, algo: str, ckpt_dir: Path, *ids: int) -> dict[str, float]:
    return weight_sums(package, "back_to_the_realm", algo, ckpt_dir, *ids, platform_root=KAIWU18_DIR)


def insist_on_float32_tensors(package: Path) -> None:
    """The official dqn's learn, told to fail unless the learner hands it what the 2025 platform's
    does: SampleData whose fields are float32 torch tensors."""
    algorithm = package / "agent_dqn" / "algorithm" / "algorithm.py"
    lines = algorithm.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "def learn(self, list_sample_data):" in line)
    lines.insert(at + 1, "        assert all(isinstance(s.obs, torch.Tensor) and s.obs.dtype == torch.float32 "
                         "for s in list_sample_data), 'not float32 tensors'")
    algorithm.write_text("\n".join(lines) + "\n")


def test_the_version_is_read_from_kaiwu_json_or_the_layout(package, tmp_path):
    assert detect_kaiwu_version(package) == "18"
    (package / "kaiwu.json").unlink()
    assert detect_kaiwu_version(package) == "18"  # conf/algo_conf_back_to_the_realm.toml beside agent_* folders
    if (KAIWU_2024 / "dqn").is_dir():
        assert detect_kaiwu_version(KAIWU_2024) == "2024"
    (package / "kaiwu.json").write_text("{not json")
    with pytest.raises(ConfigError, match="kaiwu.json.*version"):
        detect_kaiwu_version(package)
    (package / "kaiwu.json").write_text(json.dumps({"version": "10.3.4"}))
    assert detect_kaiwu_version(package) == "2024"


def test_the_algorithm_comes_from_the_packages_algo_conf(package):
    root, layout = package_layout(package, "target_dqn", "18")
    assert (layout.agent, layout.workflow, layout.config, layout.definition) == (
        "agent_target_dqn.agent", "agent_target_dqn.workflow.train_workflow", "agent_target_dqn.conf.conf",
        "agent_target_dqn.feature.definition")
    with pytest.raises(ConfigError, match=r"app.algo = 'ppo'.*algo_conf_back_to_the_realm.toml registers diy, dqn, target_dqn"):
        package_layout(package, "ppo", "18")
    (package / "agent_dqn" / "conf" / "train_env_conf.toml").unlink()
    with pytest.raises(ConfigError, match="lacks agent_dqn/conf/train_env_conf.toml"):
        package_layout(package, "dqn", "18")
    with pytest.raises(ConfigError, match="lacks dqn/algorithm/agent.py"):  # told it is a 2024 package
        package_layout(package, "dqn", "2024")


@pytest.mark.slow
def test_official_dqn_trains_on_tensors_checkpoints_resumes_and_its_own_load_model_reads_them(package, tmp_path):
    insist_on_float32_tensors(package)
    before = fingerprint(package)
    common = ["--set", 'app.algo="dqn"', "--set", "app.dump_model_freq=2", *SMALL_REPLAY]
    _, run = train_dqn_four_steps(package, tmp_path / "runs", load_with_package, *SMALL_REPLAY)
    ckpt_dir = run / "ckpt" / "back_to_the_realm_dqn"
    aisrv_log = (run / "log" / "aisrv-0.log").read_text()
    assert "package dqn, model pool checkpoint 0" in aisrv_log
    assert fingerprint(package) == before  # the package is used as it is

    resumed = train(package, tmp_path / "runs", "--resume", "--set", "app.max_train_steps=6", *common)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resumed from model.ckpt-4" in (run / "log" / "learner.log").read_text()
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [0, 2, 4, 6]


# A one-step-trained agent rarely finishes; the official Preprocessor costs ~5-8 ms a step, so the
# episodes it is evaluated and rendered on stop after 150 steps instead of the presets' 2000.
SHORT_EPISODE = json.dumps({"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 3, "max_step": 150,
                                    "talent_type": 1}})


@pytest.mark.slow
def test_a_checkpoint_is_evaluated_and_rendered_with_the_packages_own_features(package, tmp_path):
    result = train(package, tmp_path / "runs", "--set", 'app.algo="dqn"', "--set", "app.max_train_steps=1", *SMALL_REPLAY)
    assert result.returncode == 0, result.stdout + result.stderr
    ckpt = tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_dqn" / "model.ckpt-1.pkl"
    out = tool("tools/evaluate.py", "--package", str(package), "--ckpt", str(ckpt), "--episodes", "1", "--workers", "1",
               "--usr-conf", SHORT_EPISODE, "--no-planner", "--quiet", "--out", str(tmp_path / "eval"))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = (tmp_path / "eval" / "episodes.csv").read_text().splitlines()
    assert len(rows) == 2 and "ckpt 1" in out.stdout  # the run's algorithm (dqn), not the package's default
    picture = tmp_path / "episode.png"
    out = tool("tools/render.py", "--package", str(package), "--ckpt", str(ckpt), "--usr-conf", SHORT_EPISODE,
               "--no-gif", "--png", str(picture))
    assert out.returncode == 0, out.stdout + out.stderr
    assert picture.stat().st_size > 0


@pytest.mark.slow
def test_official_target_dqn_passes_the_train_test(package, tmp_path):
    result = train(package, tmp_path / "runs", "--train-test")  # the package's own algo: target_dqn
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr and "model.ckpt-1.pkl written" in result.stderr
    ckpt_dir = tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_target_dqn"
    assert (ckpt_dir / "model.ckpt-1.pkl").is_file()
    assert set(load_with_package(package, "target_dqn", ckpt_dir, 1)) == {"1"}


@pytest.mark.parametrize("line, key", [("treasure_random = 1", "treasure_random"), ("max_step = 2001", "max_step"),
                                       ("treasure_count = 8\nstart_point = 3", "start_point")])
def test_a_bad_env_conf_stops_before_anything_starts_naming_file_and_key(package, tmp_path, line, key):
    conf = package / "agent_target_dqn" / "conf" / "train_env_conf.toml"
    text = conf.read_text()
    replaced = line.split(" = ")[0].split("\n")[0]
    lines = [line if raw.startswith(replaced + " ") else raw for raw in text.splitlines()]
    conf.write_text("\n".join(lines) + "\n")
    result = train(package, tmp_path / "runs", timeout_s=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "train_env_conf.toml" in result.stderr and key in result.stderr
    assert not (tmp_path / "runs").exists()


def test_an_unregistered_algorithm_stops_before_anything_starts(package, tmp_path):
    result = train(package, tmp_path / "runs", "--set", 'app.algo="ppo"', timeout_s=120)
    assert result.returncode == 2 and "app.algo = 'ppo'" in result.stderr and "dqn, target_dqn" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_the_window_and_the_version_are_config_keys(tmp_path):
    from realm import make_env
    from realm.back_to_the_realm.env18 import RealmEnv18
    from workflow.config import load_config

    cfg = load_config(REPO_ROOT / "conf" / "configure_app.toml", ['env.map_window="platform"'])
    env = make_env(**cfg.env.make_kwargs(platforms.get("18")))
    assert isinstance(env, RealmEnv18) and env.map_window == "platform"
    assert env.flash_blocked == "nearest"  # flash_blocked = "auto": the 2025 guide's rule for a 2025 package
    env_2024 = make_env(**cfg.env.make_kwargs(platforms.get("2024")))
    assert not isinstance(env_2024, RealmEnv18) and env_2024.flash_blocked == "fail"
    with pytest.raises(ConfigError, match="map_window"):
        load_config(REPO_ROOT / "conf" / "configure_app.toml", ['env.map_window="centre"'])
    with pytest.raises(ConfigError, match="kaiwu_version.*auto.*2024.*18"):
        load_config(REPO_ROOT / "conf" / "configure_app.toml", ['app.kaiwu_version="2025"'])
    with pytest.raises(ConfigError, match="--package"):  # the project's agents speak 2024 here
        load_config(REPO_ROOT / "conf" / "configure_app.toml", ['app.kaiwu_version="18"'])
