"""How well a config learns in a wall-clock budget on this machine, against the route planner.

    python tools/bench_learn.py --config conf/leaderboard.toml --minutes 120
    python tools/bench_learn.py --run runs/bench_learn      # score an existing run's checkpoints again

1. Trains the config with ./train.sh's launcher for --minutes (every checkpoint kept), noting
   when each checkpoint was written.
2. Scores --points checkpoints spread over the run (and the last) on --preset (default the
   2024 leaderboard, 30 episodes) with the agent's `exploit` (its `exploit_policy`) and with sampling, and the
   planner on the same episodes (workflow.eval_pool), on the map the run trained on.
3. Prints the score-vs-wall-minutes curve, the first minute at which 0.80 / 0.90 / 0.95 / 0.97 ×
   planner was reached (exploit), writes the curve as a PNG, and prints the final exploit ratio
   as the last line.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tool_args import REPO_ROOT, InputError, env_from_config, run_tool  # noqa: E402

THRESHOLDS = (0.80, 0.90, 0.95, 0.97)
RUN_NAME = "bench_learn"
STARTED_FILE = "bench_learn_started.json"  # the wall time training started, beside the run


def train(config: str | None, overrides: list[str], minutes: float, run_dir: Path) -> Path:
    cmd = [sys.executable, "-m", "workflow.launcher"] + (["--config", config] if config else [])
    for item in overrides + [f'app.run_dir="{run_dir}"', f'app.run_name="{RUN_NAME}"', f"app.max_minutes={minutes}",
                             "app.max_ckpt_keep=100000", "app.max_env_steps=0", "app.max_train_steps=0"]:
        cmd += ["--set", item]
    run = run_dir / RUN_NAME
    if run.exists():
        raise InputError(f"{run} exists; give another --out or score it with --run {run}")
    started = time.time()
    print(f"training for {minutes:g} minutes ...", flush=True)
    result = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=minutes * 60 + 900)
    if result.returncode != 0:
        raise SystemExit(f"the training run failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    (run / STARTED_FILE).write_text(json.dumps({"started": started}))
    return run


def checkpoints_by_minute(run: Path) -> list[tuple[float, Path]]:
    """(wall minutes since training started, checkpoint file) of the run's training checkpoints."""
    from workflow import ckpt_files

    marker = run / STARTED_FILE
    dirs = [d for d in ckpt_files.checkpoint_dirs(run) if d.name != "user"]
    if not dirs:
        raise InputError(f"{run}: no checkpoints")
    ckpts = ckpt_files.list_checkpoints(dirs[0])
    started = json.loads(marker.read_text())["started"] if marker.is_file() else min(c.path.stat().st_mtime for c in ckpts)
    return [(max(0.0, (c.path.stat().st_mtime - started) / 60.0), c.path) for c in ckpts]


def pick(points: list[tuple[float, Path]], count: int) -> list[tuple[float, Path]]:
    """`count` checkpoints spread evenly over the run's minutes, the last one always."""
    if len(points) <= count:
        return points
    end = points[-1][0]
    chosen = {min(range(len(points)), key=lambda i: abs(points[i][0] - end * k / count)) for k in range(1, count + 1)}
    chosen.add(len(points) - 1)
    return [points[i] for i in sorted(chosen)]


def first_minutes(curve: list[tuple[float, float]]) -> dict[float, float | None]:
    return {t: next((minute for minute, ratio in curve if ratio >= t), None) for t in THRESHOLDS}


