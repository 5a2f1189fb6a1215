"""The platform's own code package trains here unchanged: `./train.sh --package DIR` with real
processes, a real reverb server and the official dqn / target_dqn from ../shared/kaiwu/
(copied to a temporary directory; the copy is checked to be left as it was)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tests.official_packages import KAIWU_2024, copy_official, fingerprint, small_replay, train, train_dqn_four_steps, weight_sums
from tests.test_training_system import pid_alive
from workflow.checkpoints import ckpt_files
from workflow.config import PACKAGE_DEFAULTS, ConfigError, load_config

SMALL_REPLAY = small_replay(batch=4)


@pytest.fixture
def package(tmp_path) -> Path:
    return copy_official(KAIWU_2024, tmp_path / "kaiwu", "dqn")


def load_with_package(package: Path, algo: str, ckpt_dir: Path, *ids: int) -> dict[str, float]:
    return weight_sums(package, "back_to_the_realm", algo, ckpt_dir, *ids, agent_module="{algo}.algorithm.agent")


@pytest.mark.slow
def test_official_dqn_trains_checkpoints_resumes_and_its_own_load_model_reads_them(package, tmp_path):
    before = fingerprint(package)
    result, run = train_dqn_four_steps(package, tmp_path / "runs", load_with_package, *SMALL_REPLAY)
    ckpt_dir = run / "ckpt" / "back_to_the_realm_dqn"
    state = json.loads((ckpt_dir / "run_state.json").read_text())
    assert state["4"]["counters"]["consumed_rows"] == 4 * 4
    metrics = (run / "metrics.csv").read_text()
    assert "learner" in metrics and "system/consumed_sps" in metrics
    assert (run / "pool" / "aisrv-0").is_dir()  # the aisrv loaded pool checkpoints with the package's load_model
    assert "package dqn, model pool checkpoint 0" in (run / "log" / "aisrv-0.log").read_text()
    assert "sample_dim" in result.stderr  # platform-only keys are listed once
    assert fingerprint(package) == before  # the package is used as it is

    resumed = train(package, tmp_path / "runs", "--resume", "--set", 'app.algo="dqn"', "--set", "app.dump_model_freq=2",
                    "--set", "app.max_train_steps=6", *SMALL_REPLAY)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resumed from model.ckpt-4" in (run / "log" / "learner.log").read_text()
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [0, 2, 4, 6]
    state = json.loads((ckpt_dir / "run_state.json").read_text())
    assert state["6"]["counters"]["consumed_rows"] == 6 * 4  # the run's counters went on from the checkpoint


@pytest.mark.slow
def test_a_learner_killed_while_the_package_writes_a_checkpoint_resumes_from_the_one_before(package, tmp_path):
    """SIGKILL after the official package wrote half of checkpoint 2 (as a power loss would leave
    it): --resume passes it over for checkpoint 0 and its counters, and writes 2 again whole."""
    insert_into_dqn_agent(package, "def save_model(self, path=None, id", "import os; cut = os.path.join(str(path), 'cut'); "
                          "(str(id) != '2' or 'ckpt' not in str(path) or os.path.exists(cut)) or (open(cut, 'w').close(), "
                          "open(os.path.join(str(path), 'model.ckpt-2.pkl'), 'wb').write(b'half a checkpoint'), "
                          "os.kill(os.getpid(), 9))")
    args = ("--set", 'app.algo="dqn"', "--set", "app.dump_model_freq=2", *SMALL_REPLAY)
    killed = train(package, tmp_path / "runs", *args, "--set", "app.max_train_steps=4")
    assert killed.returncode == 1 and "the learner exited with code -9" in killed.stderr
    ckpt_dir = tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_dqn"
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [0]
    assert [c.id for c in ckpt_files.cut_off_checkpoints(ckpt_dir)] == [2]

    resumed = train(package, tmp_path / "runs", "--resume", *args, "--set", "app.max_train_steps=4")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    learner_log = (tmp_path / "runs" / "r" / "log" / "learner.log").read_text()
    assert "passing over checkpoint" in learner_log and "model.ckpt-2.pkl: its write was cut off" in learner_log
    assert "resumed from model.ckpt-0.pkl: train step 0" in learner_log
    state = json.loads((ckpt_dir / "run_state.json").read_text())
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [0, 2, 4]
    assert state["2"] == {"counters": state["2"]["counters"]} and state["4"]["counters"]["consumed_rows"] == 4 * 4
    assert sum(load_with_package(package, "dqn", ckpt_dir, 2).values()) > 0  # 2 is whole again


@pytest.mark.slow
def test_official_target_dqn_passes_the_train_test(package, tmp_path):
    result = train(package, tmp_path / "runs", "--train-test")  # the package's own algo: target_dqn
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    ckpt_dir = tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_target_dqn"
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [0, 1]
    assert set(load_with_package(package, "target_dqn", ckpt_dir, 1)) == {"1"}


def insert_into_dqn_agent(package: Path, method: str, statement: str) -> int:
    """Put `statement` first in the body of the dqn Agent's `method` (a line that starts it);
    -> the 0-based line number of that method's def."""
    agent_py = package / "dqn" / "algorithm" / "agent.py"
    lines = agent_py.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if method in line)
    lines.insert(at + 1, "        " + statement)
    agent_py.write_text("\n".join(lines) + "\n")
    return at


