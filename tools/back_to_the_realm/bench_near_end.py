"""How reliably the project's PPO learns the near-end task (tasks/back_to_the_realm.py), over seeds.

    python tools/back_to_the_realm/bench_near_end.py --seeds 10            # seeds 0..9, two at a time
    MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 python tools/back_to_the_realm/bench_near_end.py --seeds 10
    python tools/back_to_the_realm/bench_near_end.py --seeds 10 --set ppo.learning_rate=0   # learning broken: 0 of 10

Each seed trains in its own process until 90 % of the last 50 training episodes are won or the
budget of env steps runs out. Prints one row per seed (env steps to the target, train steps,
seconds, the trained policy's win rate on unseen episodes), the median and the worst env steps
over the seeds that learned, and last the number of seeds that learned.
"""
from __future__ import annotations

import argparse
import dataclasses
import multiprocessing as mp
import statistics
import sys

import toml

from tasks import back_to_the_realm as near_end


def parse_value(text: str):
    try:
        return toml.loads(f"v = {text}")["v"]
    except toml.TomlDecodeError:
        return text


def run_seed(job: tuple[str, int, int, dict]) -> dict:
    algo, seed, budget, overrides = job
    cfg = near_end.dqn_near_end_config(seed) if algo == "dqn_plus" else near_end.near_end_config(seed)
    for section, values in overrides.items():
        setattr(cfg, section, dataclasses.replace(getattr(cfg, section), **values))
    result = near_end.train_near_end(cfg, budget)
    return {k: v for k, v in vars(result).items() if k != "agent"}


SECTIONS = ("ppo", "dqn", "reward", "model", "app")


def overrides_of(pairs: list[str]) -> dict[str, dict]:
    """--set section.key=value (ppo, dqn, reward, model, app) -> {section: {key: value}}."""
    out: dict[str, dict] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        section, dot, name = key.partition(".")
        if not (sep and dot and section in SECTIONS):
            raise SystemExit(f"--set {pair!r}: expected section.key=value with section one of {', '.join(SECTIONS)}")
        out.setdefault(section, {})[name] = parse_value(value)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    parser.add_argument("--seed-list", default=None, help="comma-separated seeds instead of 0..N-1, e.g. 0,5,8")
    parser.add_argument("--algo", default="ppo", choices=["ppo", "dqn_plus"], help="the package (default ppo)")
    parser.add_argument("--budget", type=int, default=None,
                        help=f"env steps per seed (default ppo {near_end.BUDGET_ENV_STEPS}, "
                             f"dqn_plus {near_end.DQN_BUDGET_ENV_STEPS})")
    parser.add_argument("--jobs", type=int, default=2, help="seeds trained at once, one torch thread each")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="change the task's config, e.g. ppo.learning_rate=0 or reward.scale=0")
    args = parser.parse_args(argv)
    overrides = overrides_of(args.set)
    seeds = [int(s) for s in args.seed_list.split(",")] if args.seed_list else list(range(args.seeds))
    budget = args.budget or (near_end.DQN_BUDGET_ENV_STEPS if args.algo == "dqn_plus" else near_end.BUDGET_ENV_STEPS)
    jobs = [(args.algo, seed, budget, overrides) for seed in seeds]
    with mp.get_context("spawn").Pool(min(args.jobs, len(jobs))) as pool:
        rows = []
        print(f"{'seed':>4} {'learned':>7} {'env steps':>9} {'updates':>7} {'seconds':>7} {'first win':>9} "
              f"{'train win':>9} {'eval win':>8} {'eval steps':>10}", flush=True)
        for row in pool.imap(run_seed, jobs):
            rows.append(row)
            print(f"{row['seed']:>4} {'yes' if row['learned'] else 'NO':>7} {row['env_steps']:>9} {row['updates']:>7} "
                  f"{row['seconds']:>7.0f} {row['first_win_rate']:>9.2f} {row['train_win_rate']:>9.2f} "
                  f"{row['eval_win_rate']:>8.2f} {row['eval_steps']:>10.1f}", flush=True)
    learned = [r for r in rows if r["learned"]]
    if learned:
        steps = [r["env_steps"] for r in learned]
        print(f"env steps to the target over the {len(learned)} seeds that learned: median "
              f"{statistics.median(steps):.0f}, worst {max(steps)} (budget {budget})")
    print(f"eval win rate: median {statistics.median(r['eval_win_rate'] for r in rows):.2f}, "
          f"worst {min(r['eval_win_rate'] for r in rows):.2f}")
    print(f"learned: {len(learned)} of {len(rows)} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
