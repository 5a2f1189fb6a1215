"""Clean stops through the real launcher and processes: a stop limit and a SIGTERM sent to the
whole process group both end with exit 0 and a final checkpoint whose counters equal what the
aisrv played and what metrics.csv lists; a --resume session plays new episodes (new seeds)."""
from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workflow.checkpoints import ckpt_files
from workflow.config import REPO_ROOT

SMOKE = str(REPO_ROOT / "conf" / "smoke.toml")
STOPPED = re.compile(r"(aisrv-\d+) stopped: (\d+) env steps, (\d+) episodes")
SEED = re.compile(r"(aisrv-\d+) \(session (\d+), generation \d+\) starting .* \(env seed (\d+)\)")


def launcher(run_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "workflow.launcher", "--config", SMOKE, "--set", f'app.run_dir="{run_dir}"',
            "--set", 'app.run_name="s"', *extra]


def aisrv_totals(log_dir: Path, since: dict[str, int]) -> tuple[int, int]:
    """(env steps, episodes) the aisrv processes said they played, in log lines after `since`."""
    steps = episodes = 0
    for log in log_dir.glob("aisrv-*.log"):
        lines = log.read_text().splitlines()[since.get(log.name, 0):]
        for match in filter(None, map(STOPPED.search, lines)):
            steps, episodes = steps + int(match.group(2)), episodes + int(match.group(3))
    return steps, episodes


def line_counts(log_dir: Path) -> dict[str, int]:
    return {log.name: len(log.read_text().splitlines()) for log in log_dir.glob("aisrv-*.log")}


def episode_rows(run: Path) -> int:
    with open(run / "metrics.csv", newline="") as f:
        return sum(1 for r in csv.DictReader(f) if r["role"] == "aisrv" and r["key"] == "episode/total_score")


def final_counters(run: Path) -> dict:
    directory = run / "ckpt" / "back_to_the_realm_ppo"
    newest = ckpt_files.latest_checkpoint(directory)
    return json.loads((directory / "run_state.json").read_text())[str(newest.id)]["counters"]


def counters_while_training(run: Path) -> dict:
    """The newest checkpoint's counters; a checkpoint pruned between listing and reading is retried."""
    for _ in range(20):
        try:
            return final_counters(run)
        except (FileNotFoundError, RuntimeError, KeyError, ValueError):
            time.sleep(0.1)
    return final_counters(run)


def env_seeds(log_dir: Path) -> dict[tuple[str, int], int]:
    seeds = {}
    for log in log_dir.glob("aisrv-*.log"):
        for match in filter(None, map(SEED.search, log.read_text().splitlines())):
            seeds[(match.group(1), int(match.group(2)))] = int(match.group(3))
    return seeds


@pytest.mark.slow
def test_stop_limit_and_group_sigterm_stop_cleanly_with_exact_counters(tmp_path):
    run = tmp_path / "runs" / "s"
    # 1. A stop limit: the learner stops training, the launcher stops the aisrv, their last
    #    reports are counted, then the final checkpoint is written.
    first = subprocess.run(launcher(tmp_path / "runs", "--set", "app.max_env_steps=1500"), cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    steps, episodes = aisrv_totals(run / "log", {})
    counters = final_counters(run)
    assert steps >= 1500 and episodes > 0
    assert (counters["env_steps"], counters["episodes"]) == (steps, episodes) == (counters["env_steps"], episode_rows(run))

    # 2. --resume, then SIGTERM to the whole process group (systemd's default, kill -TERM -- -PGID).
    seen = line_counts(run / "log")
    rows_before = episode_rows(run)
    out = open(tmp_path / "resume.out", "w")
    proc = subprocess.Popen(launcher(tmp_path / "runs", "--resume"), cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT,
                            process_group=0)
    try:
        deadline = time.monotonic() + 180
        while counters_while_training(run)["env_steps"] < steps + 1000 and time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "resume.out").read_text()
            time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(120) == 0, (tmp_path / "resume.out").read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    more_steps, more_episodes = aisrv_totals(run / "log", seen)
    resumed = final_counters(run)
    assert more_steps > 0 and resumed["env_steps"] == steps + more_steps
    assert resumed["episodes"] == episodes + more_episodes == episode_rows(run) > rows_before
    assert "stop requested" in (run / "log" / "learner.log").read_text()
    seeds = env_seeds(run / "log")
    assert seeds[("aisrv-0", 0)] != seeds[("aisrv-0", 1)]  # the resumed session does not replay session 0


def test_a_signal_while_the_run_stops_at_its_limit_is_a_first_signal_not_a_kill():
    """A sweep prunes a run (SIGTERM) as it reaches its own limit: the clean stop goes on to its
    final checkpoint; only a second signal kills."""
    from workflow.supervision.supervisor import Supervisor

    supervisor = Supervisor.__new__(Supervisor)  # the handlers only, no processes
    supervisor.stop_requested, supervisor.stop_signals, supervisor.force_kill = True, 0, False  # its limit
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        supervisor.install_signal_handlers()
        os.kill(os.getpid(), signal.SIGTERM)
        assert supervisor.stop_requested and not supervisor.force_kill
        os.kill(os.getpid(), signal.SIGINT)
        assert supervisor.force_kill
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def test_the_parent_gone_signal_stops_cleanly_however_often_the_kernel_sends_it():
    """PR_SET_PDEATHSIG comes once per launcher thread and per thread of the dying parent: a
    stop, never the second signal that kills; a person's SIGTERM after it is a first signal."""
    from workflow.supervision.supervisor import PARENT_GONE_SIGNAL, Supervisor

    supervisor = Supervisor.__new__(Supervisor)
    supervisor.stop_requested, supervisor.stop_signals, supervisor.force_kill = False, 0, False
    watched = (signal.SIGTERM, signal.SIGINT, PARENT_GONE_SIGNAL)
    before = {s: signal.getsignal(s) for s in watched}
    try:
        supervisor.install_signal_handlers()
        for _ in range(4):
            os.kill(os.getpid(), PARENT_GONE_SIGNAL)
        assert supervisor.stop_requested and not supervisor.force_kill
        os.kill(os.getpid(), signal.SIGTERM)
        assert not supervisor.force_kill
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
