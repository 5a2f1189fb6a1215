"""`./train.sh --ray` on a real Ray cluster: `ray.cluster_utils.Cluster` runs a head and worker
nodes (each its own raylet) on this machine, on loopback only; the launcher runs as a real
process that joins it, and the learner and the aisrv are real Ray actors."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is the optional extra requirements-ray.txt")
from ray.cluster_utils import Cluster  # noqa: E402

from test_clean_stops import aisrv_totals, counters_while_training, episode_rows, final_counters  # noqa: E402
from test_training_system import checkpoint_ids, pid_alive, read, wait_until  # noqa: E402
from workflow.config import REPO_ROOT  # noqa: E402
from workflow.supervision.ray_roles import RUN_TOKEN_FILE, node_scratch  # noqa: E402

SMOKE = str(REPO_ROOT / "conf" / "smoke.toml")
LOOPBACK = "127.0.0.1"
#: Ray otherwise swaps 127.0.0.1 for the machine's outward address: keep every node on loopback.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


@contextlib.contextmanager
def loopback_cluster(monkeypatch, learner_slots: int = 1):
    """A head on loopback with `learner_slots` realm_learner slots; worker nodes are added by the test."""
    for key, value in LOOPBACK_ENV.items():
        monkeypatch.setenv(key, value)
    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 1, "node_ip_address": LOOPBACK, "include_dashboard": False,
                                      "resources": {"realm_learner": learner_slots},
                                      "_system_config": {"worker_niceness": 0}})
    try:
        yield cluster
    finally:
        for node in list(cluster.worker_nodes):
            cluster.remove_node(node)
        cluster.shutdown()


@pytest.fixture
def cluster(monkeypatch):
    with loopback_cluster(monkeypatch) as cluster:
        yield cluster


def aisrv_node(cluster: Cluster, slots: int):
    return cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK, resources={"realm_aisrv": slots})


def launcher(run_dir: Path, address: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "workflow.launcher", "--config", SMOKE, "--set", f'app.run_dir="{run_dir}"',
            "--set", 'app.run_name="r"', "--ray", address, *extra]


def stats(run: Path) -> dict:
    try:
        return json.loads((run / "log" / "process_stats.json").read_text())
    except (OSError, ValueError):
        return {}


def running(run: Path, name: str) -> bool:
    return "running its workflow" in read(run / "log" / f"{name}.log")


def raylets() -> set[int]:
    import psutil

    return {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == "raylet"}


def assert_nothing_left(run: Path) -> None:
    for name, pid in stats(run)["pids"].items():
        if name != "launcher" and pid:
            assert not pid_alive(pid), f"{name} (pid {pid}) outlived the run"
    token = (run / RUN_TOKEN_FILE).read_text().strip()
    assert not node_scratch(run.name, token).exists()  # the aisrv's logs and pool copies, shipped or removed


@pytest.mark.slow
def test_aisrv_come_back_after_a_kill_and_a_lost_node_and_grow_with_a_new_one(cluster, tmp_path):
    first, second = aisrv_node(cluster, 1), aisrv_node(cluster, 1)
    run = tmp_path / "runs" / "r"
    out = open(tmp_path / "launcher.out", "w")
    proc = subprocess.Popen(launcher(tmp_path / "runs", cluster.address, "--set", 'app.aisrv_num="auto"',
                                     "--set", "app.max_minutes=5", "--set", "app.heartbeat_timeout_seconds=12"),
                            cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT, process_group=0,
                            env={**os.environ, **LOOPBACK_ENV})
    try:
        wait_until(lambda: running(run, "aisrv-0") and running(run, "aisrv-1") and stats(run).get("pids", {}).get(
            "aisrv-1"), 150, "two aisrv playing", proc)
        # 1. SIGKILL of one actor's process and SIGSTOP of the other's: Ray starts the killed one
        #    again; the frozen one misses its heartbeat, is killed through Ray and started again.
        victim, frozen = stats(run)["pids"]["aisrv-1"], stats(run)["pids"]["aisrv-0"]
        os.kill(victim, signal.SIGKILL)
        os.kill(frozen, signal.SIGSTOP)
        wait_until(lambda: stats(run)["pids"].get("aisrv-1") not in (None, victim), 90, "aisrv-1 restarted", proc)
        wait_until(lambda: stats(run)["pids"].get("aisrv-0") not in (None, frozen), 90, "the hung aisrv-0 restarted",
                   proc)
        wait_until(lambda: running(run, "aisrv-0") and stats(run)["nodes"].get("aisrv-0"), 90, "aisrv-0 playing", proc)
        launcher_log = read(run / "log" / "launcher.log")
        assert "aisrv-1 exited with code -9; restart 1/5" in launcher_log
        assert "aisrv-0 no heartbeat for" in launcher_log and "(killed); restart 1/5" in launcher_log

        # 2. A node is lost and another joins (two slots): the lost aisrv comes back on the new
        #    node and, with aisrv_num = "auto", a third aisrv takes the other new slot.
        lost = next(n for n in (first, second) if n.node_id == stats(run)["nodes"]["aisrv-0"])
        steps_before = counters_while_training(run)["env_steps"]
        cluster.remove_node(lost)
        joined = aisrv_node(cluster, 2)
        wait_until(lambda: stats(run)["nodes"].get("aisrv-0") == joined.node_id
                   and stats(run)["nodes"].get("aisrv-2") == joined.node_id, 120,
                   "aisrv-0 back and aisrv-2 started on the new node", proc)
        wait_until(lambda: running(run, "aisrv-2"), 90, "aisrv-2 playing", proc)
        wait_until(lambda: counters_while_training(run)["env_steps"] > steps_before + 400, 120,
                   "env steps rising after the node loss", proc)

        # 3. The learner's process dies: it starts again from the newest checkpoint (the run
        #    directory is on its node), then the aisrv with it, and training goes on.
        learner = stats(run)["pids"]["learner"]
        newest = max(checkpoint_ids(run))
        os.kill(learner, signal.SIGKILL)
        wait_until(lambda: stats(run).get("learner_restarts") == 1 and stats(run)["pids"].get("learner") not in (
            None, learner), 90, "the learner started again", proc)
        wait_until(lambda: max(checkpoint_ids(run)) >= newest + 5, 150, "training after the learner's restart", proc)
        assert "resumed from model.ckpt-" in read(run / "log" / "learner.log")

        # 4. A clean stop: the aisrv first, then the learner's final checkpoint; nothing left.
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(120) == 0, read(tmp_path / "launcher.out")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert "stop requested" in read(run / "log" / "learner.log")
    launcher_log = read(run / "log" / "launcher.log")
    assert "starting 1 more aisrv" in launcher_log and "the learner's actor died; starting it again" in launcher_log
    assert_nothing_left(run)


@pytest.mark.slow
def test_ray_local_trains_like_the_default_launcher(tmp_path, monkeypatch):
    """The checks tests/test_clean_stops.py makes of the default launcher, on `--ray local`."""
    for key, value in LOOPBACK_ENV.items():
        monkeypatch.setenv(key, value)
    run = tmp_path / "runs" / "r"
    raylets_before = raylets()
    done = subprocess.run(launcher(tmp_path / "runs", "local", "--set", "app.max_env_steps=800"), cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    steps, episodes = aisrv_totals(run / "log", {})
    counters = final_counters(run)
    assert steps >= 800 and episodes > 0
    assert (counters["env_steps"], counters["episodes"]) == (steps, episodes) == (counters["env_steps"],
                                                                                   episode_rows(run))
    assert "Ray: started a local instance" in done.stderr
    assert_nothing_left(run)
    assert raylets() == raylets_before  # the Ray instance it started is gone too


def test_ray_arguments_are_checked(tmp_path):
    base = [sys.executable, "-m", "workflow.launcher", "--config", SMOKE, "--set", f'app.run_dir="{tmp_path}"']
    cases = [(["--ray", "local", "--role", "learner"], "leave out --role and --learner"),
             (["--ray", "not an address"], "expected local (start Ray on this machine), auto"),
             (["--set", 'app.aisrv_num="auto"'], 'app.aisrv_num = "auto" fills the realm_aisrv slots'),
             (["--set", 'app.aisrv_num="many"'], 'aisrv_num: got \'many\', allowed')]
    for extra, message in cases:
        done = subprocess.run(base + extra, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and message in done.stderr, (extra, done.stderr)
    assert not list(tmp_path.iterdir())  # nothing started, no run directory


def test_the_kuberay_manifest_declares_the_resources_and_a_command_the_launcher_accepts():
    import shlex

    import yaml

    from workflow import launcher
    from workflow.supervision.ray_supervisor import AISRV_RESOURCE, LEARNER_RESOURCE

    job = yaml.safe_load((REPO_ROOT / "deploy" / "kuberay-rayjob.yaml").read_text())
    cluster_spec = job["spec"]["rayClusterSpec"]
    assert LEARNER_RESOURCE in cluster_spec["headGroupSpec"]["rayStartParams"]["resources"]
    assert all(AISRV_RESOURCE in group["rayStartParams"]["resources"] for group in cluster_spec["workerGroupSpecs"])
    bash_command = shlex.split(job["spec"]["entrypoint"])[-1]
    train_args = shlex.split(bash_command.split("./train.sh", 1)[1])
    args = launcher.parse_args(train_args)
    launcher.check_arguments(args)
    assert args.ray == "auto" and launcher.load_run_config(args).app.aisrv_num == "auto"


def test_a_learner_that_cannot_see_the_run_directory_refuses_to_start(tmp_path):
    """Where the learner's node does not read the driver's run directory (no token of this run
    there), it says so and exits with its own code instead of training into a directory nobody
    collects."""
    from workflow.config import load_config
    from workflow.supervision.ray_roles import EXIT_RUN_DIR_UNREACHABLE, RoleActor
    from workflow.checkpoints.runs import hold_run

    cfg = load_config(SMOKE, overrides=[f'app.run_dir="{tmp_path}"', 'app.run_name="r"'])
    paths, lock = hold_run(cfg.app, resume=False)
    with lock:
        paths.create()
        (paths.root / RUN_TOKEN_FILE).write_text("another run's token\n")
        role = RoleActor.__ray_actor_class__("learner", 0, cfg, paths.absolute(), 0, "this run's token", str(REPO_ROOT))
        assert role.run() == EXIT_RUN_DIR_UNREACHABLE
        kind, name, payload = role.ctx.events.get_nowait()
        assert (kind, name) == ("error", "learner") and "does not see the run directory" in payload["message"]
        assert not (paths.log / "learner.log").exists()  # it trained nothing, wrote nothing


@pytest.mark.slow
def test_a_sweeps_runs_spread_over_the_cluster_count_exactly_and_one_study_here_scores_them(tmp_path, monkeypatch):
    """tools/sweep.py --ray: one trial's two seeds train side by side as Ray runs (each learner on
    the head, each run's aisrv on a worker node of one slot: one node each), while the study, the
    launchers and the run directories stay on this machine. Each run counts exactly what its
    remote aisrv played, and its checkpoint evaluated on the cluster's CPUs plays exactly the
    episodes a local evaluation plays."""
    with loopback_cluster(monkeypatch, learner_slots=2) as cluster:  # a learner per seed
        workers = {aisrv_node(cluster, 1).node_id, aisrv_node(cluster, 1).node_id}
        sweep_file = tmp_path / "ray.toml"
        sweep_file.write_text(f"""
