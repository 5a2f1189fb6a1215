"""The run's evaluator ([eval]): its settings, its records, the best checkpoint kept through
pruning, the stop at a target, its supervision, and the same for the official 2024 dqn package."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.official_packages import KAIWU_2024, copy_official
from tests.test_checkpoint_manager import checkpoint_at, ids, make_trainee, restore_platform_config  # noqa: F401
from tests.test_training_system import pid_alive
from workflow import platforms
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.evaluations import (EVALUATIONS_FILE, Evaluations, best_checkpoint, read_evaluations,
                                              write_evaluations)
from workflow.config import ConfigError, load_config
from workflow.launcher import check_evaluation


#: Short episodes (an untrained agent walks to the step limit): an evaluation takes seconds.
SHORT = ["--set", "eval.episodes=2", "--set",
         "eval.usr_conf={diy={start=2,end=1,treasure_random=1,treasure_num=2,max_step=100,talent_type=1}}"]


def train(run_dir: Path, *args: str, timeout_s: float = 240, wait: bool = True):
    cmd = [sys.executable, "-m", "workflow.launcher", "--set", f'app.run_dir="{run_dir}"', "--set", 'app.run_name="r"',
           *args]
    if not wait:
        return subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout_s)


def eval_rows(metrics_csv: Path) -> dict[int, dict[str, float]]:
    rows: dict[int, dict[str, float]] = {}
    for line in metrics_csv.read_text().splitlines()[1:]:
        _, role, step, _, key, value = line.split(",")
        if role == "eval":
            rows.setdefault(int(step), {})[key] = float(value)
    return rows


# --- settings ---------------------------------------------------------------------------------------

def test_eval_is_off_by_default_and_its_keys_are_checked():
    cfg = load_config("conf/smoke.toml")
    assert not cfg.eval.enabled
    with pytest.raises(ConfigError, match="stop_value needs evaluations"):
        load_config("conf/smoke.toml", ["eval.stop_value=0.9"])
    with pytest.raises(ConfigError, match="eval.stop_metric"):
        load_config("conf/smoke.toml", ['eval.stop_metric="mean"'])
    with pytest.raises(ConfigError, match="episodes"):
        load_config("conf/smoke.toml", ["eval.every_train_steps=5", "eval.episodes=0"])


def test_the_episodes_are_checked_before_the_run_starts():
    cfg = load_config("conf/smoke.toml", ["eval.every_train_steps=5", 'eval.preset="fixed-99"'])
    with pytest.raises(ConfigError, match="unknown preset 'fixed-99'.*leaderboard-2024"):
        check_evaluation(cfg)
    cfg = load_config("conf/smoke.toml", ["eval.every_train_steps=5", "eval.usr_conf={diy={start=99}}"])
    with pytest.raises(ConfigError, match=r"\[eval\]"):
        check_evaluation(cfg)
    cfg = load_config("conf/smoke.toml", ["eval.every_train_steps=5"])
    check_evaluation(cfg)  # the platform's own preset
    assert cfg.eval.episode_usr_conf(platforms.PROJECT)[0] == platforms.PROJECT.eval_preset


@pytest.mark.slow
def test_the_v2_agents_evaluations_play_the_v2_game_here_and_on_worker_processes(tmp_path):
    """A run of the project's v2 agent is evaluated in the game it plays (its hosting version's
    preset, the v2 env, its exploit and the v2 planner), alike in the evaluator's own process and
    on its pool of workers."""
    import toml

    from agent.back_to_the_realm_v2.ppo_agent import Agent
    from agent.back_to_the_realm_v2.ppo_config import Settings
    from evaluation.evaluator import Players, Setting
    from evaluation.pool import PLANNER
    from evaluation.back_to_the_realm_v2 import EpisodeV2
    from tests.test_export_kaiwu_v2 import v2_config

    config = tmp_path / "run.toml"
    config.write_text(v2_config())
    cfg = load_config(config, ["eval.every_train_steps=5", "eval.episodes=2"])
    check_evaluation(cfg)  # the hosting version's own preset
    assert Setting(cfg, config).label == "v2-28-fixed"
    near_end = {"env_conf": {"map_name": "map_cherry", "map_cherry": {  # 30 moves, 60 steps: seconds per episode
        "start": [111, 83], "end": [84, 95], "buff": [57, 68], "start_random": False, "end_random": False,
        "buff_random": False, "treasure_random": False, "treasure_count": 0, "treasure_pos": [],
        "obstacle_random": True, "obstacle_id": [], "max_step": 60, "buff_cooldown": 100, "talent_cooldown": 100}}}
    config.write_text(config.read_text() + toml.dumps({"eval": {"usr_conf": near_end}}))
    cfg = load_config(config, ["eval.every_train_steps=5", "eval.episodes=2"])
    check_evaluation(cfg)
    setting = Setting(cfg, config)
    assert setting.label == "usr_conf" and setting.env_kwargs["protocol"] == "v2"
    settings = Settings.from_dict({k: v for k, v in toml.loads(config.read_text()).items() if k in Settings.sections()})
    ckpt = str(Agent(agent_type="learner", settings=settings, seed=0).save_model(tmp_path / "ckpt", 5))
    played = {}
    for workers in (1, 2):
        players = Players(setting, workers)
        try:
            players.load(ckpt)
            played[workers] = [players.play(key, _Context()) for key in (PLANNER, ckpt)]
        finally:
            players.close()
    planner, agent = played[1]
    assert all(isinstance(r, EpisodeV2) for r in planner + agent)
    assert all(r.won for r in planner)  # the full-information planner walks to the end
    assert [r.seed for r in agent] == [0, 1]
    rows = lambda records: [(r.total_score, r.steps, r.chests) for r in records]  # noqa: E731
    assert [rows(r) for r in played[2]] == [rows(r) for r in played[1]]  # the same episodes in any process


class _Context:
    """The evaluator's ChildContext, as far as Players uses it."""

    def should_stop(self) -> bool:
        return False

    def beat(self) -> None:
        pass


