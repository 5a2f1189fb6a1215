"""The DQN family on equal terms: the platform's official `dqn` and `target_dqn` packages, the
project's `dqn_plus` with uniform replay and with prioritized replay, each trained by
./train.sh for the same wall-clock budget on the official map, then scored on the same
`random-8` episodes (the episodes the official packages train on) against the route planner.

    python tools/bench_algos.py --minutes 8
    python tools/bench_algos.py --minutes 8 --only dqn_plus_per,dqn_plus_uniform
    python tools/bench_algos.py --score runs/bench_algos        # score the runs there again

Prints one row per contender (ratio to the planner, mean score, env steps consumed, train steps,
wall minutes) and, last, the prioritized package's ratio and whether it is the best of them.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import realm
from cli.run import run_tool
from evaluation.episodes import resolve_episodes
from evaluation.inputs import InputError, env_from_config
from evaluation.pool import PLANNER, play_all
from realm.back_to_the_realm.presets import preset
from workflow.checkpoints import ckpt_files
from workflow.config import REPO_ROOT

SHARED = REPO_ROOT.parent / "shared"
RESULT_FILE = "bench_algos.json"


@dataclass(frozen=True)
class Contender:
    name: str
    args: tuple[str, ...]  # for workflow.launcher
    package: bool  # a Kaiwu package directory (--kaiwu), scored with its own load_model


def contenders(kaiwu: Path) -> list[Contender]:
    return [
        Contender("official_dqn", ("--package", str(kaiwu), "--set", 'app.algo="dqn"'), True),
        Contender("official_target_dqn", ("--package", str(kaiwu), "--set", 'app.algo="target_dqn"'), True),
        Contender("dqn_plus_uniform", ("--config", "conf/dqn_plus.toml", "--set",
                                       'app.reverb_sampler="reverb.selectors.Uniform"'), False),
        Contender("dqn_plus_per", ("--config", "conf/dqn_plus.toml"), False),
    ]


def train(contender: Contender, out: Path, minutes: float, env_overrides: list[str]) -> None:
    run = out / contender.name
    if run.exists():
        raise InputError(f"{run} exists; give another --out, or --score {out}")
    cmd = [sys.executable, "-m", "workflow.launcher", *contender.args]
    for item in env_overrides + [f'app.run_dir="{out}"', f'app.run_name="{contender.name}"', f"app.max_minutes={minutes}",
                                 "app.max_env_steps=0", "app.max_train_steps=0"]:
        cmd += ["--set", item]
    print(f"training {contender.name} for {minutes:g} minutes ...", flush=True)
    started = time.time()
    result = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=minutes * 60 + 900)
    if result.returncode != 0:
        raise SystemExit(f"training {contender.name} failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    (run / "bench_algos_wall.json").write_text(json.dumps({"minutes": (time.time() - started) / 60.0}))


def run_summary(run: Path) -> dict:
    """The run's newest checkpoint and its counters (from metrics.csv)."""
    dirs = [d for d in ckpt_files.checkpoint_dirs(run) if d.name != "user"]
    newest = ckpt_files.latest_checkpoint(dirs[0]) if dirs else None
    if newest is None:
        raise InputError(f"{run}: no checkpoint")
    env_steps = train_steps = 0
    with open(run / "metrics.csv", newline="") as f:
        for row in csv.DictReader(f):
            env_steps = max(env_steps, int(float(row["env_steps"] or 0)))
            train_steps = max(train_steps, int(float(row["train_step"] or 0)))
    wall = run / "bench_algos_wall.json"
    minutes = json.loads(wall.read_text())["minutes"] if wall.is_file() else float("nan")
    return {"ckpt": str(newest.path), "env_steps": env_steps, "train_steps": train_steps, "wall_minutes": minutes}


