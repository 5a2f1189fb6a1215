"""gorge_chase code packages (15.0.1, the 2026 game) train here unchanged: the official agent_ppo,
copied from ../shared/kaiwu_gorge, passes `./train.sh --package DIR --train-test` with real
processes and a real reverb server, trains on with --resume, its checkpoints are read back by its
own load_model in a fresh process, and one is evaluated and rendered with its own exploit; the
package is left byte for byte as it was. One trained run is shared by the module."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import toml

from tests.official_packages import (KAIWU_GORGE, check_a_bad_env_conf_stops_the_run, check_the_diy_template_stops,
                                     copy_official, fingerprint, set_conf_line, tool, train, weight_sums)
from workflow import platforms
from workflow.host.kaiwu_package import package_layout
from workflow.platforms.v15 import PLATFORM_ROOT
from workflow.schema import ConfigError

#: a handful of small train steps
SMALL = ("--set", "app.max_train_steps=3", "--set", "app.replay_buffer_capacity=16", "--set", "app.train_batch_size=4")


def copy_package(dest: Path) -> Path:
    return copy_official(KAIWU_GORGE, dest, "agent_ppo")


@pytest.fixture
def package(tmp_path) -> Path:
    return copy_package(tmp_path / "package")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(package, runs dir, fingerprint before, the train test's result): the official ppo after
    `--train-test` with three small train steps."""
    root = tmp_path_factory.mktemp("gorge")
    package = copy_package(root / "package")
    before = fingerprint(package)
    result = train(package, root / "runs", "--train-test", *SMALL)
    return package, root / "runs", before, result


def ckpt_dir(runs: Path) -> Path:
    return runs / "r" / "ckpt" / "gorge_chase_ppo"


def test_the_version_is_read_from_kaiwu_json_or_the_layout(package):
    assert json.loads((package / "kaiwu.json").read_text())["project_code"] == "gorge_chase"
    assert platforms.detect(package).name == "15"
    (package / "kaiwu.json").unlink()
    assert platforms.detect(package).name == "15"  # conf/algo_conf_gorge_chase.toml beside agent_*
    root, layout = package_layout(package, "ppo", "15")
    assert (layout.agent, layout.workflow, layout.config, layout.agent_class, layout.workflow_function) == (
        "agent_ppo.agent", "agent_ppo.workflow.train_workflow", "agent_ppo.conf.conf", "Agent", "workflow")
    with pytest.raises(ConfigError, match=r"app.algo = 'dqn'.*registers diy, ppo"):
        package_layout(package, "dqn", "15")
    # configure_app.toml names neither the app nor the algorithm: app_conf_gorge_chase.toml's policy does
    assert platforms.get("15").app_defaults(package) == {"app": "gorge_chase", "algo": "ppo"}


def test_samples_are_packed_by_their_declared_widths_and_the_agent_routes_through_the_framework():
    sys.path.insert(0, str(PLATFORM_ROOT))
    try:
        from common_python.utils.common_func import create_cls
        from common_python.utils.workflow_disaster_recovery import handle_disaster_recovery
    finally:
        sys.path.remove(str(PLATFORM_ROOT))
    from kaiwudrl.interface.agent import BaseAgent

    Sample = create_cls("GorgeTestSample", obs=3, act=1)
    assert Sample.FIELD_DIMS == {"obs": 3, "act": 1} and Sample().obs is None
    protocols, width = platforms.get("15").sample_rows({"SampleData": Sample}, object)
    row = protocols["SampleData2NumpyData"](Sample(obs=np.array([1, 2, 3]), act=np.array([4])))
    assert width == 4 and row.tolist() == [1, 2, 3, 4]
    back = protocols["NumpyData2SampleData"](row)
    assert back.obs.tolist() == [1, 2, 3] and back.act.tolist() == [4]
    with pytest.raises(ValueError, match=r"SampleData.obs holds 2 value\(s\); its create_cls declares 3"):
        protocols["SampleData2NumpyData"](Sample(obs=np.zeros(2), act=np.zeros(1)))
    with pytest.raises(ValueError, match="int width per field"):
        platforms.get("15").sample_rows({"SampleData": create_cls("Loose", obs=None)}, object)

    class Handler:
        calls = []

        def __getattr__(self, kind):
            return lambda agent, method, *args, **kwargs: self.calls.append(kind) or method(agent, *args, **kwargs)

    class Agent(BaseAgent):
        def predict(self, list_obs_data):
            return [len(list_obs_data)]

        def exploit(self, env_obs):
            return self.predict([env_obs])[0]  # the framework sees one call

        def learn(self, list_sample_data):
            return len(list_sample_data)

    agent = Agent()
    assert agent.exploit({}) == 1 and agent.send_sample_data([1, 2]) == 2  # no framework: as written
    agent.framework_handler = Handler()
    assert agent.exploit({}) == 1 and agent.send_sample_data([1]) == 1
    assert Handler.calls == ["exploit", "learn"]
    log = type("Log", (), {"error": lambda self, message: None})()
    assert handle_disaster_recovery({"observation": None, "extra_info": {"result_code": 0}}, log)
    assert handle_disaster_recovery({"observation": {}, "extra_info": {"result_code": -1}}, log)
    assert not handle_disaster_recovery({"observation": {"step_no": 0}, "extra_info": {"result_code": 0}}, log)