@pytest.mark.slow
def test_an_exception_in_package_code_names_its_file_and_line_and_the_role(package, tmp_path):
    at = insert_into_dqn_agent(package, "def learn(self, list_sample_data):", "raise ValueError('broken learn')")
    result = train(package, tmp_path / "runs", "--set", 'app.algo="dqn"', "--train-test")
    assert result.returncode == 1
    where = f"dqn/algorithm/agent.py:{at + 2} in learn"
    assert "the learner exited with code 1" in result.stderr and where in result.stderr
    assert where in (tmp_path / "runs" / "r" / "log" / "learner.log").read_text()


def test_a_learner_that_fails_while_starting_ends_the_run_and_the_waiting_aisrv(package, tmp_path):
    """The aisrv start with the learner and wait for its port: when it never comes, they stop too."""
    insert_into_dqn_agent(package, "def __init__(self, agent_type",
                          "if agent_type == 'learner': raise RuntimeError('broken learner start')")
    result = train(package, tmp_path / "runs", "--set", 'app.algo="dqn"', *SMALL_REPLAY)
    assert result.returncode == 1
    assert "the learner exited with code 1 while starting" in result.stderr
    log = tmp_path / "runs" / "r" / "log"
    assert "broken learner start" in (log / "learner.log").read_text()
    assert "started aisrv-0" in (log / "launcher.log").read_text()
    stats = json.loads((log / "process_stats.json").read_text())
    assert not any(pid_alive(pid) for name, pid in stats["pids"].items() if name != "launcher")


def test_kaiwus_own_configure_app_toml_loads_with_the_platforms_defaults(package):
    cfg = load_config(package / "conf" / "configure_app.toml", [f'app.package="{package}"'], base=PACKAGE_DEFAULTS)
    app = cfg.app
    assert (app.algo, app.algorithm_on_policy_or_off_policy, app.replay_buffer_capacity, app.train_batch_size) == (
        "target_dqn", "off-policy", 4096, 256)
    assert app.reverb_sampler == "reverb.selectors.Uniform" and app.model_sync_seconds == 120.0
    assert cfg.platform_keys["sample_dim"] == 21624 and cfg.platform_keys["actor_addrs"] == {"train_one": ["127.0.0.1:8888"]}
    assert cfg.to_dict()["app"]["send_sample_size"] == 320  # kept for the package's CONFIG


def test_a_misspelt_key_is_still_an_error_naming_it(package, tmp_path):
    bad = tmp_path / "configure_app.toml"
    bad.write_text((package / "conf" / "configure_app.toml").read_text() + "\nreplay_bufer_capacity = 8\n")
    with pytest.raises(ConfigError, match="replay_bufer_capacity.*did you mean 'replay_buffer_capacity'"):
        load_config(bad, base=PACKAGE_DEFAULTS)
    # A bad value is named too. envs_per_aisrv > 1 is no longer refused for a package (its workflow gets
    # them all; a platform package uses envs[0]).
    conf = package / "conf" / "configure_app.toml"
    assert load_config(conf, [f'app.package="{package}"', "app.envs_per_aisrv=4"], base=PACKAGE_DEFAULTS).app.envs_per_aisrv == 4
    with pytest.raises(ConfigError, match="envs_per_aisrv must be >= 1, got 0"):
        load_config(conf, [f'app.package="{package}"', "app.envs_per_aisrv=0"], base=PACKAGE_DEFAULTS)