# --- records and pruning ------------------------------------------------------------------------------

def test_the_best_evaluated_and_the_one_being_played_survive_pruning(tmp_path):
    trainee = make_trainee(tmp_path, keep=2, keep_best=False)
    trainee.ckpts.evaluated = True
    ckpt_dir = tmp_path / "ckpt"
    for step in (10, 20):
        checkpoint_at(trainee, step, extra={"counters": {}})
    write_evaluations(ckpt_dir, Evaluations(checkpoints={10: {"score": 90.0}, 20: {"score": 30.0}}))
    for step in (30, 40):
        checkpoint_at(trainee, step, extra={"counters": {}})
    assert ids(ckpt_dir) == [10, 30, 40]  # the best by evaluation (10) beside the newest two
    records = read_evaluations(ckpt_dir)
    records.pending = 30  # the evaluator is playing 30
    write_evaluations(ckpt_dir, records)
    for step in (50, 60):
        checkpoint_at(trainee, step, extra={"counters": {}})
    assert ids(ckpt_dir) == [10, 30, 50, 60]
    found, entry = best_checkpoint(ckpt_dir)
    assert (found.id, entry["score"]) == (10, 90.0)


def test_records_name_the_best_and_turn_into_eval_metrics(tmp_path):
    records = Evaluations(settings={"seed": 0}, planner={"score": 200.0},
                          checkpoints={5: {"score": 100.0, "ratio": 0.5, "win": 1.0, "chests": 2.0, "steps": 90.0},
                                       10: {"score": 100.0, "ratio": 0.5, "win": 0.5, "chests": 1.0, "steps": 99.0},
                                       15: {"score": 80.0, "ratio": None, "win": 0.0, "chests": 0.0, "steps": 100.0}})
    assert records.best == 10  # ties: the newer
    write_evaluations(tmp_path, records)
    assert json.loads((tmp_path / EVALUATIONS_FILE).read_text())["best"] == 10
    assert Evaluations.metrics(records.checkpoints[15]) == {"eval/score": 80.0, "eval/win": 0.0, "eval/chests": 0.0,
                                                            "eval/steps": 100.0}
    assert best_checkpoint(tmp_path) is None  # no checkpoint files there


# --- the evaluator in a run -----------------------------------------------------------------------------

