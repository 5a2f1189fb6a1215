"""A Ray run losing a node, getting a replacement and growing, timed on this machine.

    python tools/bench_ray_cluster.py --config conf/smoke.toml --window 30

`ray.cluster_utils.Cluster` runs a head (realm_learner) and two worker nodes on loopback, with
one and two realm_aisrv slots; `./train.sh --ray ADDRESS` trains with app.aisrv_num = "auto" (3
aisrv). Then, one phase at a time, each measured over --window seconds of the learner's
env-steps/s metric once its aisrv play again:
1. steady: 3 aisrv;
2. a node is lost (the one-slot node): its aisrv waits for a slot;
3. a node joins with one slot: the lost aisrv comes back there (seconds from the join counted);
4. a node joins with one more slot: a fourth aisrv starts (seconds from the join counted).
Prints env steps/s per phase and the recovery times; the last line is the env steps/s after
the replacement over the steady rate. On a 2-core machine the learner bounds the run, so more
aisrv add little: the figures say whether the run keeps going, not how it scales.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workflow import metrics_keys as K

ROOT = Path(__file__).resolve().parents[1]

LOOPBACK = "127.0.0.1"
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}  # keep every node on 127.0.0.1


def stats(run: Path) -> dict:
    try:
        return json.loads((run / "log" / "process_stats.json").read_text())
    except (OSError, ValueError):
        return {}


def playing(run: Path, name: str, node_id: str | None = None) -> bool:
    """`name`'s newest start reached its workflow (and runs on `node_id`, when given)."""
    try:
        lines = (run / "log" / f"{name}.log").read_text().splitlines()
    except FileNotFoundError:
        return False
    starts = [i for i, line in enumerate(lines) if " starting " in line and "envs" in line]
    started_playing = bool(starts) and any("running its workflow" in line for line in lines[starts[-1]:])
    return started_playing and (node_id is None or stats(run).get("nodes", {}).get(name) == node_id)


def wait(predicate, timeout_s: float, what: str, proc: subprocess.Popen) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if predicate():
            return time.monotonic() - started
        if proc.poll() is not None:
            raise SystemExit(f"the launcher exited ({proc.returncode}) while waiting for {what}")
        time.sleep(0.25)
    raise SystemExit(f"timed out after {timeout_s:.0f} s waiting for {what}")


def env_sps_since(run: Path, since: float) -> float:
    """Mean of the learner's env-steps/s windows that started after `since` (wall time)."""
    with open(run / "metrics.csv", newline="") as f:
        values = [float(r["value"]) for r in csv.DictReader(f)
                  if r["key"] == K.ENV_SPS and float(r["wall_time"]) >= since]
    return statistics.fmean(values) if values else 0.0


def measure(run: Path, window: float, proc: subprocess.Popen) -> float:
    since = time.time()
    deadline = time.monotonic() + window
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the launcher exited ({proc.returncode}) while measuring")
        time.sleep(0.5)
    return env_sps_since(run, since)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "conf" / "smoke.toml"))
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured per phase")
    args = parser.parse_args(argv)
    os.environ.update(LOOPBACK_ENV)
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 1, "node_ip_address": LOOPBACK, "include_dashboard": False,
                                      "resources": {"realm_learner": 1}, "_system_config": {"worker_niceness": 0}})

    def node(slots: int):
        return cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK, resources={"realm_aisrv": slots})

    small = node(1)
    node(2)  # the two-slot node the other aisrv share
    rows, proc = [], None
    with tempfile.TemporaryDirectory(prefix="bench_ray_cluster_") as tmp:
        run = Path(tmp) / "r"
        cmd = [sys.executable, "-m", "workflow.launcher", "--config", args.config, "--ray", cluster.address,
               "--set", f'app.run_dir="{tmp}"', "--set", 'app.run_name="r"', "--set", 'app.aisrv_num="auto"',
               "--set", "app.max_minutes=30", "--set", "app.metrics_interval_seconds=2.0"]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            print("starting: 3 aisrv on two nodes ...", flush=True)
            wait(lambda: all(playing(run, f"aisrv-{i}") for i in range(3)), 300, "three aisrv playing", proc)
            rows.append(("steady, 3 aisrv", measure(run, args.window, proc), None))

            lost_name = next(n for n, nid in stats(run)["nodes"].items() if nid == small.node_id)
            cluster.remove_node(small)
            print(f"lost the node of {lost_name}; measuring ...", flush=True)
            rows.append((f"node lost, {lost_name} waiting", measure(run, args.window, proc), None))

            joined = node(1)
            back = wait(lambda: playing(run, lost_name, joined.node_id), 300, f"{lost_name} back on the new node", proc)
            rows.append((f"replacement joined, {lost_name} back", measure(run, args.window, proc), back))

            grown = node(1)
            grew = wait(lambda: playing(run, "aisrv-3", grown.node_id), 300, "aisrv-3 on the joined node", proc)
            rows.append(("one more slot, aisrv-3 added", measure(run, args.window, proc), grew))

            os.killpg(proc.pid, signal.SIGTERM)
            code = proc.wait(180)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
            for n in list(cluster.worker_nodes):
                cluster.remove_node(n)
            cluster.shutdown()
    print(f"\nconfig: {args.config}, {args.window:.0f} s per phase, {os.cpu_count()} cores; the run stopped with exit {code}")
    print(f"{'phase':<36} {'env steps/s':>11} {'seconds from the join to play':>30}")
    for name, sps, seconds in rows:
        print(f"{name:<36} {sps:11.1f} {'' if seconds is None else f'{seconds:.1f}':>30}")
    print(f"after the replacement / steady env steps/s: {rows[2][1] / rows[0][1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