def score(out: Path, chosen: list[Contender], kaiwu: Path, args: argparse.Namespace) -> int:
    runs = {c.name: out / c.name for c in chosen if (out / c.name).is_dir()}
    if not runs:
        raise InputError(f"{out}: none of {', '.join(c.name for c in chosen)} was trained there")
    env_kwargs = env_from_config(next(iter(runs.values())) / "log" / "effective_config.toml")
    usr_conf = preset(args.preset)
    episodes = resolve_episodes(realm.make_env(**env_kwargs), usr_conf, args.episodes, args.seed)
    workers = args.workers or len(os.sched_getaffinity(0))

    def mean(records: dict) -> float:
        return sum(r.total_score for r in records.values()) / len(records)

    print(f"scoring on {args.preset}, {args.episodes} episodes each ...", flush=True)
    planner = mean(play_all([(PLANNER, e) for e in episodes], env_kwargs, workers=workers)[PLANNER])
    rows = []
    for contender in chosen:
        if contender.name not in runs:
            continue
        run = runs[contender.name]
        summary = run_summary(run)
        records = play_all([(summary["ckpt"], e) for e in episodes], env_kwargs, workers=workers,
                           config_file=str(run / "log" / "effective_config.toml"), agent_mode="greedy",
                           package_dir=str(kaiwu) if contender.package else None)[summary["ckpt"]]
        rows.append({"name": contender.name, "score": mean(records), "ratio": mean(records) / planner,
                     "chests": sum(r.chests for r in records.values()) / len(records),
                     "win_rate": sum(r.won for r in records.values()) / len(records), **summary})
    print(f"\n{args.preset} ({args.episodes} episodes, seeds {args.seed}..), planner {planner:.1f}")
    print(f"{'contender':<22} {'ratio':>6} {'score':>7} {'chests':>6} {'win':>5} {'env steps':>10} {'train steps':>11} "
          f"{'wall min':>8}")
    for r in rows:
        print(f"{r['name']:<22} {r['ratio']:6.3f} {r['score']:7.1f} {r['chests']:6.2f} {r['win_rate']:5.2f} "
              f"{r['env_steps']:10d} {r['train_steps']:11d} {r['wall_minutes']:8.1f}")
    (out / RESULT_FILE).write_text(json.dumps({"preset": args.preset, "planner": planner, "rows": rows}, indent=1))
    per = next((r for r in rows if r["name"] == "dqn_plus_per"), None)
    if per is None:
        print(f"best: {max(rows, key=lambda r: r['ratio'])['name']}")
        return 0
    best = max(rows, key=lambda r: r["ratio"])
    verdict = "best" if per["ratio"] >= best["ratio"] else f"not best: {best['name']} {best['ratio']:.3f}"
    print(f"dqn_plus_per ratio: {per['ratio']:.3f} ({verdict} of {len(rows)})")
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=8.0, help="wall-clock training budget each (default 8)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs" / "bench_algos", help="where the runs go")
    parser.add_argument("--score", type=Path, default=None, metavar="DIR", help="score the runs in DIR, train nothing")
    parser.add_argument("--only", default="", help="comma-separated contenders (default all four)")
    parser.add_argument("--kaiwu", type=Path, default=SHARED / "kaiwu", help="the platform's code package (dqn, target_dqn)")
    parser.add_argument("--map-file", default=str(SHARED / "realm" / "map_1.json"), help="the official map")
    parser.add_argument("--positions-file", default=str(SHARED / "realm" / "position_pool.json"))
    parser.add_argument("--preset", default="random-8", help="episodes scored (default random-8)")
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="seed of the first evaluation episode")
    parser.add_argument("--workers", type=int, default=None, help="evaluation processes (default: the cores)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    def action(args: argparse.Namespace) -> int:
        every = contenders(args.kaiwu.resolve())
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(names) - {c.name for c in every})
        if unknown:
            raise InputError(f"--only: unknown {', '.join(unknown)}; allowed: {', '.join(c.name for c in every)}")
        chosen = [c for c in every if not names or c.name in names]
        if any(c.package for c in chosen) and not (args.kaiwu / "dqn").is_dir():
            raise InputError(f"--kaiwu {args.kaiwu}: not the platform's code package (no dqn/ folder)")
        if args.episodes < 1:
            raise InputError(f"--episodes must be >= 1, got {args.episodes}")
        if args.score is not None:
            return score(args.score, chosen, args.kaiwu.resolve(), args)
        for key in ("map_file", "positions_file"):
            if not Path(getattr(args, key)).is_file():
                raise InputError(f"--{key.replace('_', '-')} {getattr(args, key)}: file not found")
        if args.minutes <= 0:
            raise InputError(f"--minutes must be > 0, got {args.minutes}")
        env = [f'env.map_file="{Path(args.map_file).resolve()}"',
               f'env.positions_file="{Path(args.positions_file).resolve()}"']
        args.out.mkdir(parents=True, exist_ok=True)
        for contender in chosen:
            train(contender, args.out, args.minutes, env)
        return score(args.out, chosen, args.kaiwu.resolve(), args)
    return run_tool(action, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
