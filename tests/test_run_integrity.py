"""What keeps a run's files and counters right, end to end with real launcher processes, a real
reverb server and the real simulator: one launcher holds a run at a time; a damaged
run_state.json does not reset a resumed run's counters; a signed but insane telemetry record is
refused like a forged one, never fatal; a disk that fills part-way through a checkpoint is a
write failure retried on its schedule, at the stop too; a checkpoint without its progress record
or its run-state entry is passed over, or resumed at zero, said on the terminal; a killed aisrv
never leaves frames learned that the run's env steps do not count."""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from test_training_system import kill_group, pids, read, wait_until
from workflow.checkpoints import ckpt_files
from workflow.config import REPO_ROOT

SMOKE = str(REPO_ROOT / "conf" / "smoke.toml")
SMALL = ("--set", "app.aisrv_num=1")


def launcher(runs: Path, name: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "workflow.launcher", "--config", SMOKE, "--set", f'app.run_dir="{runs}"',
            "--set", f'app.run_name="{name}"', *SMALL, *extra]


def start(cmd: list[str], out: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=open(out, "w"), stderr=subprocess.STDOUT,
                            process_group=0, env=env)  # its own process group, killed as a whole


def finish(cmd: list[str], timeout_s: float = 120) -> subprocess.CompletedProcess:
    """Run a launcher to its end; one still running after timeout_s is killed with its children."""
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            process_group=0)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise AssertionError(f"{cmd} still running after {timeout_s:.0f} s")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def ckpt_dir(run: Path) -> Path:
    return run / "ckpt" / "back_to_the_realm_ppo"


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under root: (mtime in ns, size)."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size) for p in [root, *root.rglob("*")]}


def newest_counters(run: Path) -> tuple[int, dict]:
    newest = ckpt_files.latest_checkpoint(ckpt_dir(run)).id
    return newest, json.loads((ckpt_dir(run) / "run_state.json").read_text())[str(newest)]["counters"]


@pytest.mark.slow
def test_a_run_is_held_by_one_launcher_at_a_time(tmp_path):
    runs = tmp_path / "runs"
    run = runs / "tw"
    holder = start(launcher(runs, "tw"), tmp_path / "holder.out")
    try:
        wait_until(lambda: (run / "log" / "launcher.log").exists(), 60, "the run's start", holder)
        os.killpg(holder.pid, signal.SIGSTOP)  # the holder and its children hold still: any change is the others'
        before = snapshot(run)
        for extra in ((), ("--resume",)):  # a second start, and a resume, while the first is starting
            second = finish(launcher(runs, "tw", *extra), timeout_s=30)
            assert second.returncode == 2, second.stderr
            assert f"run tw ({run}) is in use by another launcher (pid {holder.pid})" in second.stderr
        assert snapshot(run) == before  # nothing created or modified in the held run
        os.killpg(holder.pid, signal.SIGCONT)
        wait_until(lambda: "checkpoint model.ckpt-" in read(run / "log" / "learner.log"), 120,
                   "the first whole checkpoint", holder)
    finally:
        kill_group(holder)  # the holder dies at once (SIGKILL): the OS drops its lock
    newest = ckpt_files.latest_checkpoint(ckpt_dir(run)).id
    resumed = finish(launcher(runs, "tw", "--resume", "--set", f"app.max_train_steps={newest + 2}"))
    assert resumed.returncode == 0, resumed.stderr
    assert f"learner stopped (max_train_steps {newest + 2} reached)" in resumed.stderr


@pytest.mark.slow
def test_a_damaged_run_state_is_recovered_from_its_copy_or_stops_the_resume(trained_run, tmp_path):
    runs, run = copy_of(trained_run, tmp_path)
    step, counters = newest_counters(run)
    assert step == 10 and counters["env_steps"] > 0
    state_file = ckpt_dir(run) / "run_state.json"
    state_file.write_text("{not json")

    resumed = finish(launcher(runs, "tr", "--resume", "--set", "app.max_train_steps=11"))
    assert resumed.returncode == 0, resumed.stderr
    assert f"{state_file} is unreadable" in resumed.stderr  # said on the terminal, not only in learner.log
    assert "the run's counters are recovered from the copy (checkpoint 10:" in resumed.stderr
    assert (f"resumed from model.ckpt-10.pkl: train step 10, {counters['env_steps']} env steps, "
            f"{counters['episodes']} episodes") in read(run / "log" / "learner.log")
    step, after = newest_counters(run)  # run_state.json is whole again, and the counters went on
    assert step == 11 and after["env_steps"] >= counters["env_steps"] and after["episodes"] >= counters["episodes"]

    state_file.write_text("{not json")
    (ckpt_dir(run) / "run_state.copy.json").write_text("[]")
    launcher_log = read(run / "log" / "launcher.log")
    stopped = finish(launcher(runs, "tr", "--resume", "--set", "app.max_train_steps=12"))
    assert stopped.returncode == 2, stopped.stderr
    assert f"the counters of run tr (env steps, episodes) are lost: {state_file} is unreadable" in stopped.stderr
    assert f"echo '{{}}' > {state_file}" in stopped.stderr
    assert read(run / "log" / "launcher.log") == launcher_log  # nothing started