def test_a_missing_algorithm_folder_stops_before_anything_starts(package, tmp_path):
    result = train(package, tmp_path / "runs", "--set", 'app.algo="diy"', timeout_s=120)
    assert result.returncode == 2 and "app.algo = 'diy'" in result.stderr and "dqn, target_dqn" in result.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_a_workflow_that_keeps_failing_ends_the_run_with_exit_1(package, tmp_path):
    workflow_py = package / "dqn" / "train_workflow.py"
    lines = workflow_py.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("def workflow("))
    lines.insert(at + 1, "    raise RuntimeError('broken workflow')")
    workflow_py.write_text("\n".join(lines) + "\n")
    result = train(package, tmp_path / "runs", "--set", 'app.algo="dqn"', "--train-test")
    assert result.returncode == 1
    assert "every aisrv failed more than app.aisrv_restart_max times" in result.stderr
    assert f"package code failed at dqn/train_workflow.py:{at + 2} in workflow" in result.stderr


def patch_learn_to_produce_nan(package: Path) -> None:
    """The package's dqn learn with a NaN loss (so NaN gradients and weights) that it returns."""
    agent_py = package / "dqn" / "algorithm" / "agent.py"
    text = agent_py.read_text()
    loss = "        loss = torch.square(target_q - logits.gather(1, batch_action).view(-1)).mean()\n"
    last = "            self.last_report_monitor_time = now\n"
    assert loss in text and last in text
    text = text.replace(loss, loss + "        loss = loss * float('nan')\n")
    agent_py.write_text(text.replace(last, last + "\n        return {'value_loss': value_loss}\n"))


@pytest.mark.slow
def test_a_learn_that_produces_nan_is_counted_never_checkpointed_or_published_and_ends_the_run(package, tmp_path):
    patch_learn_to_produce_nan(package)
    result = train(package, tmp_path / "runs", "--set", 'app.algo="dqn"', "--set", "app.dump_model_freq=2",
                   "--set", "app.max_nonfinite_train_steps=5", "--set", "app.max_train_steps=12",
                   "--set", "app.model_file_sync_per_minutes=0", "--set", "app.model_file_sync_per_seconds=0.2",
                   *SMALL_REPLAY)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "dqn Agent.learn (dqn/algorithm/agent.py) left NaN or infinite values on 5 train steps in a row" in result.stderr
    assert "app.max_nonfinite_train_steps = 5" in result.stderr and "--resume" in result.stderr
    run = tmp_path / "runs" / "r"
    learner_log = (run / "log" / "learner.log").read_text()
    assert "train step 1: dqn Agent.learn (dqn/algorithm/agent.py) left NaN or infinite values (learner/value_loss, " \
           "model." in learner_log  # warned at the first one
    assert "checkpoint at train step 2 not written: checkpoint 2: the weights hold NaN" in learner_log
    ckpt_dir = run / "ckpt" / "back_to_the_realm_dqn"
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [0]  # the newest good one stays the newest
    assert sorted(json.loads((ckpt_dir / "run_state.json").read_text())) == ["0"]
    pool = run / "pool" / "aisrv-0"
    assert sorted(p.name for p in pool.iterdir()) == ["model.ckpt-0.pkl"]  # the aisrv only ever got model 0
    rows = [line.split(",") for line in (run / "metrics.csv").read_text().splitlines()]
    counted = [float(r[5]) for r in rows if r[4] == "system/nonfinite_train_steps"]
    assert counted and counted[-1] == 5.0

    # NaN weights under a newer id, with an entry in the run state (a copy from elsewhere; the
    # package's own load_model takes them): --resume passes them over for the newest sound
    # checkpoint, and leaves the file alone.
    weights = torch.load(ckpt_dir / "model.ckpt-0.pkl", weights_only=True)
    torch.save({k: v.clone().fill_(float("nan")) if v.is_floating_point() else v for k, v in weights.items()},
               ckpt_dir / "model.ckpt-9.pkl")
    state = json.loads((ckpt_dir / "run_state.json").read_text())
    for name in ("run_state.json", "run_state.copy.json"):
        (ckpt_dir / name).write_text(json.dumps({**state, "9": state["0"]}))
    resumed = train(package, tmp_path / "runs", "--resume", "--set", 'app.algo="dqn"', "--set", "app.dump_model_freq=2",
                    "--set", "app.max_nonfinite_train_steps=3", *SMALL_REPLAY)
    assert resumed.returncode == 1 and "on 3 train steps in a row" in resumed.stderr
    learner_log = (run / "log" / "learner.log").read_text()
    assert "skipping checkpoint" in learner_log and "model.ckpt-9.pkl: NonFiniteWeights" in learner_log
    assert "resumed from model.ckpt-0.pkl" in learner_log
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [0, 9]
