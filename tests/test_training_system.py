"""The training system end to end: real processes, a real reverb server on 127.0.0.1.

One long scenario (marked slow) covers: checkpoints appear and are pruned to K (+ the best),
aisrv pick up advancing model versions, metrics.csv and TensorBoard files are written, a
SIGKILLed aisrv is restarted while training goes on, and after a SIGKILL of the launcher's whole
process group `--resume` continues from the newest readable checkpoint (a corrupt newest one is
skipped). Bad configs exit with code 2 before anything starts.
"""
from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
import torch

from workflow.checkpoints import ckpt_files
from workflow.config import REPO_ROOT
from workflow.precision import resolve_precision

SMOKE = str(REPO_ROOT / "conf" / "smoke.toml")
CKPT_KEEP = 2


def launcher_cmd(run_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "workflow.launcher", "--config", SMOKE,
            "--set", f'app.run_dir="{run_dir}"', "--set", 'app.run_name="sys"', *extra]


def start_launcher(run_dir: Path, *extra: str, log_name: str) -> subprocess.Popen:
    out = open(run_dir.parent / log_name, "w")
    return subprocess.Popen(launcher_cmd(run_dir, *extra), cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT,
                            process_group=0)  # its own process group, killed as a whole below


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(30)


def wait_until(predicate, timeout_s: float, what: str, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"launcher exited with {proc.returncode} while waiting for {what}")
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def checkpoint_ids(run: Path) -> list[int]:
    return [c.id for c in ckpt_files.list_checkpoints(run / "ckpt" / "back_to_the_realm_ppo")]


def pids(run: Path) -> dict[str, int]:
    try:
        return json.loads((run / "log" / "process_stats.json").read_text())["pids"]
    except (OSError, ValueError, KeyError):
        return {}


def metric_rows(run: Path) -> list[dict]:
    try:
        with open(run / "metrics.csv", newline="") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


EXPECTED_KEYS = {"episode/total_score", "episode/steps", "episode/win", "episode/chests", "monitor/reward",
                 "episode/buff_count", "episode/flash_count", "monitor/reward/win", "loss/policy", "loss/value",
                 "ppo/approx_kl", "ppo/clip_frac", "ppo/explained_variance", "system/env_sps", "system/policy_lag",
                 "replay/size", "model/pickup_latency_s", "episode/win_rate_recent"}


def aisrv_versions_advanced(run: Path) -> bool:
    """aisrv keep adopting newer models from the pool while the learner trains."""
    versions = [float(r["value"]) for r in metric_rows(run) if r["key"] == "model/aisrv_version"]
    return len(versions) >= 3 and max(versions) > versions[0] + 5


