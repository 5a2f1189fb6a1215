"""tools/sweep.py and its library tuning/: a bad sweep file is refused before anything starts; the
median over seeds is reported only at steps every run has passed; a killed sweep's running trial is
never counted; and end to end, a tiny sweep through the real launcher prunes the worse trial from
the runs' own evaluations, survives a SIGKILL mid-trial, and its best.toml is a run config the
launcher reads."""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO_ROOT
from tool_runs import run_tool
from tuning.curves import ready_steps, reduce
from tuning.study import counted, recover

sys.path.insert(0, str(REPO_ROOT / "tools"))
import sweep  # noqa: E402  (the tool: its main)

SHORT = "eval.usr_conf={diy={start=2,end=1,treasure_random=1,treasure_num=2,max_step=100,talent_type=1}}"
#: Trials 0 and 3 (and 2, killed before) end at their first evaluation (an evaluation target of score 0);
#: trial 1's target is out of reach, so its run trains until the sweep prunes it: its first evaluation
#: always comes before its end, however loaded the cores.
TINY = f"""
[sweep]
name = "tiny"
config = "{REPO_ROOT / 'conf' / 'smoke.toml'}"
set = ["app.aisrv_num=1", "app.dump_model_freq=2", "eval.every_train_steps=2", "eval.episodes=2", "{SHORT}",
       'eval.stop_metric="score"']
trials = 3
seeds = 1
budget_env_steps = 200000
enqueue = [{{ "eval.usr_conf.diy.max_step" = 40, "eval.stop_value" = 0.0 }},
           {{ "eval.usr_conf.diy.max_step" = 100, "eval.stop_value" = 1e9 }},
           {{ "eval.usr_conf.diy.max_step" = 40, "eval.stop_value" = 0.0 }}]

[sweep.objective]
metric = "eval/steps"
direction = "minimize"
reduce = "last"

[sweep.pruner]
type = "median"
step = "evaluation"
n_startup_trials = 1

[sweep.params]
"eval.usr_conf.diy.max_step" = {{ distribution = "categorical", choices = [40, 100] }}
"eval.stop_value" = {{ distribution = "categorical", choices = [0.0, 1e9] }}
"ppo.learning_rate" = {{ distribution = "log_uniform", low = 1e-4, high = 1e-3 }}
"""