def test_signed_telemetry_with_insane_numbers_is_refused_and_never_reaches_the_counters(tmp_path):
    reverb = pytest.importorskip("workflow.transport.reverb_core")
    from workflow.transport.adder import TelemetrySender
    from workflow.transport.signing import SECRET_ENV, Signer

    secret = "the run's own key"
    runs = tmp_path / "runs"
    run = runs / "tel"
    proc = start(launcher(runs, "tel"), tmp_path / "tel.out", env={**os.environ, SECRET_ENV: secret})
    bogus = [("progress", {"env_steps": 1e300}), ("progress", {"env_steps": -5}), ("progress", {"env_steps": 2.5}),
             ("progress", {"env_errors": 10**12}), ("episode", {"total_score": 1e300, "win": 1.0}),
             ("model", {"version": 1e39, "pickup_latency_s": 0.1})]
    try:
        port = wait_until(lambda: re.search(r"replay server on port (\d+)", read(run / "log" / "launcher.log")), 120,
                          "the learner's replay server", proc).group(1)
        client = reverb.Client(f"127.0.0.1:{port}")
        sender = TelemetrySender(client, "insider", 1000, lambda: False, Signer(secret))
        for kind, values in bogus:
            sender.send(kind, values)
        sender.close()
        wait_until(lambda: f"refused/telemetry,{float(len(bogus))}" in read(run / "metrics.csv"), 60,
                   "the records counted as refused", proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(90) == 0, read(tmp_path / "tel.out")
    finally:
        kill_group(proc)
    with open(run / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert max(int(r["env_steps"]) for r in rows) < 10**6
    assert max(abs(float(r["value"])) for r in rows) < 1e30
    state = json.loads((ckpt_dir(run) / "run_state.json").read_text())
    assert all(0 <= value < 10**6 for entry in state.values() for value in entry["counters"].values())
    assert "refused 1 telemetry item(s) (ValueError: 1e+300 is out of range" in read(run / "log" / "learner.log")


# --- faults at the disk, in the checkpoint files and in the aisrv ------------------------------------

FAILED_WRITE = re.compile(r"(final )?checkpoint at train step (\d+) failed: (.*)")
WRITTEN = re.compile(r"checkpoint model\.ckpt-(\d+)\.pkl \(env steps")


def matches(path: Path, pattern: re.Pattern) -> list[re.Match]:
    return [m for m in map(pattern.search, read(path).splitlines()) if m]


def limit_file_size(pid: int, limit: int | None) -> None:
    """The largest file process `pid` may write (RLIMIT_FSIZE, `prlimit --fsize`): the kernel cuts a
    write off part-way past it, as a disk that fills mid-write does; None lifts the limit."""
    proc = psutil.Process(pid)
    hard = proc.rlimit(psutil.RLIMIT_FSIZE)[1]
    proc.rlimit(psutil.RLIMIT_FSIZE, (hard if limit is None else limit, hard))


def checkpoint_sizes(ckpt: Path) -> tuple[int, int] | None:
    """(weights, training state) bytes of the newest checkpoint written after a train step (the
    optimizer's moments exist then); None until there is one."""
    for found in reversed(ckpt_files.list_checkpoints(ckpt)):
        if found.id > 0:
            try:
                return found.path.stat().st_size, (ckpt / f"model.ckpt-{found.id}.train.pt").stat().st_size
            except FileNotFoundError:  # pruned meanwhile
                return None
    return None


def stray_files(ckpt: Path) -> list[str]:
    """Files of the checkpoint directory that are no whole checkpoint's (temp files, partial writes)."""
    whole = {c.id for c in ckpt_files.list_checkpoints(ckpt)}
    return sorted(p.name for p in ckpt.iterdir()
                  if p.name not in ("run_state.json", "run_state.copy.json")
                  and ckpt_files.parse_ckpt_id(p) not in whole)


@pytest.mark.slow
def test_a_disk_that_fills_mid_checkpoint_is_a_write_failure_retried_on_schedule_at_the_stop_too(tmp_path):
    """The learner may write files up to a size between a checkpoint's weights and its training
    state: each checkpoint's .pkl is written and its .train.pt cut off part-way, where torch's
    serializer raises a RuntimeError, not an OSError. That is a write failure, not the package's:
    logged naming the file, the error and the disk, its partial files removed, retried on the
    schedule while training goes on; the same for the final checkpoint of a SIGTERM stop."""
    runs = tmp_path / "runs"
    run = runs / "df"
    ckpt, log = ckpt_dir(run), run / "log" / "learner.log"
    proc = start(launcher(runs, "df", "--set", "model.hidden_size=256", "--set", "app.dump_model_freq=2",
                          "--set", "app.ckpt_write_retry_seconds=0.5", "--set", "app.ckpt_write_max_failures=10",
                          "--set", "app.max_minutes=4"), tmp_path / "df.out")
    try:
        weights, train = wait_until(lambda: checkpoint_sizes(ckpt), 150, "a checkpoint after a train step", proc)
        limit = (weights + train) // 2
        assert weights < limit < train
        learner = pids(run)["learner"]
        limit_file_size(learner, limit)
        failed = wait_until(lambda: matches(log, FAILED_WRITE), 60, "a failed checkpoint write", proc)[0]
        limit_file_size(learner, None)
        step = int(failed.group(2))
        assert failed.group(1) is None and f"model.ckpt-{step}.train.pt" in failed.group(3)
        assert "unexpected pos" in failed.group(3) and "free of" in failed.group(3)  # the error, and the disk
        assert "retrying in 0.5 s (1/10 failures in a row)" in failed.group(3)
        wait_until(lambda: any(int(m.group(1)) > step for m in matches(log, WRITTEN)), 60,
                   "a checkpoint after the disk recovered", proc)

        limit_file_size(learner, limit)  # full again, then a stop: the final checkpoint's write fails too
        failures = len(matches(log, FAILED_WRITE))
        wait_until(lambda: len(matches(log, FAILED_WRITE)) > failures, 60, "a failed write, then the stop", proc)
        os.killpg(proc.pid, signal.SIGTERM)
        final = wait_until(lambda: [m for m in matches(log, FAILED_WRITE) if m.group(1)], 90,
                           "a failed final checkpoint", proc)[0]
        limit_file_size(learner, None)
        assert proc.wait(90) == 0, read(tmp_path / "df.out")
    finally:
        kill_group(proc)
    assert "unexpected pos" in final.group(3) and "free of" in final.group(3)
    terminal = read(tmp_path / "df.out")
    assert f"learner: final checkpoint at train step {final.group(2)} failed: cannot write" in terminal
    assert "package code failed" not in read(log) + terminal
    assert f"learner stopped (stop requested) at train step {final.group(2)}" in read(log)
    assert ckpt_files.latest_checkpoint(ckpt).id == int(final.group(2))  # the retry wrote it whole
    assert ckpt_files.cut_off_checkpoints(ckpt) == [] and stray_files(ckpt) == []  # nothing partial left behind
    step, counters = newest_counters(run)
    assert step == int(final.group(2)) and counters["env_steps"] > 0


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    """The runs directory of a finished run "tr" with checkpoints 5 and 10; tests change a copy."""
    runs = tmp_path_factory.mktemp("trained") / "runs"
    done = finish(launcher(runs, "tr", "--set", "app.max_train_steps=10"))
    assert done.returncode == 0, done.stderr
    assert {5, 10} <= {c.id for c in ckpt_files.list_checkpoints(ckpt_dir(runs / "tr"))}
    return runs


def copy_of(trained: Path, tmp_path: Path) -> tuple[Path, Path]:
    runs = tmp_path / "runs"
    shutil.copytree(trained, runs)
    return runs, runs / "tr"


@pytest.mark.slow
def test_a_checkpoint_without_its_progress_record_is_passed_over_and_said_on_the_terminal(trained_run, tmp_path):
    """Without model.ckpt-10.progress.json the agent's train step and samples learned (the PPO
    schedules, the curriculum stage) would start again from 0: checkpoint 10 is passed over for 5,
    whose counters go on, and the terminal says so."""
    runs, run = copy_of(trained_run, tmp_path)
    ckpt = ckpt_dir(run)
    (ckpt / "model.ckpt-10.progress.json").unlink()
    at_five = json.loads((ckpt / "model.ckpt-5.progress.json").read_text())
    entry = json.loads((ckpt / "run_state.json").read_text())["5"]["counters"]
    resumed = finish(launcher(runs, "tr", "--resume", "--set", "app.max_train_steps=6"))
    assert resumed.returncode == 0, resumed.stderr
    assert re.search(r"skipping checkpoint \S*model\.ckpt-10\.pkl: .*model\.ckpt-10\.progress\.json is missing",
                     resumed.stderr), resumed.stderr
    assert (f"resumed from model.ckpt-5.pkl: train step 5, {entry['env_steps']} env steps, {entry['episodes']} "
            f"episodes") in resumed.stderr
    at_six = json.loads((ckpt / "model.ckpt-6.progress.json").read_text())
    assert at_six["train_step"] == 6 and at_six["samples_learned"] > at_five["samples_learned"]


@pytest.mark.slow
def test_a_stale_run_state_entry_never_resets_the_counters_without_saying_so(trained_run, tmp_path):
    """run_state.json has no entry for the newest checkpoint (10) but one for 15, which does not
    exist. With 5's entry there, 10 is passed over for 5 and its counters; without it, 10 resumes
    with the counters at 0. Either way the terminal names the checkpoint and the counters."""
    runs, run = copy_of(trained_run, tmp_path)
    ckpt = ckpt_dir(run)
    state = json.loads((ckpt / "run_state.json").read_text())
    five = state["5"]["counters"]
    for table, stop_at in (({"5": state["5"], "15": state["10"]}, 5), ({"15": state["10"]}, 10)):
        for name in ("run_state.json", "run_state.copy.json"):
            (ckpt / name).write_text(json.dumps(table))
        resumed = finish(launcher(runs, "tr", "--resume", "--set", f"app.max_train_steps={stop_at}"))
        assert resumed.returncode == 0, resumed.stderr
        assert "run_state.json has no entry for checkpoint 10" in resumed.stderr, resumed.stderr
        if stop_at == 5:
            assert (f"resumed from model.ckpt-5.pkl: train step 5, {five['env_steps']} env steps, "
                    f"{five['episodes']} episodes") in resumed.stderr
        else:
            assert "the run's counters (env steps, episodes) start at 0" in resumed.stderr
            assert "resumed from model.ckpt-10.pkl: train step 10, 0 env steps, 0 episodes" in resumed.stderr


@pytest.mark.slow
def test_a_killed_aisrv_never_leaves_frames_learned_that_the_env_steps_do_not_count(tmp_path):
    """An aisrv reports its env steps about once a second; SIGKILLed right after it sent its first
    samples (short segments, so they come at once), before any report, the learner still trains
    on them. The run's env steps in every checkpoint are at least the frames the agent learned."""
    reverb = pytest.importorskip("workflow.transport.reverb_core")
    runs = tmp_path / "runs"
    run = runs / "ak"
    proc = start(launcher(runs, "ak", "--set", "ppo.num_steps=8", "--set", "app.dump_model_freq=1",
                          "--set", "app.aisrv_restart_backoff_seconds=60"), tmp_path / "ak.out")
    try:
        port = wait_until(lambda: re.search(r"replay server on port (\d+)", read(run / "log" / "launcher.log")), 120,
                          "the learner's replay server", proc).group(1)
        client = reverb.Client(f"127.0.0.1:{port}")
        aisrv = wait_until(lambda: pids(run).get("aisrv-0"), 30, "the aisrv's pid", proc)

        def sample_stats():
            limiter = client.server_info(timeout=5)["sample"].rate_limiter_info
            return limiter.insert_stats.completed, limiter.sample_stats.completed

        deadline = time.monotonic() + 120
        while sample_stats()[0] < 2:  # its first samples are in the table: kill it now
            assert proc.poll() is None and time.monotonic() < deadline, read(tmp_path / "ak.out")
            time.sleep(0.005)
        os.kill(aisrv, signal.SIGKILL)
        psutil.Process(aisrv).wait(10) if psutil.pid_exists(aisrv) else None
        inserted = sample_stats()[0]
        wait_until(lambda: sample_stats()[1] == inserted // 2 * 2, 60, "the learner to train on them", proc)

        def newest_written() -> int:
            return max((int(m.group(1)) for m in matches(run / "log" / "learner.log", WRITTEN)), default=-1)

        wait_until(lambda: newest_written() == inserted // 2, 60, "the checkpoint of its last train step", proc)
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(90) == 0, read(tmp_path / "ak.out")
    finally:
        kill_group(proc)
    state = json.loads((ckpt_dir(run) / "run_state.json").read_text())
    checked = 0
    for found in ckpt_files.list_checkpoints(ckpt_dir(run)):
        learned = json.loads((ckpt_dir(run) / f"model.ckpt-{found.id}.progress.json").read_text())["samples_learned"]
        env_steps = state[str(found.id)]["counters"]["env_steps"]
        assert env_steps >= learned, (found.id, env_steps, learned)
        checked += learned > 0
    assert checked  # at least one checkpoint of frames learned