@pytest.mark.slow
def test_train_crash_restart_kill_and_resume(tmp_path):
    run_dir = tmp_path / "runs"
    run = run_dir / "sys"
    overrides = ["--set", "app.dump_model_freq=5", "--set", f"app.max_ckpt_keep={CKPT_KEEP}",
                 "--set", "app.heartbeat_timeout_seconds=12", "--set", "app.max_minutes=4"]
    proc = start_launcher(run_dir, *overrides, log_name="first.out")
    try:
        wait_until(lambda: checkpoint_ids(run) and all("running its workflow" in read(run / "log" / f"aisrv-{i}.log")
                                                       for i in (0, 1)), 150, "aisrv running, a checkpoint", proc)

        # SIGKILL one aisrv and freeze the other: the launcher restarts both and training goes on.
        victim, frozen = pids(run)["aisrv-0"], pids(run)["aisrv-1"]
        os.kill(victim, signal.SIGKILL)
        os.kill(frozen, signal.SIGSTOP)
        wait_until(lambda: pids(run).get("aisrv-0") not in (None, victim), 60, "aisrv-0 restarted", proc)
        wait_until(lambda: pids(run).get("aisrv-1") not in (None, frozen), 60, "the hung aisrv-1 restarted", proc)
        step_at_restart = max(checkpoint_ids(run))
        wait_until(lambda: max(checkpoint_ids(run)) >= step_at_restart + 15, 120, "training after the restart", proc)
        wait_until(lambda: aisrv_versions_advanced(run) and EXPECTED_KEYS <= {r["key"] for r in metric_rows(run)}, 120,
                   "metrics of every kind, aisrv adopting newer models", proc)
        launcher_log = (run / "log" / "launcher.log").read_text()
        # the aisrv were started with the learner (their imports overlap its start), then joined it
        assert launcher_log.index("started aisrv-1") < launcher_log.index("learner ready")
        assert "aisrv-0: replay server 127.0.0.1:" in read(run / "log" / "aisrv-0.log")
        assert "aisrv-0 exited with code -9; restart 1/5" in launcher_log
        assert "aisrv-1 no heartbeat for" in launcher_log and "(killed); restart 1/5" in launcher_log

        # The whole process group dies at once (power cut).
        kill_group(proc)
    finally:
        kill_group(proc)

    ids = checkpoint_ids(run)
    assert CKPT_KEEP <= len(ids) <= CKPT_KEEP + 1, ids  # newest K plus the best
    rows = metric_rows(run)
    assert EXPECTED_KEYS <= {r["key"] for r in rows}
    assert list((run / "tb").glob("events.out.tfevents.*"))
    assert (run / "log" / "effective_config.toml").is_file()
    env_steps_before = max(int(r["env_steps"]) for r in rows)

    # A torn write of the newest checkpoint: resume skips it with a warning.
    newest, previous = ids[-1], ids[-2]
    (run / "ckpt" / "back_to_the_realm_ppo" / ckpt_files.ckpt_name(newest)).write_bytes(b"torn")
    proc = start_launcher(run_dir, "--resume", *overrides, log_name="resume.out")
    try:
        wait_until(lambda: max(checkpoint_ids(run)) >= previous + 10, 150, "training after --resume", proc)
        proc.send_signal(signal.SIGTERM)  # a clean stop: aisrv first, then the learner's final checkpoint
        assert proc.wait(90) == 0
    finally:
        kill_group(proc)
    # tools/bench_train.py --package splits a run's cores from the file the supervisor wrote
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import bench_train

    shares = bench_train.cpu_shares(run)
    assert 0 < shares["learner_cores"] and 0 < shares["aisrv_cores"], shares
    assert 0 < shares["aisrv_ms_per_step"] < 1e3, shares
    learner_log = (run / "log" / "learner.log").read_text()
    assert "skipping checkpoint" in learner_log and ckpt_files.ckpt_name(newest) in learner_log
    assert f"learner precision: {resolve_precision('fp32', 'cpu')}" in learner_log  # the default, said and why
    assert f"resumed from model.ckpt-{previous}.pkl: train step {previous}" in learner_log
    assert list((run / "log").glob("effective_config-resume-*.toml"))  # the first config is kept beside it
    final_step = max(checkpoint_ids(run))
    assert f"learner stopped (stop requested) at train step {final_step}," in learner_log
    rows_after = metric_rows(run)
    resumed_steps = [int(r["train_step"]) for r in rows_after[len(rows):] if r["role"] == "learner"]
    assert resumed_steps and min(resumed_steps) >= previous  # the train step went on from the checkpoint's
    assert max(int(r["env_steps"]) for r in rows_after) > env_steps_before  # so did the env-step counter

    # A learner that dies ends the run with the command that resumes it.
    log_offset = len((run / "log" / "launcher.log").read_text())
    proc = start_launcher(run_dir, "--resume", *overrides, log_name="crash.out")
    try:
        wait_until(lambda: "learner ready" in (run / "log" / "launcher.log").read_text()[log_offset:], 90,
                   "the resumed run's learner", proc)
        current = pids(run)
        assert current["launcher"] == proc.pid
        os.kill(current["learner"], signal.SIGKILL)
        assert proc.wait(90) == 1
    finally:
        kill_group(proc)
    out = (run_dir.parent / "crash.out").read_text()
    assert "the learner exited with code -9" in out and "--resume" in out and 'app.run_name="sys"' in out
    for name, pid in pids(run).items():
        if name != "launcher":
            assert not pid_alive(pid), f"{name} (pid {pid}) outlived the launcher"


LOGGED_CHECKPOINT = re.compile(r"\| INFO +\| learner \| checkpoint model\.ckpt-(\d+)\.pkl")
FAILED_WRITE = re.compile(r"^(\S+ \S+) \| ERROR .*checkpoint at train step (\d+) failed")


def failed_writes(run: Path) -> list[tuple[float, int]]:
    """(time, train step) of each failed checkpoint write the learner logged."""
    found = []
    for line in read(run / "log" / "learner.log").splitlines():
        match = FAILED_WRITE.match(line)
        if match:
            found.append((datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp(), int(match.group(2))))
    return found