[sweep]
name = "ray"
config = "{SMOKE}"
set = ["app.aisrv_num=1", "eval.every_train_steps=3", "eval.episodes=1",
       "eval.usr_conf={{diy={{start=2,end=1,treasure_random=1,treasure_num=2,max_step=40,talent_type=1}}}}"]
trials = 1
seeds = 2
budget_env_steps = 600

[sweep.objective]
metric = "eval/steps"
direction = "minimize"

[sweep.params]
"ppo.learning_rate" = {{ distribution = "log_uniform", low = 1e-4, high = 1e-3 }}
""")
        done = subprocess.run([sys.executable, "tools/sweep.py", str(sweep_file), "--out", str(tmp_path / "out"),
                               "--ray", cluster.address], cwd=REPO_ROOT, capture_output=True, text=True, timeout=400)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        import optuna

        (trial,) = optuna.load_study(study_name="ray", storage=f"sqlite:///{tmp_path / 'out' / 'ray' / 'study.db'}"
                                     ).get_trials()
        assert trial.state == optuna.trial.TrialState.COMPLETE and len(trial.user_attrs["seed_values"]) == 2
        runs = [tmp_path / "out" / "ray" / "runs" / f"trial-0000-seed{seed}" for seed in (0, 1)]
        assert {stats(run)["nodes"]["aisrv-0"] for run in runs} == workers  # one worker node each
        for seed, run in enumerate(runs):
            assert stats(run)["nodes"]["learner"] not in workers  # where realm_learner is: the head
            joined = read(tmp_path / "out" / "ray" / "logs" / f"trial-0000-seed{seed}.log")
            assert "Ray: joined" in joined and "3 node(s), 2 realm_aisrv slot(s)" in joined
            steps, episodes = aisrv_totals(run / "log", {})  # the aisrv's own log lines, shipped from its node
            counters = final_counters(run)
            assert steps >= 600 and episodes > 0
            assert (counters["env_steps"], counters["episodes"]) == (steps, episodes) == (counters["env_steps"],
                                                                                           episode_rows(run))
            assert_nothing_left(run)

        def evaluate(out: Path, *extra: str) -> str:
            done = subprocess.run([sys.executable, "tools/evaluate.py", "--ckpt", str(runs[0]), "--usr-conf",
                                   '{"diy": {"treasure_num": 8, "max_step": 300}}', "--episodes", "3", "--no-planner",
                                   "--out", str(out), "--quiet", *extra], cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=300, env={**os.environ, **LOOPBACK_ENV})
            assert done.returncode == 0, done.stderr
            return (out / "episodes.csv").read_text()

        assert evaluate(tmp_path / "on_ray", "--ray", cluster.address, "--workers", "2") == evaluate(
            tmp_path / "here", "--workers", "1")