@pytest.mark.slow
def test_the_official_ppo_passes_the_train_test_and_trains_a_few_steps(trained):
    package, runs, before, result = trained
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    assert "reverb_error_buffer" in result.stderr  # accepted and named on the terminal
    ids = sorted(int(p.name.split("-")[1].split(".")[0]) for p in ckpt_dir(runs).glob("model.ckpt-*.pkl"))
    assert ids[0] == 0 and ids[-1] >= 1
    assert fingerprint(package) == before


@pytest.mark.slow
def test_its_checkpoints_load_in_a_fresh_process_with_its_own_load_model(trained):
    package, runs, _, result = trained
    assert result.returncode == 0, result.stderr
    sums = weight_sums(package, "gorge_chase", "ppo", ckpt_dir(runs), 0, 1, platform_root=PLATFORM_ROOT)
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
    assert len(rows) == 1 + 2 * 2 and "ckpt 1" in out.stdout and "gorge_chase" in out.stdout
    summary = (tmp_path / "eval" / "summary.csv").read_text().splitlines()
    assert summary[2].startswith("planner,") and float(summary[2].split(",")[3]) > 0  # the reference scores
    episodes = json.loads((tmp_path / "eval" / "results.json").read_text())["episodes"]
    maps = [episode["usr_conf"]["env_conf"]["map"] for episode in episodes if episode["policy"] != "planner"]
    assert maps == [[1], [2]]  # one map per episode, in the list's order
    picture, gif = tmp_path / "episode.png", tmp_path / "episode.gif"
    out = tool("tools/render.py", "--package", str(package), "--ckpt", str(ckpt), "--usr-conf", SHORT,
               "--png", str(picture), "--gif", str(gif))
    assert out.returncode == 0, out.stdout + out.stderr
    assert picture.stat().st_size > 0 and gif.stat().st_size > 0
    assert fingerprint(package) == before


@pytest.mark.slow
def test_the_packages_own_train_env_conf_plays_with_usr_conf_package(trained, tmp_path):
    """`--usr-conf package` plays the package's own agent_ppo/conf/train_env_conf.toml, and the
    terminal says which episodes play (a default preset says it is the platform's default)."""
    package, runs, before, result = trained
    assert result.returncode == 0, result.stderr
    ckpt = ckpt_dir(runs) / "model.ckpt-1.pkl"
    out = tool("tools/evaluate.py", "--package", str(package), "--ckpt", str(ckpt), "--episodes", "1",
               "--usr-conf", "package", "--no-planner", "--quiet", "--out", str(tmp_path / "eval"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "episodes: the package's own agent_ppo/conf/train_env_conf.toml" in out.stdout
    played = json.loads((tmp_path / "eval" / "results.json").read_text())["episodes"][0]["usr_conf"]["env_conf"]
    own = toml.loads((package / "agent_ppo" / "conf" / "train_env_conf.toml").read_text())["env_conf"]
    assert played["max_step"] == own["max_step"] and played["treasure_count"] == own["treasure_count"]
    alone = tool("tools/evaluate.py", "--ckpt", str(ckpt), "--usr-conf", "package", "--episodes", "1", "--quiet")
    assert alone.returncode == 2 and "give --package" in alone.stderr
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


@pytest.mark.parametrize("key, value", [("treasure_count", "11"), ("map_random", "1"), ("monster_speedup", "0")])
def test_a_bad_train_env_conf_stops_before_anything_starts_naming_file_and_key(package, tmp_path, key, value):
    set_conf_line(package / "agent_ppo" / "conf" / "train_env_conf.toml", key, value)
    check_a_bad_env_conf_stops_the_run(package, tmp_path / "runs", named=key)


def test_train_test_py_names_the_allowed_algorithms():
    from kaiwudrl.common.utils.train_test_utils import run_train_test

    with pytest.raises(ValueError, match="allowed ppo, diy"):
        run_train_test("dqn", ["ppo", "diy"])