def logged_checkpoints(run: Path) -> list[int]:
    """Train steps of the checkpoints the learner logged as written (every file of them in place)."""
    return [int(m.group(1)) for m in LOGGED_CHECKPOINT.finditer(read(run / "log" / "learner.log"))]


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def assert_on_schedule(writes: list[tuple[float, int]], first_s: float) -> None:
    """Each retry came no sooner than the back-off announced (first_s, doubling), however many
    train steps (and dump_model_freq turns) went by meanwhile; training went on in between."""
    for i, ((t0, step0), (t1, step1)) in enumerate(zip(writes, writes[1:])):
        assert t1 - t0 >= first_s * 2 ** i - 0.01, (i, writes)
        assert step1 > step0, writes


@pytest.mark.slow
def test_a_failing_checkpoint_dir_is_retried_on_schedule_and_only_a_lasting_fault_ends_the_run(tmp_path):
    """The checkpoint directory becomes a file (as a full, read-only or vanished disk, a write
    fails, for root too). Training goes on, the writes are retried on the back-off the log
    announces, the first one after the fault is lifted succeeds; a fault that outlasts the whole
    schedule ends the run with exit 1 and the resume command, the newest good checkpoint intact."""
    run_dir = tmp_path / "runs"
    run = run_dir / "sys"
    ckpt = run / "ckpt" / "back_to_the_realm_ppo"
    retry_s, max_failures = 0.5, 5  # attempts at 0, 0.5, 1.5, 3.5, 7.5 s after the first failure
    proc = start_launcher(run_dir, "--set", "app.dump_model_freq=1", "--set", f"app.ckpt_write_retry_seconds={retry_s}",
                          "--set", f"app.ckpt_write_max_failures={max_failures}", "--set", "app.max_minutes=3",
                          log_name="fault.out")
    try:
        wait_until(lambda: len(checkpoint_ids(run)) >= 2, 150, "training with checkpoints", proc)
        good = tmp_path / "good"
        ckpt.rename(good)
        ckpt.write_text("not a directory")  # the fault
        wait_until(lambda: len(failed_writes(run)) >= 3, 60, "three failed checkpoint writes", proc)
        ckpt.unlink()
        good.rename(ckpt)  # the fault is lifted, the earlier checkpoints back in place
        lifted_after = failed_writes(run)
        # written whole, as the learner logs it (a .pkl on disk may still be followed by its run state)
        wait_until(lambda: max(logged_checkpoints(run), default=-1) > lifted_after[-1][1], 60,
                   "a checkpoint after the fault", proc)
        recovered = failed_writes(run)
        assert len(recovered) in (3, 4), recovered  # the 4th attempt is due 2 s after the 3rd: the lift came first
        assert_on_schedule(recovered, retry_s)
        assert proc.poll() is None  # the run goes on

        # A fault that lasts: every attempt of the schedule fails, then the run ends.
        ckpt.rename(good)
        ckpt.write_text("not a directory")
        wait_until(lambda: len(failed_writes(run)) > len(recovered), 60, "a failed write", proc)
        before = files_of(good)  # no write in flight any more: the learner has reported the failure
        assert proc.wait(60) == 1
    finally:
        kill_group(proc)
    lasting = failed_writes(run)[len(recovered):]
    assert len(lasting) == max_failures, lasting
    assert_on_schedule(lasting, retry_s)
    out = (run_dir.parent / "fault.out").read_text()
    assert f"{max_failures} checkpoint writes in a row failed" in out
    assert "--resume" in out and 'app.run_name="sys"' in out
    assert files_of(good) == before  # the failed writes touched nothing of the checkpoints
    entries = json.loads((good / "run_state.json").read_text())
    # with its counters; an entry still flagged incomplete is a write the fault cut off (the
    # directory was moved between the flag and the files), which --resume passes over
    newest_good = max(int(k) for k, entry in entries.items() if not entry.get("incomplete"))
    assert newest_good > lifted_after[-1][1]  # written after the first fault was lifted
    weights = torch.load(good / ckpt_files.ckpt_name(newest_good), weights_only=True)
    assert all(bool(torch.isfinite(v).all()) for v in weights.values() if v.is_floating_point())


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper is gone for our purposes
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def run_launcher(tmp_path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "workflow.launcher", "--config", SMOKE,
           "--set", f'app.run_dir="{tmp_path / "runs"}"', *args]
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("override, message", [
    ("app.aisrv_nun=3", "unknown key 'app.aisrv_nun' (did you mean 'aisrv_num'?)"),
    ("app.envs_per_aisrv=\"four\"", "app.envs_per_aisrv: expected an integer, got 'four'"),
    ("curriculum.end=2", "no start/end pair with start != end"),
])
def test_bad_config_exits_2_and_starts_nothing(tmp_path, override, message):
    result = run_launcher(tmp_path, "--set", override)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not (tmp_path / "runs").exists()  # no run directory, no process


