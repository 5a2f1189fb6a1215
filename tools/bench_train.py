"""End-to-end training throughput and what bounds it on this machine.

    python tools/bench_train.py --config conf/smoke.toml --seconds 60

1. Runs the real training system (./train.sh's launcher: learner + aisrv processes) for
   --seconds and reads from its metrics the sample rows per second the learner consumed (steady
   state: the first metrics windows, spent importing and filling the queue, are left out), the
   model pick-up latency (publication -> first aisrv step with that model; aisrv report it for
   every model but the one they start with) and each process's
   peak RSS.
2. Then measures, in this process and one thing at a time: the episode loop's cost per env step
   without inference (simulator, features, reward, packing), inference per observation
   (batched over envs_per_aisrv), how many env steps a sample holds (PPO: a segment of up to
   ppo.num_steps; dqn_plus: one) and training per env step (one learner batch). The learner's
   consumed rows become env steps by that count.
3. From those, the compute bound: each env step costs env + inference + training ×
   production_consume_ratio CPU-seconds (training's counted as the CPU time of its threads, which
   is more than its wall time when the learner runs several), spread over this machine's cores;
   one aisrv process cannot exceed 1 / (env + inference) per second, nor the learner 1 / train
   (wall time) per second.
   The last line is the measured rate over that bound.

    python tools/bench_train.py --config conf/smoke.toml --seconds 120 --ray local

    python tools/bench_train.py --config conf/smoke.toml --seconds 120 --eval

With --eval it compares, in one invocation, the run without and with its evaluator ([eval]: the
config's, or every checkpoint on the default preset's episodes when the config leaves it off),
each for --seconds one after the other: consumed sample rows/s (steady), the evaluator's CPU and
its evaluations; the last line is the learner's throughput with / without.

With --ray ADDRESS it compares, in one invocation, the default launcher and the Ray launcher
(`./train.sh --ray ADDRESS`) on the same config for --seconds each, one after the other: each
one's consumed env steps/s (steady), Ray's start-up time; the last line is Ray / default.

    python tools/bench_train.py --config conf/gorge_chase.toml --package /tmp/package_15.0.1 --seconds 150 --rounds 2

With --package DIR it compares, in one invocation, the config's run (`./train.sh --config ...`,
--set applies to it alone) and the Kaiwu code package DIR's (`./train.sh --package DIR`, its own
config), --seconds each, alternating --rounds times (config first; on a machine shared with other
work, rounds spread its load over both): each one's env steps/s produced by its aisrv (steady,
averaged over the rounds), and where the cores went: the learner's cores busy and the aisrv's CPU
time per env step (acting alone, whatever the learner takes beside it; the line before the last
is package / config of it); the last line is config / package env steps/s. A package run may
write into DIR (its checkpoints): give it a copy.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from workflow import metrics_keys as K  # noqa: E402
from workflow.allocator import keep_freed_memory  # noqa: E402
from workflow.config import AppConfig, ConfigError, load_config  # noqa: E402

WARMUP_WINDOWS = 2
METRICS_WINDOW_S = 2.0


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# --- 1. the real system --------------------------------------------------------------------------

def run_system(config: str | None, overrides: list[str], seconds: float, run_dir: Path,
               ray: str | None = None, package: str | None = None) -> tuple[Path, str]:
    """Train for `seconds` (the Kaiwu code package `package` if given); the run directory and the launcher's stderr."""
    cmd = [sys.executable, "-m", "workflow.launcher"] + (["--config", config] if config else [])
    cmd += ["--ray", ray] if ray else []
    cmd += ["--package", package] if package else []
    for item in overrides + [f'app.run_dir="{run_dir}"', 'app.run_name="bench"', f"app.max_minutes={seconds / 60}",
                             f"app.metrics_interval_seconds={METRICS_WINDOW_S}", "app.max_env_steps=0",
                             "app.max_train_steps=0"]:
        cmd += ["--set", item]
    where = f" on Ray ({ray})" if ray else f" with package {package}" if package else ""
    print(f"running the training system{where} for {seconds:.0f} s ...", flush=True)
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=seconds + 600)
    if result.returncode != 0:
        raise SystemExit(f"the training run failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return run_dir / "bench", result.stderr


def read_metrics(run: Path) -> dict[str, list[tuple[float, float]]]:
    """key -> [(wall_time, value)] in file order."""
    series: dict[str, list[tuple[float, float]]] = {}
    with open(run / "metrics.csv", newline="") as f:
        for row in csv.DictReader(f):
            series.setdefault(row["key"], []).append((float(row["wall_time"]), float(row["value"])))
    return series


def steady_rates(series) -> tuple[float, float]:
    """(consumed sample rows, produced env steps) per second, averaged over the same learner
    metrics windows: those after the first training ones, without the last (cut short by the stop)."""
    consumed = [v for _, v in series.get(K.CONSUMED_SPS, [])]
    produced = [v for _, v in series.get(K.ENV_SPS, [])]
    started = next((i for i, v in enumerate(consumed) if v > 0), None)
    if started is None:
        return 0.0, 0.0
    window = slice(started + WARMUP_WINDOWS, len(consumed) - 1)
    if not consumed[window]:
        window = slice(started, len(consumed))
    return statistics.fmean(consumed[window]), statistics.fmean(produced[window])


def cpu_shares(run: Path) -> dict[str, float]:
    """From a finished run's log/process_stats.json: the cores its learner and its aisrv processes
    kept busy (CPU time over the run's wall time) and the aisrv's CPU milliseconds per env step
    (whole run, start-up included). On a machine whose cores they share, the env steps a second
    also depend on what the learner takes; this is what acting alone costs."""
    stats = json.loads((run / "log" / "process_stats.json").read_text())
    wall = stats.get("wall_seconds") or 1.0
    cpu = stats.get("cpu_seconds", {})
    aisrv = sum(v for name, v in cpu.items() if name.startswith("aisrv"))
    steps = (stats.get("learner") or {}).get("env_steps") or 0
    return {"learner_cores": cpu.get("learner", 0.0) / wall, "aisrv_cores": aisrv / wall,
            "aisrv_ms_per_step": aisrv / steps * 1e3 if steps else float("nan")}


def pickup_latencies(series) -> list[float]:
    return sorted(v for _, v in series.get(K.MODEL_PICKUP_LATENCY, []))


# --- 2. one thing at a time ----------------------------------------------------------------------

class CollectingHandler:
    """The agent's framework for stage 2: random legal actions (no network) instead of predict,
    and the packing an aisrv does instead of sending; keeps observations and rows."""

    def __init__(self, act_cls, to_numpy, keep_obs: int, keep_rows: int):
        import numpy as np

        self._np, self._act, self._to_numpy = np, act_cls, to_numpy
        self.rng = np.random.default_rng(0)
        self.obs, self.rows = [], []
        self.keep_obs, self.keep_rows = keep_obs, keep_rows
        self.rows_sent = 0

    def predict(self, agent, method, list_obs_data):
        if len(self.obs) < self.keep_obs:
            self.obs.append(list(list_obs_data))
        out = []
        for obs in list_obs_data:
            legal = self._np.flatnonzero(obs.legal)
            out.append(self._act(action=int(self.rng.choice(legal)), log_prob=-2.7))
        return out

    def learn(self, agent, method, samples) -> None:
        rows = self._np.stack([self._to_numpy(s) for s in samples])  # the packing an aisrv does before sending
        self.rows_sent += len(rows)
        if sum(len(r) for r in self.rows) < self.keep_rows:
            self.rows.append(rows)


def measure_components(cfg: AppConfig, env_steps: int) -> dict[str, float]:
    import numpy as np
    import torch

    from realm import make_env
    from workflow.transport.stopped import Stopped
    from workflow.host.kaiwu_package import KaiwuPackage
    from workflow.host.platform_env import LoopStats, PlatformEnv
    from workflow.precision import autocast, package_bf16_ready, resolve_precision

    class NoTelemetry:
        def send(self, kind, values):
            pass

    app, k = cfg.app, cfg.app.envs_per_aisrv
    torch.set_num_threads(app.aisrv_torch_num_threads)  # env and inference as an aisrv runs them
    torch.manual_seed(0)
    np.random.seed(0)
    batch_rows = app.train_batch_size
    package = KaiwuPackage.of_run(cfg, "bench", None)
    stats = LoopStats()
    envs = [PlatformEnv(make_env(**cfg.env.make_kwargs(package.platform), seed=i), stats, NoTelemetry(),
                        lambda: stats.env_steps >= env_steps, package.platform) for i in range(k)]
    collector = CollectingHandler(package.protocol("ActData"), package.protocol("SampleData2NumpyData"),
                                  keep_obs=50, keep_rows=batch_rows)
    walker = package.make_agent("bench", None, None)
    walker.framework_handler = collector
    start = time.perf_counter()
    try:
        package.workflow(envs, [walker], None, None)
    except Stopped:
        pass
    env_s = (time.perf_counter() - start) / stats.env_steps
    rows_per_step = collector.rows_sent / stats.env_steps

    agent = package.make_agent("learner", None, None)
    agent.predict(collector.obs[0])  # warm-up
    start = time.perf_counter()
    for batch in collector.obs:
        agent.predict(batch)
    infer_s = (time.perf_counter() - start) / sum(len(b) for b in collector.obs)

    rows = np.concatenate(collector.rows)
    while len(rows) < batch_rows:  # short episodes: repeat what was collected
        rows = np.concatenate([rows, rows])
    rows = rows[:batch_rows]
    from_numpy = package.protocol("NumpyData2SampleData")
    torch.set_num_threads(app.torch_num_threads)  # training as the learner runs it: its threads, its precision,
    keep_freed_memory()  # its malloc settings
    precision = resolve_precision(app.precision, "cpu", package_bf16_ready(package.agent_class))
    print(f"learner precision: {precision}")
    with autocast(precision, "cpu"):
        agent.learn([from_numpy(row) for row in rows])  # warm-up
        repeats = 2
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(repeats):
            agent.learn([from_numpy(row) for row in rows])  # as the learner hands a batch over
        per_step = rows_per_step / (repeats * len(rows))
        train_s, train_cpu_s = (time.perf_counter() - start) * per_step, (time.process_time() - start_cpu) * per_step
    return {"env": env_s, "inference": infer_s, "train": train_s, "train_cpu": train_cpu_s,
            "rows_per_step": rows_per_step}


def compute_bound(cfg: AppConfig, t: dict[str, float], n_cores: int) -> tuple[float, str]:
    app = cfg.app
    consume = 1.0 if app.algorithm_on_policy_or_off_policy == "on-policy" else app.production_consume_ratio
    per_step = t["env"] + t["inference"] + t["train_cpu"] * consume  # CPU-seconds per env step
    bounds = {
        f"{n_cores} cores / (env + inference + train CPU x {consume:g})": n_cores / per_step,
        f"{app.aisrv_num} aisrv / (env + inference)": app.aisrv_num / (t["env"] + t["inference"]),
        # train time was measured with the learner's own thread count
        f"learner ({app.torch_num_threads} thread(s)) 1 / (train x {consume:g})": 1.0 / (t["train"] * consume),
    }
    name = min(bounds, key=bounds.get)
    return bounds[name], name


# --- report ---------------------------------------------------------------------------------------

def compare_with_ray(args: argparse.Namespace, cfg: AppConfig) -> int:
    """The default launcher, then --ray, on the same config: steady consumed rows (the same
    factor from rows to env steps in both) and produced env steps per second."""
    rates, startup = {}, None
    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        for name, ray in (("default", None), ("ray", args.ray)):
            run, stderr = run_system(args.config, args.overrides, args.seconds, Path(tmp) / name, ray)
            rates[name] = steady_rates(read_metrics(run))
            if ray:
                match = re.search(r"Ray: .* in ([0-9.]+) s", stderr)
                startup = float(match.group(1)) if match else None
    print(f"\nconfig: {args.config or 'conf/configure_app.toml'}  aisrv {cfg.app.aisrv_num} x {cfg.app.envs_per_aisrv} "
          f"envs, {args.seconds:.0f} s each, {cores()} cores")
    for name, label in (("default", "default launcher"), ("ray", f"--ray {args.ray}")):
        consumed, produced = rates[name]
        print(f"{label:>18}: {consumed:8.2f} sample rows/s consumed, {produced:8.1f} env steps/s produced")
    print(f"Ray start-up (ray.init): {startup:.1f} s" if startup is not None else "Ray start-up: not reported")
    default, ray = rates["default"][0], rates["ray"][0]
    print(f"ray / default consumed env steps/s: {ray / default:.3f}" if default else
          "ray / default consumed env steps/s: n/a (the default run consumed nothing)")
    return 0


def compare_with_evaluator(args: argparse.Namespace, cfg: AppConfig) -> int:
    """The run without, then with, its evaluator, on the same config: steady consumed rows and
    produced env steps per second, and what the evaluator did."""
    on = [] if cfg.eval.enabled else [f"eval.every_train_steps={cfg.app.dump_model_freq}"]
    rates, evaluator = {}, {}
    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        for name, extra in (("without", ["eval.every_train_steps=0", "eval.every_minutes=0"]), ("with", on)):
            run, _ = run_system(args.config, args.overrides + extra, args.seconds, Path(tmp) / name)
            rates[name] = steady_rates(read_metrics(run))
            if name == "with":
                stats = json.loads((run / "log" / "process_stats.json").read_text())
                evaluator = {"cpu": stats.get("cpu_seconds", {}).get("evaluator", 0.0),
                             "wall": stats.get("wall_seconds") or 1.0,
                             "evaluated": len(read_metrics(run).get("eval/score", []))}
    print(f"\nconfig: {args.config or 'conf/configure_app.toml'}  aisrv {cfg.app.aisrv_num} x {cfg.app.envs_per_aisrv} "
          f"envs, {args.seconds:.0f} s each, {cores()} cores")
    for name in ("without", "with"):
        consumed, produced = rates[name]
        print(f"{name + ' evaluator':>18}: {consumed:8.2f} sample rows/s consumed, {produced:8.1f} env steps/s produced")
    print(f"evaluator: {evaluator['evaluated']} checkpoints evaluated, {evaluator['cpu'] / evaluator['wall']:.2f} cores busy")
    without, with_ = rates["without"][0], rates["with"][0]
    print(f"learner throughput with / without the evaluator: {with_ / without:.3f}" if without else
          "learner throughput with / without the evaluator: n/a (the run without consumed nothing)")
    return 0


def compare_with_package(args: argparse.Namespace, cfg: AppConfig) -> int:
    """The config's run and the package's, alternating `args.rounds` times: steady env steps per
    second produced by each one's aisrv (the comparable figure: their samples hold different
    numbers of env steps)."""
    package = Path(args.package)
    if not package.is_dir():
        print(f"error: --package {args.package}: not a directory", file=sys.stderr)
        return 2
    if args.rounds < 1:
        print(f"error: --rounds must be >= 1, got {args.rounds}", file=sys.stderr)
        return 2
    produced: dict[str, list[float]] = {"config": [], "package": []}
    shares: dict[str, list[dict]] = {"config": [], "package": []}
    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        for i in range(args.rounds):
            for name in produced:
                config, overrides, pkg = ((args.config, args.overrides, None) if name == "config"
                                          else (None, [], str(package.resolve())))
                run, _ = run_system(config, overrides, args.seconds, Path(tmp) / f"{name}{i}", package=pkg)
                produced[name].append(steady_rates(read_metrics(run))[1])
                shares[name].append(cpu_shares(run))
                share = shares[name][-1]
                print(f"  round {i + 1} {name}: {produced[name][-1]:8.1f} env steps/s produced; cores busy: learner "
                      f"{share['learner_cores']:.2f}, aisrv {share['aisrv_cores']:.2f}; aisrv "
                      f"{share['aisrv_ms_per_step']:.3f} ms CPU per env step", flush=True)
    print(f"\nconfig: {args.config or 'conf/configure_app.toml'}  aisrv {cfg.app.aisrv_num} x {cfg.app.envs_per_aisrv} "
          f"envs; package: {package}; {args.seconds:.0f} s each, {args.rounds} round(s), {cores()} cores")
    cost = {name: statistics.fmean(s["aisrv_ms_per_step"] for s in shares[name]) for name in shares}
    for name, label in (("config", args.config or "conf/configure_app.toml"), ("package", package.name)):
        learner = statistics.fmean(s["learner_cores"] for s in shares[name])
        print(f"{label:>24}: {statistics.fmean(produced[name]):8.1f} env steps/s produced (steady, mean of rounds); "
              f"learner {learner:.2f} cores busy; aisrv {cost[name]:.3f} ms CPU per env step")
    print(f"package / config aisrv CPU per env step (acting alone, > 1: the config's is cheaper): "
          f"{cost['package'] / cost['config']:.3f}")
    ours, theirs = statistics.fmean(produced["config"]), statistics.fmean(produced["package"])
    print(f"config / package env steps/s produced: {ours / theirs:.3f}" if theirs else
          "config / package env steps/s produced: n/a (the package run produced nothing)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=None, help="TOML config (default conf/configure_app.toml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the end-to-end run")
    parser.add_argument("--component-steps", type=int, default=3000, help="env steps for the isolated measurement")
    parser.add_argument("--ray", default=None, metavar="ADDRESS",
                        help="compare the default launcher with --ray ADDRESS (local, auto, HOST:PORT) instead")
    parser.add_argument("--eval", action="store_true", help="compare the run without and with its evaluator instead")
    parser.add_argument("--package", default=None, metavar="DIR",
                        help="compare the config's run with the Kaiwu code package DIR's (./train.sh --package DIR) instead")
    parser.add_argument("--rounds", type=int, default=1, help="with --package: alternate the two runs this many times")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config, args.overrides)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.ray:
        return compare_with_ray(args, cfg)
    if args.eval:
        return compare_with_evaluator(args, cfg)
    if args.package:
        return compare_with_package(args, cfg)

    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        run, _ = run_system(args.config, args.overrides, args.seconds, Path(tmp))
        series = read_metrics(run)
        stats = json.loads((run / "log" / "process_stats.json").read_text())
    consumed_rows, produced = steady_rates(series)
    latencies = pickup_latencies(series)
    lags = [v for _, v in series.get(K.POLICY_LAG, [])]

    print(f"measuring components one at a time ({args.component_steps} env steps) ...", flush=True)
    t = measure_components(cfg, args.component_steps)
    n_cores = cores()
    bound, limiter = compute_bound(cfg, t, n_cores)
    measured = consumed_rows / t["rows_per_step"]

    app = cfg.app
    print(f"\nconfig: {args.config or 'conf/configure_app.toml'}  aisrv {app.aisrv_num} x {app.envs_per_aisrv} envs, "
          f"batch {app.train_batch_size} samples, {app.algorithm_on_policy_or_off_policy}, "
          f"{n_cores} cores")
    print(f"env steps/s produced by aisrv (steady):   {produced:10.1f}")
    if latencies:
        median = statistics.median(latencies)
        p90 = latencies[min(len(latencies) - 1, int(0.9 * len(latencies)))]
        print(f"model pick-up latency: median {median:.3f} s, p90 {p90:.3f} s, max {latencies[-1]:.3f} s "
              f"({len(latencies)} pick-ups; aisrv look every {app.model_sync_seconds:g} s)")
    if lags:
        print(f"policy lag (learner version - sample's version): mean {statistics.fmean(lags):.1f}")
    print("peak RSS per process: " + ", ".join(f"{name} {rss / 2**20:.0f} MiB"
                                               for name, rss in stats.get("peak_rss_bytes", {}).items()))
    wall = stats.get("wall_seconds") or 1.0
    print("cores busy per process (CPU time / run time): " + ", ".join(
        f"{name} {cpu / wall:.2f}" for name, cpu in stats.get("cpu_seconds", {}).items()))
    print(f"episode loop without inference: {t['env'] * 1e3:8.3f} ms per env step")
    print(f"inference (batch {app.envs_per_aisrv}):          {t['inference'] * 1e3:8.3f} ms per observation")
    print(f"training:                        {t['train'] * 1e3:8.3f} ms per env step "
          f"({1 / t['rows_per_step']:.1f} env steps per sample; {t['train_cpu'] * 1e3:.3f} ms of CPU on "
          f"{app.torch_num_threads} thread(s))")
    print(f"compute bound: {bound:.1f} env steps/s ({limiter})")
    print(f"end-to-end env steps/s consumed by the learner: {measured:.1f}")
    print(f"measured / bound: {measured / bound if bound > 0 else float('nan'):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
