"""A warm fork server (workflow/supervision/warm_fork_server.py): a launcher named one forks its
processes from it, and they come out as from the launcher's own server — its environment,
process group, standard streams and exit codes — while a launcher that differs in what the
server imported with starts its own."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from workflow.supervision import warm_fork_server as warm
from workflow.supervision.processes import ForkedCallError, call_in_fork, start_warm_fork_server

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def server(warm_fork_server, tmp_path_factory):
    """The session's warm server (tests/conftest.py), or one of this module's own when that is off."""
    if warm_fork_server is not None:
        yield warm_fork_server
        return
    with start_warm_fork_server(tmp_path_factory.mktemp("server")) as started:
        os.environ[warm.ENV_VAR] = str(started.path)
        try:
            yield started
        finally:
            os.environ.pop(warm.ENV_VAR, None)


def what_the_child_sees(marker: str) -> dict:
    print(f"printed by the child {marker}", flush=True)
    os.write(2, f"written to fd 2 by the child {marker}\n".encode())
    return {"ppid": os.getppid(), "pgid": os.getpgrp(), "marker": os.environ.get("WARM_TEST_MARKER"),
            "torch_loaded": "torch" in sys.modules}


def exit_three():
    os._exit(3)


def test_a_child_comes_from_the_warm_server_with_this_process_s_environment_group_and_streams(server, monkeypatch,
                                                                                             capfd):
    monkeypatch.setenv("WARM_TEST_MARKER", "set after the server started")
    seen = call_in_fork(what_the_child_sees, "m1")
    assert seen["ppid"] == server.description.pid  # forked by the warm server, not by a server of its own
    assert seen["torch_loaded"]  # which had imported the roles' modules
    assert seen["pgid"] == os.getpgrp()
    assert seen["marker"] == "set after the server started"
    out, err = capfd.readouterr()
    assert "printed by the child m1" in out and "written to fd 2 by the child m1" in err


def test_a_child_s_exit_code_reaches_this_process_through_the_server(server):
    with pytest.raises(ForkedCallError, match="exit code 3"):
        call_in_fork(exit_three)


def launch_smoke_run(run_dir: Path, env: dict | None = None) -> tuple[dict, str, int]:
    """A real launcher's 400-step smoke run in a process group of its own: (its learner's parent
    and process group, seen while it ran; launcher.log; the launcher's pid)."""
    cmd = [sys.executable, "-m", "workflow.launcher", "--config", "conf/smoke.toml", "--set",
           f'app.run_dir="{run_dir}"', "--set", 'app.run_name="r"', "--set", "app.max_env_steps=400"]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            process_group=0, env=env)
    log = run_dir / "r" / "log"
    seen = {}
    deadline = time.monotonic() + 120
    while not seen and proc.poll() is None and time.monotonic() < deadline:
        try:  # once the learner writes its log, its target runs: it has joined its group by then
            pids = json.loads((log / "process_stats.json").read_text())["pids"] if (log / "learner.log").exists() else {}
            learner = psutil.Process(pids["learner"])
            seen = {"ppid": learner.ppid(), "pgid": os.getpgid(learner.pid)}
        except (OSError, ValueError, KeyError, psutil.NoSuchProcess):
            time.sleep(0.05)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    return seen, (log / "launcher.log").read_text(), proc.pid


def test_a_launcher_s_run_forks_from_it_into_the_launcher_s_process_group(server, tmp_path):
    seen, launcher_log, launcher = launch_smoke_run(tmp_path)
    assert seen == {"ppid": server.description.pid, "pgid": launcher}, seen
    assert warm.ENV_VAR not in launcher_log  # it used the warm one without a word


def test_a_launcher_that_differs_starts_its_own_server_and_its_log_says_why(server, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": str(int(os.environ.get("OMP_NUM_THREADS", "1")) + 1)}
    seen, launcher_log, launcher = launch_smoke_run(tmp_path, env)
    assert seen["ppid"] != server.description.pid and seen["pgid"] == launcher, seen
    assert "not used, these environment variables differ from the server's: OMP_NUM_THREADS" in launcher_log
    assert "this run starts its own fork server" in launcher_log


def test_only_the_variables_read_when_a_library_loads_count(server):
    env = {**os.environ, "OMP_NUM_THREADS": str(int(os.environ.get("OMP_NUM_THREADS", "1")) + 1)}
    description, why = warm.offered_server(env)
    assert description is None and "OMP_NUM_THREADS" in why
    # one read when used, not when a library loads (Ray's driver sets it), does not count
    assert warm.offered_server({**os.environ, "PYTHONBREAKPOINT": "ray.util.rpdb.set_trace"}) == (server.description, None)


def test_a_launcher_in_another_session_starts_its_own(server):
    check = "from workflow.supervision import warm_fork_server as w; print(w.offered_server()[1])"
    out = subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, capture_output=True, text=True,
                         start_new_session=True, timeout=60)
    assert "another terminal session" in out.stdout, out.stdout + out.stderr
    same = subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert same.stdout.strip() == "None", same.stdout + same.stderr


def test_an_edited_source_file_changes_the_stamp_and_a_gone_server_is_refused(server, tmp_path):
    tree = tmp_path / "project"
    (tree / "agent").mkdir(parents=True)
    (tree / "tests").mkdir()
    module = tree / "agent" / "model.py"
    module.write_text("x = 1\n")
    (tree / "tests" / "test_x.py").write_text("")
    stamp = warm.source_stamp(tree)
    (tree / "tests" / "test_x.py").write_text("changed = True\n")
    assert warm.source_stamp(tree) == stamp  # tests are not run code
    module.write_text("x = 2\n")
    assert warm.source_stamp(tree) != stamp

    stale = warm.ServerDescription(**{**server.description.__dict__, "code_stamp": stamp})
    assert warm.why_not(stale) == "a project source file changed since it started"
    gone = warm.ServerDescription(**{**server.description.__dict__, "pid": 2 ** 22 + 1})
    assert "is gone" in warm.why_not(gone)


def test_an_unreadable_description_is_named(tmp_path):
    bad = tmp_path / "fork_server.json"
    bad.write_text("{not json")
    description, why = warm.offered_server({warm.ENV_VAR: str(bad)})
    assert description is None and str(bad) in why and "cannot read" in why


def test_a_stopped_process_is_seen_stopped():
    """What a child forked while its launcher's group was being stopped reads (WarmProcess.run)."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert not warm._stopped(sleeper.pid)
        os.kill(sleeper.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while not warm._stopped(sleeper.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert warm._stopped(sleeper.pid)
        os.kill(sleeper.pid, signal.SIGCONT)
        deadline = time.monotonic() + 10
        while warm._stopped(sleeper.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not warm._stopped(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not warm._stopped(sleeper.pid)  # gone: not stopped