def test_a_config_not_utf8_or_a_replay_beyond_reverb_exits_2_from_the_real_launcher(tmp_path):
    """Once a traceback (exit 1), and a learner dying on reverb's TypeError after the start (exit 1)."""
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(f'include = ["{SMOKE}"]\n[app]\nrun_name = "caf\xe9"\n'.encode("latin-1"))
    for args, message in [(["--config", str(latin1)], f"{latin1}: not UTF-8 text (byte 0xe9 at offset"),
                          (["--set", "app.replay_buffer_capacity=100000000000000000000"],
                           "replay_buffer_capacity = 100000000000000000000 is too large: at most 100000000")]:
        result = run_launcher(tmp_path, *args)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and "Traceback" not in result.stderr
        assert not (tmp_path / "runs").exists()


def test_usr_conf_rejected_by_the_simulator_exits_2(tmp_path, monkeypatch, capsys):
    """The curriculum's usr_conf goes through realm's own validator before anything starts."""
    from feature.back_to_the_realm.curriculum import CurriculumSampler
    from workflow import launcher

    def bad_sample(self, episode=0, env_step=0):
        return {"diy": {"start": 2, "end": 1, "treasure_random": 0, "treasure_id": [1, 3], "max_step": 100}}

    monkeypatch.setattr(CurriculumSampler, "sample", bad_sample)
    code = launcher.main(["--config", SMOKE, "--set", f'app.run_dir="{tmp_path / "runs"}"'])
    assert code == 2
    err = capsys.readouterr().err
    assert "[curriculum] produces a usr_conf the simulator rejects" in err and "treasure_id" in err
    assert not (tmp_path / "runs").exists()


def test_role_arguments_are_checked(tmp_path):
    result = run_launcher(tmp_path, "--role", "aisrv")
    assert result.returncode == 2 and "--learner HOST:PORT" in result.stderr
    result = run_launcher(tmp_path, "--role", "aisrv", "--learner", "127.0.0.1:1", "--resume")
    assert result.returncode == 2 and "--resume is for the learner" in result.stderr


def _config_file(tmp_path: Path, text: str, encoding: str = "utf-8") -> str:
    path = tmp_path / "bad.toml"
    path.write_bytes(text.encode(encoding))
    return str(path)