@pytest.mark.slow
def test_a_killed_evaluator_is_restarted_and_a_resumed_run_stops_cleanly_at_its_target(tmp_path):
    args = ["--config", "conf/smoke.toml", "--set", "app.max_minutes=3", "--set", "eval.every_train_steps=5",
            "--set", 'eval.stop_metric="score"', *SHORT]
    # no step limit: the run trains until SIGTERM, sent once the restart is on record (a fast machine
    # must not reach a stop limit before the supervisor sees the kill)
    proc = train(tmp_path, *args, "--set", "eval.stop_value=1e9", wait=False)
    run = tmp_path / "r"
    ckpt_dir = run / "ckpt" / "back_to_the_realm_ppo"
    stats = run / "log" / "process_stats.json"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (read_evaluations(ckpt_dir) or Evaluations()).checkpoints:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.5)
        first = json.loads(stats.read_text())["pids"]["evaluator"]
        os.kill(first, signal.SIGKILL)
        while time.monotonic() < deadline + 60:
            assert proc.poll() is None, proc.stderr.read()
            now = json.loads(stats.read_text())
            if now.get("evaluator_restarts") == 1 and now["pids"].get("evaluator", first) != first:
                break
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "evaluator exited with code -9; restart 1/" in err
    assert json.loads(stats.read_text())["evaluator_restarts"] == 1
    assert not pid_alive(first)
    records = read_evaluations(ckpt_dir)
    assert records.target is None and records.planner["score"] > 0  # a target never reached changes nothing
    assert set(eval_rows(run / "metrics.csv")) == set(records.checkpoints)
    assert records.best in ids(ckpt_dir)  # kept through pruning (max_ckpt_keep = 2)
    stopped_at = ckpt_files.latest_checkpoint(ckpt_dir).id

    limit = stopped_at + 100
    resumed = train(tmp_path, *args, "--resume", "--set", f"app.max_train_steps={limit}",
                    "--set", "eval.stop_value=0.0")
    assert resumed.returncode == 0, resumed.stderr
    assert "best by evaluation: model.ckpt-" in resumed.stderr  # what --resume reports
    # the first session's evaluator and the resumed run's both started work
    assert (run / "log" / "evaluator.log").read_text().count("evaluating on usr_conf") >= 2
    records = read_evaluations(ckpt_dir)
    reached = records.target["train_step"]  # the first checkpoint the resumed evaluator played
    assert records.target == {"metric": "score", "value": 0.0, "train_step": reached} and reached >= stopped_at
    assert f"reached the evaluation target score 0 at train step {reached}" in resumed.stderr
    rows = eval_rows(run / "metrics.csv")
    assert set(rows) == set(records.checkpoints) and reached in rows
    assert set(rows[reached]) == {"eval/score", "eval/ratio", "eval/win", "eval/chests", "eval/steps"}
    final = ckpt_files.latest_checkpoint(ckpt_dir).id
    assert final >= reached and f"train step {final}," in resumed.stderr  # the stop's final checkpoint


@pytest.fixture
def package(tmp_path) -> Path:
    return copy_official(KAIWU_2024, tmp_path / "kaiwu", "dqn")


@pytest.mark.slow
def test_the_official_dqn_package_is_evaluated_with_its_own_exploit_and_stops_at_the_target(package, tmp_path):
    result = train(tmp_path, "--package", str(package), "--set", 'app.algo="dqn"', "--set", "app.dump_model_freq=2",
                   "--set", "app.replay_buffer_capacity=16", "--set", "app.preload_ratio=8", "--set",
                   "app.train_batch_size=4", "--set", "app.aisrv_num=1", "--set", "app.max_minutes=3",
                   "--set", "eval.every_train_steps=2", "--set", 'eval.stop_metric="score"', "--set", "eval.stop_value=0.0",
                   *SHORT)
    assert result.returncode == 0, result.stderr
    # the first checkpoint the evaluator plays meets the target (any score is >= 0): step 0, or a
    # later one where the learner's first steps came before the evaluator's first pick (a busy machine)
    reached = re.search(r"reached the evaluation target score 0 at train step (\d+)", result.stderr)
    assert reached, result.stderr
    step = int(reached.group(1))
    run = tmp_path / "r"
    records = read_evaluations(run / "ckpt" / "back_to_the_realm_dqn")
    assert records.settings["platform"] == "2024" and step in records.checkpoints
    assert records.target["train_step"] == step and step in eval_rows(run / "metrics.csv")