def plot(path: Path, rows: list[dict], title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    minutes = [r["minute"] for r in rows]
    ax.plot(minutes, [r["ratio_exploit"] for r in rows], marker="o", label="exploit")
    ax.plot(minutes, [r["ratio_sample"] for r in rows], marker=".", alpha=0.7, label="sampled")
    for t in THRESHOLDS:
        ax.axhline(t, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("wall minutes of training")
    ax.set_ylabel("score / planner score")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def score(run: Path, args: argparse.Namespace) -> int:
    import realm
    from realm.presets import preset
    from workflow.eval_pool import PLANNER, play_all
    from workflow.eval_workflow import resolve_episodes

    config = run / "log" / "effective_config.toml"
    if not config.is_file():
        raise InputError(f"{run}: no log/effective_config.toml (not a run directory)")
    env_kwargs = env_from_config(config)
    try:
        usr_conf = preset(args.preset)
    except KeyError as e:
        raise InputError(str(e)) from e
    chosen = pick(checkpoints_by_minute(run), args.points)
    episodes = resolve_episodes(realm.make_env(**env_kwargs), usr_conf, args.episodes, args.seed)
    workers = args.workers or len(os.sched_getaffinity(0))
    keys = [str(path) for _, path in chosen]
    print(f"scoring {len(chosen)} checkpoints x {args.episodes} episodes ({args.preset}) with exploit and sampling ...",
          flush=True)
    greedy = play_all([(k, e) for k in keys + [PLANNER] for e in episodes], env_kwargs, workers=workers,
                      config_file=str(config), agent_mode="greedy")
    sampled = play_all([(k, e) for k in keys for e in episodes], env_kwargs, workers=workers,
                       config_file=str(config), agent_mode="sample")

    def mean(records: dict) -> float:
        return sum(r.total_score for r in records.values()) / len(records)

    planner = mean(greedy[PLANNER])
    rows = [{"minute": round(minute, 2), "ckpt": path.name, "score_exploit": mean(greedy[str(path)]),
             "ratio_exploit": mean(greedy[str(path)]) / planner, "ratio_sample": mean(sampled[str(path)]) / planner}
            for minute, path in chosen]
    print(f"\n{args.preset} ({args.episodes} episodes, seeds {args.seed}..), planner {planner:.1f}")
    print(f"{'minute':>7} {'checkpoint':<24} {'exploit score':>13} {'exploit ratio':>13} {'sampled ratio':>13}")
    for r in rows:
        print(f"{r['minute']:7.1f} {r['ckpt']:<24} {r['score_exploit']:13.1f} {r['ratio_exploit']:13.3f} "
              f"{r['ratio_sample']:13.3f}")
    reached = first_minutes([(r["minute"], r["ratio_exploit"]) for r in rows])
    print("first minute at ratio: " + ", ".join(
        f"{t:.2f} {'-' if m is None else f'{m:.1f}'}" for t, m in reached.items()))
    out = run / "bench_learn"
    out.mkdir(exist_ok=True)
    (out / "curve.json").write_text(json.dumps({"preset": args.preset, "planner": planner, "rows": rows,
                                                "first_minute": {str(t): m for t, m in reached.items()}}, indent=1))
    png = plot(out / "curve.png", rows, f"{run.name}: {args.preset} vs planner")
    print(f"wrote {png}")
    print(f"final ratio (exploit): {rows[-1]['ratio_exploit']:.3f}")
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=None, help="TOML config to train (default conf/configure_app.toml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--minutes", type=float, default=120.0, help="wall-clock training budget (default 120)")
    parser.add_argument("--run", type=Path, default=None, help="score this existing run instead of training")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs", help="where the run goes (default runs/)")
    parser.add_argument("--preset", default="leaderboard-2024", help="episode preset (default leaderboard-2024)")
    parser.add_argument("--episodes", type=int, default=30, help="episodes per checkpoint (default 30)")
    parser.add_argument("--points", type=int, default=8, help="checkpoints scored along the run (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first evaluation episode")
    parser.add_argument("--workers", type=int, default=None, help="evaluation processes (default: the cores)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    def action(args: argparse.Namespace) -> int:
        for flag in ("episodes", "points"):
            if getattr(args, flag) < 1:
                raise InputError(f"--{flag} must be >= 1, got {getattr(args, flag)}")
        if args.run is None and args.minutes <= 0:
            raise InputError(f"--minutes must be > 0, got {args.minutes}")
        run = args.run if args.run is not None else train(args.config, args.overrides, args.minutes, args.out)
        if not run.is_dir():
            raise InputError(f"--run {run}: not a directory")
        return score(run, args)
    return run_tool(action, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