@pytest.mark.parametrize("case, message", [
    ("include = 5", "include = 5: expected a file name or a list of file names"),
    ("duplicate", "key 'seed' in [app] is set twice (lines 3 and 4)"),
    ("app.seed=-1", "seed must be in 0..4294967295"),
    ("app.seed=1180591620717411303424", "seed must be in 0..4294967295"),
    ("ppo.learning_rate=nan", "ppo.learning_rate: expected a finite number, got nan"),
    ("reward.scale=inf", "expected a finite number, got inf"),
    ("app.heartbeat_timeout_seconds=-inf", "app.heartbeat_timeout_seconds: expected a finite number"),
    ("app.aisrv_num=100000", "aisrv_num = 100000 is too large: at most 256"),
    ("app.replay_buffer_capacity=100000000000000000000",
     "app: replay_buffer_capacity = 100000000000000000000 is too large: at most 100000000"),
    ("app.replay_buffer_capacity=100000000", "app.replay_buffer_capacity = 100000000: that many samples of "),
    ("app.max_env_steps=100000000000000000000", "app: max_env_steps = 100000000000000000000 is too large: at most"),
    ("app.torch_num_threads=100000000000000000000", "app: torch_num_threads = 100000000000000000000 is too large"),
    ("app.rate_limiter_timeout_ms=100000000000000000000", "rate_limiter_timeout_ms = 100000000000000000000 is too "
                                                          "large: at most heartbeat_timeout_seconds × 1000 = 30000"),
    ("ppo.num_steps=100000000000000000000", "ppo: num_steps (100000000000000000000) must be <= 128, the frames a "
                                            "sample row holds"),
    ("dqn.epsilon_decay_samples=100000000000000000000", "dqn: epsilon_decay_samples = 100000000000000000000 is too large"),
    ("model.hidden_size=100000000000000000000", "model: channels [8, 8] and hidden_size 100000000000000000000 make a "
                                                "backbone of"),
    ("model.strides=[100000000000000000000, 2]", "model: kernel_sizes and strides must be <= 51"),
    ("not_utf8", "bad.toml: not UTF-8 text (byte 0xe9 at offset"),
    ("not_utf8_include", "latin1.toml: not UTF-8 text (byte 0xe9 at offset"),
    ("app.ckpt_write_retry_seconds=0", "app: ckpt_write_retry_seconds must be > 0, got 0"),
    ("app.ckpt_write_max_failures=0", "app: ckpt_write_max_failures must be >= 1, got 0"),
    ("app.max_nonfinite_train_steps=-1", "app: max_nonfinite_train_steps must be >= 0, got -1"),
    ("preload_missing", "preload_model_dir / preload_model_id: no checkpoint"),
    ("run_dir_is_a_file", "is a file, not a directory"),
    ("ckpt_dir_unwritable", "cannot write the run's files"),
])
def test_every_bad_config_exits_2_before_anything_starts(tmp_path, capsys, case, message):
    """Each of these once got past validation and failed after processes started (or with a traceback)."""
    from workflow import launcher

    runs = tmp_path / "runs"
    args = ["--config", SMOKE, "--set", f'app.run_dir="{runs}"']
    if case == "include = 5":
        args[1] = _config_file(tmp_path, "include = 5\n")
    elif case == "not_utf8":
        args[1] = _config_file(tmp_path, f'include = ["{SMOKE}"]\n# caf\xe9\n', "latin-1")
    elif case == "not_utf8_include":
        (tmp_path / "latin1.toml").write_bytes("[app]\n# caf\xe9\n".encode("latin-1"))
        args[1] = _config_file(tmp_path, f'include = ["{SMOKE}", "latin1.toml"]\n')
    elif case == "duplicate":
        args[1] = _config_file(tmp_path, f'include = ["{SMOKE}"]\n[app]\nseed = 1\nseed = 2\n')
    elif case == "preload_missing":
        args += ["--set", "app.preload_model=true", "--set", f'app.preload_model_dir="{tmp_path / "nowhere"}"']
    elif case == "run_dir_is_a_file":
        runs.write_text("not a directory")
    elif case == "ckpt_dir_unwritable":
        blocker = tmp_path / "blocker"
        blocker.write_text("a file where a directory must go")
        args += ["--set", f'app.ckpt_dir="{blocker / "ckpt"}"']
    elif case.startswith("dqn."):  # the dqn_plus agent's section: its run reads it
        args[1] = str(REPO_ROOT / "conf" / "dqn_plus.toml")
        args += ["--set", case]
    else:
        args += ["--set", case]
    assert launcher.main(args) == 2
    assert message in capsys.readouterr().err
    assert not runs.is_dir()  # nothing started, no partial run directory


def test_an_aisrv_started_before_the_learner_waits_for_its_port_or_a_stop():
    import multiprocessing as mp
    import threading

    from workflow.supervision.processes import ChildContext

    spawn = mp.get_context("spawn")

    def context(port):
        return ChildContext(role="aisrv", index=0, config=None, paths=None, heartbeat=spawn.Value("d", 0.0, lock=False),
                            stop=spawn.Value("b", 0, lock=False), events=None, parent_pid=os.getppid(),
                            learner_port=port, learner_host="10.0.0.7")

    port = spawn.Value("i", 0, lock=False)
    ctx = context(port)
    threading.Timer(0.3, lambda: setattr(port, "value", 4242)).start()
    assert ctx.wait_for_learner() == "10.0.0.7:4242" and ctx.heartbeat.value > 0  # it beat while waiting
    assert ctx.wait_for_learner() == "10.0.0.7:4242"  # kept

    stopped = context(spawn.Value("i", 0, lock=False))
    threading.Timer(0.3, lambda: setattr(stopped.stop, "value", 1)).start()
    assert stopped.wait_for_learner() is None and stopped.learner_address is None
