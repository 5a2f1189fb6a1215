"""What keeps a run's files and counters right, end to end with real launcher processes, a real
reverb server and the real simulator: one launcher holds a run at a time; a damaged
run_state.json does not reset a resumed run's counters; a signed but insane telemetry record is
refused like a forged one, never fatal."""
from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from test_training_system import kill_group, read, wait_until
from workflow import ckpt_files
from workflow.config import REPO_ROOT

SMOKE = str(REPO_ROOT / "conf" / "smoke.toml")
SMALL = ("--set", "app.aisrv_num=1")


def launcher(runs: Path, name: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "workflow.launcher", "--config", SMOKE, "--set", f'app.run_dir="{runs}"',
            "--set", f'app.run_name="{name}"', *SMALL, *extra]


def start(cmd: list[str], out: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=open(out, "w"), stderr=subprocess.STDOUT,
                            start_new_session=True, env=env)  # its own process group, killed as a whole


def finish(cmd: list[str], timeout_s: float = 120) -> subprocess.CompletedProcess:
    """Run a launcher to its end; one still running after timeout_s is killed with its children."""
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
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
def test_a_damaged_run_state_is_recovered_from_its_copy_or_stops_the_resume(tmp_path):
    runs = tmp_path / "runs"
    run = runs / "rs"
    first = finish(launcher(runs, "rs", "--set", "app.max_train_steps=3"))
    assert first.returncode == 0, first.stderr
    step, counters = newest_counters(run)
    assert step == 3 and counters["env_steps"] > 0
    state_file = ckpt_dir(run) / "run_state.json"
    state_file.write_text("{not json")

    resumed = finish(launcher(runs, "rs", "--resume", "--set", "app.max_train_steps=4"))
    assert resumed.returncode == 0, resumed.stderr
    assert f"{state_file} is unreadable" in resumed.stderr  # said on the terminal, not only in learner.log
    assert "the run's counters are recovered from the copy (checkpoint 3:" in resumed.stderr
    assert (f"resumed from model.ckpt-3.pkl: train step 3, {counters['env_steps']} env steps, "
            f"{counters['episodes']} episodes") in read(run / "log" / "learner.log")
    step, after = newest_counters(run)  # run_state.json is whole again, and the counters went on
    assert step == 4 and after["env_steps"] >= counters["env_steps"] and after["episodes"] >= counters["episodes"]

    state_file.write_text("{not json")
    (ckpt_dir(run) / "run_state.copy.json").write_text("[]")
    launcher_log = read(run / "log" / "launcher.log")
    stopped = finish(launcher(runs, "rs", "--resume", "--set", "app.max_train_steps=5"))
    assert stopped.returncode == 2, stopped.stderr
    assert f"the counters of run rs (env steps, episodes) are lost: {state_file} is unreadable" in stopped.stderr
    assert f"echo '{{}}' > {state_file}" in stopped.stderr
    assert read(run / "log" / "launcher.log") == launcher_log  # nothing started


def test_signed_telemetry_with_insane_numbers_is_refused_and_never_reaches_the_counters(tmp_path):
    reverb = pytest.importorskip("reverb")
    from workflow.adder import TelemetrySender
    from workflow.signing import SECRET_ENV, Signer

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