def write(tmp_path, text: str):
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("change, named", [
    (('"ppo.learning_rate" = {', '"ppo.learning_rat" = {'), "ppo.learning_rat"),
    (('"ppo.learning_rate" = {', '"nosection.key" = {'), "nosection.key"),
    (("low = 1e-4, high = 1e-3", "low = 1e-3, high = 1e-4"), "low = 0.001 > high = 0.0001"),
    (("low = 1e-4, high = 1e-3", "low = 0.0, high = 1e-3"), "a log scale needs low > 0"),
    (("low = 1e-4, high = 1e-3", "low = -1.0, high = 1e-3"), "a log scale needs low > 0"),
    (('metric = "eval/steps"', 'metric = "eval/return"'), "metric = 'eval/return'"),
    (('direction = "minimize"', 'direction = "down"'), "direction = 'down'"),
    (("seeds = 1", "seeds = 1\nbudget = 3"), "[sweep] budget: unknown key"),
    (("seeds = 1", "seeds = 1\nseeds_at_once = 2"), "seeds_at_once = 2: at most seeds = 1"),
    (('type = "median"', 'type = "hyperband"'), "type = 'hyperband'"),
    (("choices = [40, 100]", "choices = [40, -5]"), "eval.usr_conf.diy.max_step"),
    (('"eval.every_train_steps=2", ', ""), "[eval] is off"),
    (("budget_env_steps = 200000", ""), "a budget is needed"),
    (('"app.aisrv_num=1"', '"app.seed=3"'), "the sweep sets app.seed itself"),
])
def test_a_bad_sweep_exits_2_naming_it_and_starts_nothing(tmp_path, capsys, change, named):
    path = write(tmp_path, TINY.replace(*change))
    assert TINY.replace(*change) != TINY
    out = tmp_path / "out"
    assert sweep.main([str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert named in err, err
    assert not out.exists()  # no study, no run directory


EVAL_OFF = f"""
[sweep]
name = "final-only"
config = "{REPO_ROOT / 'conf' / 'smoke.toml'}"
set = ["app.aisrv_num=1", "eval.episodes=2", "{SHORT}"]
trials = 1
seeds = 2
seeds_at_once = 1
budget_env_steps = 600

[sweep.objective]
metric = "eval/steps"
direction = "minimize"
reduce = "last"

[sweep.pruner]
type = "none"

[sweep.params]
"ppo.learning_rate" = {{ distribution = "log_uniform", low = 1e-4, high = 1e-3 }}
"""


def test_eval_off_is_refused_unless_the_final_checkpoint_alone_is_scored(tmp_path, capsys):
    """No evaluator beside the runs (whose CPU would come out of a minutes budget) is allowed
    only where nothing needs its scores: no pruner, and the final checkpoint evaluated."""
    for text in (EVAL_OFF.replace('type = "none"', 'type = "median"'),
                 EVAL_OFF.replace("seeds = 2", "seeds = 2\nfinal_eval = false")):
        out = tmp_path / "out"
        assert sweep.main([str(write(tmp_path, text)), "--out", str(out)]) == 2
        assert 'final_eval = true, [sweep.pruner] type = "none"' in capsys.readouterr().err and not out.exists()


@pytest.mark.slow
def test_a_sweep_without_an_evaluator_scores_each_runs_final_checkpoint_one_seed_at_a_time(tmp_path):
    assert sweep.main([str(write(tmp_path, EVAL_OFF)), "--out", str(tmp_path / "out")]) == 0
    out = tmp_path / "out" / "final-only"
    rows = list(csv.DictReader((out / "trials.csv").open()))
    assert [row["state"] for row in rows] == ["COMPLETE"] and float(rows[0]["seed0"]) > 0 and float(rows[0]["seed1"]) > 0
    runs = sorted((out / "runs").iterdir())
    assert [run.name for run in runs] == ["trial-0000-seed0", "trial-0000-seed1"]
    assert not [f for run in runs for f in run.rglob("evaluations.json")]  # no evaluator ran beside them
    times = [[float(line.split(",", 1)[0]) for line in (run / "metrics.csv").read_text().splitlines()[1:]] for run in runs]
    assert max(times[0]) < min(times[1])  # seeds_at_once = 1: seed 1 started after seed 0 had ended
    assert {p.name for p in (out / "plots").iterdir()} == {"history.png", "slice.png"}  # no intermediate values to draw


def test_the_command_line_exit_code_of_a_bad_sweep_is_2(tmp_path):
    path = write(tmp_path, TINY.replace('"ppo.learning_rate" = {', '"ppo.lr" = {'))
    result = run_tool("tools/sweep.py", str(path), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "ppo.lr" in result.stderr and "unknown key" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("address, named", [("local", "--ray local would start a Ray instance per run"),
                                             ("not an address", "expected local (start Ray on this machine)")])
def test_a_ray_address_the_runs_cannot_share_exits_2(tmp_path, capsys, address, named):
    out = tmp_path / "out"
    assert sweep.main([str(write(tmp_path, TINY)), "--out", str(out), "--ray", address]) == 2
    assert named in capsys.readouterr().err and not out.exists()


def test_the_median_over_seeds_is_reported_at_steps_every_run_has_passed():
    a = [(5.0, 10.0), (10.0, 30.0), (15.0, 20.0)]
    b = [(5.0, 20.0), (10.0, 10.0)]
    # step 15: b has not passed it and is still training
    assert ready_steps([a, b], [False, False], float("-inf"), "last", True) == [
        (5.0, 15.0, [10.0, 20.0]), (10.0, 20.0, [30.0, 10.0])]
    assert ready_steps([a, b], [False, True], 10.0, "best", True) == [(15.0, 25.0, [30.0, 20.0])]
    late = [(10.0, 1.0)]  # its first evaluation came at 10: step 5 has no value of it, and is passed over
    assert ready_steps([a, late], [False, False], float("-inf"), "last", True) == [(10.0, 15.5, [30.0, 1.0])]
    assert reduce(a, "best", False) == 10.0 and reduce([], "last", True) is None


def test_a_trial_left_running_is_failed_and_enqueued_again_never_counted(tmp_path):
    import optuna
    from optuna.trial import TrialState

    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 'study.db'}", study_name="s")
    done = study.ask()
    done.suggest_float("x", 0, 1)
    study.tell(done, 1.0)
    left = study.ask()  # the killed sweep's trial
    x = left.suggest_float("x", 0, 1)
    left.report(0.5, 1)
    assert counted(study) == 1
    assert recover(study) == [left.number]
    trials = study.get_trials()
    assert trials[left.number].state == TrialState.FAIL and trials[left.number].user_attrs["interrupted"]
    again = study.ask()
    assert again.suggest_float("x", 0, 1) == x and again.user_attrs["retry_of"] == left.number
    assert counted(study) == 1  # the interrupted one does not count; the retry is running


def trials_of(db):
    import optuna

    return optuna.load_study(study_name="tiny", storage=f"sqlite:///{db}").get_trials()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not open(f"/proc/{pid}/stat").read().split(") ")[1].startswith("Z")


def learner_started(out, number: int, seed: int) -> bool:
    log = out / "runs" / f"trial-{number:04d}-seed{seed}" / "log" / "launcher.log"
    return log.is_file() and "started learner" in log.read_text()


def launcher_pids(out, number: int) -> list[int]:
    locks = [out / "runs" / f"trial-{number:04d}-seed0" / "launcher.lock"]
    return [int(p.read_text()) for p in locks if p.is_file() and p.read_text().strip()]


@pytest.mark.slow
def test_a_tiny_sweep_prunes_the_worse_trial_resumes_after_a_kill_and_writes_its_best_as_a_run_config(tmp_path):
    """3 trials of one seed on the smoke config, the evaluation episodes' step limit searched
    (40 or 100: an untrained agent walks to it) and eval/steps minimized: trial 0 (40) ends at its
    first evaluation (its target); trial 1 (100) trains on until the median pruner prunes it at its
    first evaluation, against trial 0's, and the sweep stops its run cleanly. The sweep is killed
    (SIGKILL) during trial 2: its run stops with it; the resumed sweep marks trial 2 failed and
    reruns its parameters as trial 3, counting 3 finished trials, never 2 as complete."""
    from optuna.trial import TrialState

    path, out = write(tmp_path, TINY), tmp_path / "out" / "tiny"
    cmd = [sys.executable, "tools/sweep.py", str(path), "--out", str(tmp_path / "out")]
    first = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # trial 2's learner trains: it is mid-run
            assert first.poll() is None, first.stdout.read()
            if learner_started(out, 2, 0):
                break
            time.sleep(0.1)
        # at once: trial 2 reaches its target at its first evaluation, about a second from here
        killed = launcher_pids(out, 2)
        first.kill()
        first.wait()
    finally:
        if first.poll() is None:
            first.kill()
    assert trials_of(out / "study.db")[2].state == TrialState.RUNNING
    assert len(killed) == 1
    deadline = time.monotonic() + 120
    while any(pid_alive(p) for p in killed) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(pid_alive(p) for p in killed)  # the orphaned run stopped with its sweep

    resumed = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=400)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "trial(s) 2 were interrupted" in resumed.stdout
    trials = trials_of(out / "study.db")
    assert [t.state for t in trials] == [TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL, TrialState.COMPLETE]
    assert trials[0].value == 40.0 and trials[0].user_attrs["seed_values"] == [40.0]
    assert trials[1].params["eval.usr_conf.diy.max_step"] == 100 and trials[1].user_attrs["pruned_at"] == 1
    pruned = (out / "runs" / "trial-0001-seed0" / "log" / "launcher.log").read_text()
    assert "learner stopped (stop requested)" in pruned, pruned[-2000:]  # by the sweep, to its final checkpoint
    # the killed sweep's orphaned run got SIGUSR1 from its dying parent and stopped as Ctrl-C stops a run
    orphan = (out / "runs" / "trial-0002-seed0" / "log" / "launcher.log").read_text()
    assert "learner stopped (stop requested)" in orphan, orphan[-2000:]
    assert trials[2].user_attrs["interrupted"] and trials[3].user_attrs["retry_of"] == 2
    assert trials[3].params == trials[2].params
    rows = (out / "trials.csv").read_text().splitlines()
    assert len(rows) == 5 and rows[0].startswith("number,state,value,worst,seed0,eval.usr_conf.diy.max_step,")
    assert {p.name for p in (out / "plots").iterdir()} >= {"history.png", "slice.png", "importance.png"}

    # best.toml is a run config as the launcher reads it (from any directory): the best trial's values
    from workflow.config import load_config

    best = load_config(out / "best.toml")
    assert best.eval.usr_conf["diy"]["max_step"] == 40
    assert best.ppo.learning_rate == trials[0].params["ppo.learning_rate"]
