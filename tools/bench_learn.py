"""How well a config learns in a wall-clock budget on this machine, against the route planner.

    python tools/bench_learn.py --config conf/leaderboard.toml --minutes 60 --seeds 3
    python tools/bench_learn.py --run runs/bench_learn      # score an existing run's checkpoints again
    python tools/bench_learn.py --run A --run B             # several runs (seeds) scored and compared

1. Trains the config with ./train.sh's launcher for --minutes (every checkpoint kept), noting
   when each checkpoint was written; with --seeds K, K runs one after another (app.seed 0..K-1,
   or from --first-seed on; the same budget), so one seed's luck cannot pass for the config's.
2. Scores --points checkpoints spread over each run (and the last) on --preset (default the
   2024 leaderboard, 30 episodes) or --usr-conf with the agent's `exploit` (its
   `exploit_policy`) and with sampling, and the planner on the same episodes
   (evaluation.pool), on the map the run trained on.
   With the run's own evaluations ([eval]; --in-run-eval makes the runs bench_learn trains
   evaluate themselves on the same episodes) the exploit scores of the checkpoints the run
   evaluated are taken from them, and only the final checkpoint (which the run did not evaluate)
   is played here: no second scoring pass. The sampled pass is then played only with --sampled.
   Off by default: on 2 cores the evaluator takes CPU from training (docs/BENCHMARKS.md), so
   curves per minute would not compare with runs trained without it.
3. Prints each run's curve in wall minutes, train steps and env steps (minutes depend on the
   machine, steps transfer) and the first point at which 0.80 / 0.90 / 0.95 / 0.97 x planner was
   reached (exploit); over several runs, every seed's ratio per point with the median and the
   worst, and the thresholds' median and worst seed. Writes the curves as a PNG (every seed) and
   prints the worst seed's final exploit ratio as the last line.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from cli.flags import add_episode_args
from cli.run import run_tool
from evaluation.inputs import InputError, check_ray_address, episode_settings
from evaluation.pool import PLANNER, play_all
from evaluation.session import EvalRequest, open_session
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.evaluations import read_evaluations
from workflow.config import REPO_ROOT

THRESHOLDS = (0.80, 0.90, 0.95, 0.97)
RUN_NAME = "bench_learn"
STARTED_FILE = "bench_learn_started.json"  # the wall time training started, beside the run


def run_names(seeds: int, first_seed: int | None = None) -> list[tuple[str, list[str]]]:
    """(run name, extra overrides) per run: one run keeps the config's seed, K runs take
    first_seed..first_seed+K-1 (0 when not given)."""
    if seeds == 1 and first_seed is None:
        return [(RUN_NAME, [])]
    start = first_seed or 0
    return [(f"{RUN_NAME}-seed{seed}", [f"app.seed={seed}"]) for seed in range(start, start + seeds)]


def eval_overrides(label: str, usr_conf: dict, episodes: int, seed: int, minutes: float, points: int) -> list[str]:
    """--set lines that make the trained run evaluate itself on the benchmark's episodes, about
    twice per scoring point (a point the evaluator is still playing is simply not there)."""
    settings = [f"eval.every_minutes={max(0.1, minutes / (2 * points)):.4g}", f"eval.episodes={episodes}",
                f"eval.seed={seed}"]
    if label == "custom":
        return settings + [f"eval.usr_conf={toml_inline(usr_conf)}"]
    return settings + [f'eval.preset="{label}"']


def toml_inline(value) -> str:
    """A JSON-like value as a TOML inline literal (for --set)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_inline(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def train(config: str | None, overrides: list[str], minutes: float, run_dir: Path, run_name: str = RUN_NAME) -> Path:
    cmd = [sys.executable, "-m", "workflow.launcher"] + (["--config", config] if config else [])
    for item in overrides + [f'app.run_dir="{run_dir}"', f'app.run_name="{run_name}"', f"app.max_minutes={minutes}",
                             "app.max_ckpt_keep=100000", "app.max_env_steps=0", "app.max_train_steps=0"]:
        cmd += ["--set", item]
    run = run_dir / run_name
    if run.exists():
        raise InputError(f"{run} exists; give another --out or score it with --run {run}")
    started = time.time()
    print(f"training {run_name} for {minutes:g} minutes ...", flush=True)
    result = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=minutes * 60 + 900)
    if result.returncode != 0:
        raise SystemExit(f"the training run failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    (run / STARTED_FILE).write_text(json.dumps({"started": started}))
    return run


@dataclass(frozen=True)
class Point:
    """A checkpoint along a run: when it was written, after how many train and env steps."""

    minute: float
    train_step: int
    env_steps: int | None  # None when the run has no metrics.csv
    path: Path


def env_steps_by_train_step(run: Path) -> dict[int, int]:
    """The env steps the learner had counted at each train step (its metrics.csv rows)."""
    metrics = run / "metrics.csv"
    out: dict[int, int] = {}
    if not metrics.is_file():
        return out
    with metrics.open(newline="") as f:
        for row in csv.DictReader(f):
            try:
                step, env_steps = int(row["train_step"]), int(row["env_steps"])
            except (KeyError, TypeError, ValueError):
                continue  # a torn last line of a killed run
            out[step] = max(out.get(step, 0), env_steps)
    return out


def checkpoints_along(run: Path) -> list[Point]:
    """The run's training checkpoints, oldest first, with wall minutes since training started."""
    marker = run / STARTED_FILE
    dirs = [d for d in ckpt_files.checkpoint_dirs(run) if d.name != "user"]
    if not dirs:
        raise InputError(f"{run}: no checkpoints")
    ckpts = ckpt_files.list_checkpoints(dirs[0])
    started = json.loads(marker.read_text())["started"] if marker.is_file() else min(c.path.stat().st_mtime for c in ckpts)
    counted = env_steps_by_train_step(run)
    steps = sorted(counted)

    def env_steps_at(train_step: int) -> int | None:
        known = [counted[s] for s in steps if s <= train_step]
        return max(known) if known else None

    return [Point(max(0.0, (c.path.stat().st_mtime - started) / 60.0), c.id, env_steps_at(c.id), c.path)
            for c in ckpts]


def pick(points: list, count: int, minute=lambda p: p.minute) -> list:
    """`count` checkpoints spread evenly over the run's minutes, the last one always."""
    if len(points) <= count:
        return points
    end = minute(points[-1])
    chosen = {min(range(len(points)), key=lambda i: abs(minute(points[i]) - end * k / count)) for k in range(1, count + 1)}
    chosen.add(len(points) - 1)
    return [points[i] for i in sorted(chosen)]


def first_reached(rows: list[dict], key: str) -> dict[float, float | None]:
    """Per threshold, `key` (minute, train_step, env_steps) of the first row whose exploit ratio reached it."""
    return {t: next((r[key] for r in rows if r["ratio_exploit"] >= t), None) for t in THRESHOLDS}


def plot(path: Path, runs: dict[str, list[dict]], title: str) -> Path:
    """Exploit (solid) and sampled (dotted) ratio against minutes, one colour per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, (name, rows) in enumerate(runs.items()):
        minutes = [r["minute"] for r in rows]
        colour = f"C{i % 10}"
        ax.plot(minutes, [r["ratio_exploit"] for r in rows], marker="o", color=colour, label=f"{name} exploit")
        if all(r["ratio_sample"] is not None for r in rows):
            ax.plot(minutes, [r["ratio_sample"] for r in rows], ls=":", marker=".", alpha=0.6, color=colour,
                    label=f"{name} sampled" if len(runs) == 1 else None)
    for t in THRESHOLDS:
        ax.axhline(t, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("wall minutes of training")
    ax.set_ylabel("score / planner score")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def fmt(value, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


def run_evaluations(run: Path, env_kwargs: dict, usr_conf: dict, episodes: int, seed: int):
    """The run's own evaluations ([eval]) when they played exactly these episodes, else None."""
    dirs = [d for d in ckpt_dirs(run)]
    found = read_evaluations(dirs[0]) if dirs else None
    if found is None or found.planner is None or not found.checkpoints:
        return None
    settings = found.settings
    same = (settings.get("usr_conf") == usr_conf and settings.get("episodes") == episodes
            and settings.get("seed") == seed and settings.get("env") == json.loads(json.dumps(env_kwargs)))
    return found if same else None


def ckpt_dirs(run: Path) -> list[Path]:
    return [d for d in ckpt_files.checkpoint_dirs(run) if d.name != "user"]


def score(run: Path, args: argparse.Namespace, label: str, usr_conf: dict) -> dict:
    """Score `run`'s checkpoints on the episodes `usr_conf` draws (`label` names them) in the game
    the run played (evaluation.session: its game, env and episodes, as tools/evaluate.py --ckpt RUN
    draws them); print and write its curve; -> {"planner", "rows"}. The run's own evaluations of
    those episodes are used where they cover a point."""
    config = run / "log" / "effective_config.toml"
    if not config.is_file():
        raise InputError(f"{run}: no log/effective_config.toml (not a run directory)")
    along = checkpoints_along(run)
    custom = label == "custom"
    session = open_session(EvalRequest(ckpt=run, config=config, preset=None if custom else label,
                                       usr_conf=usr_conf if custom else None))
    env_kwargs = session.env_kwargs
    _, episodes = session.episodes(args.episodes, args.seed)
    own = run_evaluations(run, env_kwargs, usr_conf, args.episodes, args.seed)
    if own is not None:  # the evaluated checkpoints, and the final one
        along = [p for p in along if p.train_step in own.checkpoints] + [along[-1]]
        along = sorted({p.train_step: p for p in along}.values(), key=lambda p: p.train_step)
    chosen = pick(along, args.points)
    workers = args.workers or (None if args.ray else len(os.sched_getaffinity(0)))
    known = own.checkpoints if own is not None else {}
    keys = [str(p.path) for p in chosen if p.train_step not in known]
    can_sample = "sample" in session.game.policy_modes  # a v2 agent is evaluated with its exploit only
    sample = can_sample and (own is None or args.sampled)
    print(f"scoring {run.name}: {len(keys)} checkpoints x {args.episodes} episodes ({label}) with exploit"
          + (" and sampling" if sample else "")
          + (f"; {len(chosen) - len(keys)} more from the run's own evaluations" if own is not None else "")
          + " ...", flush=True)
    greedy = play_all([(k, e) for k in keys + ([PLANNER] if own is None else []) for e in episodes], env_kwargs,
                      workers=workers, config_file=str(config), agent_mode="greedy", ray_address=args.ray)
    sampled = play_all([(k, e) for k in [str(p.path) for p in chosen] for e in episodes], env_kwargs, workers=workers,
                       config_file=str(config), agent_mode="sample", ray_address=args.ray) if sample else {}

    def mean(records: dict, field: str = "total_score") -> float:
        return sum(float(getattr(r, field)) for r in records.values()) / len(records)

    planner = own.planner["score"] if own is not None else mean(greedy[PLANNER])

    def exploit(p: Point, field: str = "total_score", own_field: str = "score") -> float:
        return known[p.train_step][own_field] if p.train_step in known else mean(greedy[str(p.path)], field)

    rows = [{"minute": round(p.minute, 2), "train_step": p.train_step, "env_steps": p.env_steps, "ckpt": p.path.name,
             "score_exploit": exploit(p), "ratio_exploit": exploit(p) / planner,
             "ratio_sample": mean(sampled[str(p.path)]) / planner if sample else None,
             "win_rate": exploit(p, "won", "win"), "chests": exploit(p, "chests", "chests"),
             "from_run": p.train_step in known} for p in chosen]
    print(f"\n{run.name}: {label} ({args.episodes} episodes, seeds {args.seed}..), planner {planner:.1f}")
    print(f"{'minute':>7} {'train step':>10} {'env steps':>10} {'exploit score':>13} {'exploit ratio':>13} "
          f"{'sampled ratio':>13} {'win rate':>8} {'chests':>6}")
    for r in rows:
        print(f"{r['minute']:7.1f} {r['train_step']:>10} {fmt(r['env_steps']):>10} {r['score_exploit']:13.1f} "
              f"{r['ratio_exploit']:13.3f} {fmt(r['ratio_sample'], '13.3f'):>13} {r['win_rate']:8.2f} {r['chests']:6.2f}")
    reached = {key: first_reached(rows, key) for key in ("minute", "train_step", "env_steps")}
    print("first reached: " + ", ".join(
        f"{t:.2f} at {fmt(reached['minute'][t], '.1f')} min / {fmt(reached['train_step'][t])} train steps / "
        f"{fmt(reached['env_steps'][t])} env steps" for t in THRESHOLDS), flush=True)
    out = run / "bench_learn"
    out.mkdir(exist_ok=True)
    result = {"run": str(run), "preset": label, "planner": planner, "rows": rows,
              "first_reached": {key: {str(t): v for t, v in by.items()} for key, by in reached.items()}}
    (out / "curve.json").write_text(json.dumps(result, indent=1))
    print(f"wrote {plot(out / 'curve.png', {run.name: rows}, f'{run.name}: {label} vs planner')}")
    return result


def compare(results: list[dict], out: Path, preset_name: str) -> None:
    """Several runs of one config: every seed's ratio per scoring point, median and worst; each
    threshold's median and worst seed in minutes, train steps and env steps; one PNG of all."""
    names = [Path(r["run"]).name for r in results]
    points = min(len(r["rows"]) for r in results)
    print(f"\n{len(results)} runs, exploit ratio per scoring point (point k of each run):")
    labels = [n.removeprefix(f"{RUN_NAME}-") for n in names]
    print(f"(minute and train step: {names[0]}'s)")
    print(f"{'point':>5} {'minute':>7} {'train step':>10} " + " ".join(f"{n[-12:]:>12}" for n in labels)
          + f" {'median':>7} {'worst':>7}")
    for k in range(points):
        ratios = [r["rows"][k]["ratio_exploit"] for r in results]
        first = results[0]["rows"][k]
        print(f"{k + 1:>5} {first['minute']:7.1f} {first['train_step']:>10} " + " ".join(f"{x:12.3f}" for x in ratios)
              + f" {statistics.median(ratios):7.3f} {min(ratios):7.3f}")
    print("threshold: median / worst seed (a seed that never reached it counts as worst, '-')")
    for t in THRESHOLDS:
        parts = []
        for key, unit, spec in (("minute", "min", ".1f"), ("train_step", "train steps", ".0f"),
                                ("env_steps", "env steps", ".0f")):
            values = [r["first_reached"][key][str(t)] for r in results]
            reached = [v for v in values if v is not None]
            median = statistics.median(reached) if len(reached) * 2 > len(values) else None
            worst = max(reached) if len(reached) == len(values) else None
            parts.append(f"{fmt(median, spec)} / {fmt(worst, spec)} {unit}")
        print(f"  {t:.2f}: " + ", ".join(parts))
    out.mkdir(parents=True, exist_ok=True)
    (out / "curves.json").write_text(json.dumps(results, indent=1))
    print(f"wrote {plot(out / 'curves.png', dict(zip(names, (r['rows'] for r in results))), f'{len(results)} seeds: {preset_name} vs planner')}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=None, help="TOML config to train (default conf/configure_app.toml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--minutes", type=float, default=120.0, help="wall-clock training budget per run (default 120)")
    parser.add_argument("--seeds", type=int, default=1,
                        help="runs one after another with app.seed 0..K-1 (default 1: one run, the config's seed)")
    parser.add_argument("--first-seed", type=int, default=None,
                        help="the runs' app.seed start at this one instead of 0 (seeds a sweep never trained)")
    parser.add_argument("--run", type=Path, action="append", default=None,
                        help="score this existing run instead of training (repeat for several seeds' runs)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs", help="where the runs go (default runs/)")
    add_episode_args(parser)  # --preset (default leaderboard-2024) or --usr-conf
    parser.add_argument("--episodes", type=int, default=30, help="episodes per checkpoint (default 30)")
    parser.add_argument("--points", type=int, default=8, help="checkpoints scored along each run (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first evaluation episode")
    parser.add_argument("--workers", type=int, default=None, help="evaluation processes (default: the cores)")
    parser.add_argument("--ray", default=None, metavar="ADDRESS",
                        help="score on a Ray cluster (local, auto or HOST:PORT): episodes spread over its CPUs")
    parser.add_argument("--in-run-eval", action=argparse.BooleanOptionalAction, default=False,
                        help="the runs it trains evaluate themselves on these episodes ([eval]), so scoring plays "
                             "only the final checkpoint (default off: the evaluator's CPU slows training on few cores)")
    parser.add_argument("--sampled", action="store_true",
                        help="also score sampling where the run's own evaluations give the exploit scores")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    def action(args: argparse.Namespace) -> int:
        check_ray_address(args.ray)
        for flag in ("episodes", "points", "seeds"):
            if getattr(args, flag) < 1:
                raise InputError(f"--{flag} must be >= 1, got {getattr(args, flag)}")
        if args.run is None and args.minutes <= 0:
            raise InputError(f"--minutes must be > 0, got {args.minutes}")
        label, usr_conf = episode_settings(args.preset, args.usr_conf)  # before training: bad episodes must not cost a run
        if args.run is not None:
            runs = args.run
        else:
            evaluating = (eval_overrides(label, usr_conf, args.episodes, args.seed, args.minutes, args.points)
                          if args.in_run_eval else [])
            runs = [train(args.config, args.overrides + evaluating + extra, args.minutes, args.out, name)
                    for name, extra in run_names(args.seeds, args.first_seed)]
        for run in runs:
            if not run.is_dir():
                raise InputError(f"--run {run}: not a directory")
        results = [score(run, args, label, usr_conf) for run in runs]
        if len(results) > 1:
            compare(results, runs[0].parent / f"{RUN_NAME}-seeds", label)
        finals = [r["rows"][-1]["ratio_exploit"] for r in results]
        print(f"worst seed's final ratio (exploit, {len(finals)} run{'s' if len(finals) > 1 else ''}): {min(finals):.3f}")
        return 0
    return run_tool(action, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
