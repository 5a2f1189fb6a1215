"""Evaluate checkpoints (or the route planner) on a preset, with the planner's score on the same
episodes for scale.

    python tools/evaluate.py --ckpt runs/default/ckpt/back_to_the_realm_ppo/model.ckpt-1000.pkl
    python tools/evaluate.py --ckpt runs/default --every 4 --preset random-8 --workers 2
    python tools/evaluate.py --ckpt runs/default --best     # the checkpoint the run's evaluator scored best
    python tools/evaluate.py --agent planner --preset fixed-13 \\
        --map-file ../shared/realm/map_1.json --positions-file ../shared/realm/position_pool.json

Episodes are drawn once (random chests resolved, seeds S, S+1, ...) and every policy plays
exactly those, so "ratio" (agent mean / planner mean) compares like with like. Writes
episodes.csv, summary.csv and results.json to --out; for a directory of checkpoints also
score_vs_step.png and the scores beside the checkpoints (for clean_ckpt.py --keep-best).
Bad input (missing file, unknown preset, bad JSON, invalid usr_conf) exits with code 2.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tool_args import (InputError, REPO_ROOT, add_best_arg, add_episode_args, add_map_args, add_package_arg,
                       add_policy_args, best_checkpoint_file, check_episode_args, config_source, describe_episodes,
                       eval_env_kwargs, game_episode_settings, package_checkpoint, run_tool)  # noqa: E402
from record_args import add_record_arg, record_evaluated  # noqa: E402

import numpy as np  # noqa: E402

import games  # noqa: E402
from workflow.checkpoints import ckpt_files  # noqa: E402

EPISODE_FIELDS = ("policy", "ckpt_id", "episode", "seed", "total_score", "won", "chests", "steps", "buff_count",
                  "flash_count", "usr_conf")
SUMMARY_FIELDS = ("policy", "ckpt_id", "episodes", "score_mean", "score_std", "win_rate", "chests_mean",
                  "chests_available", "steps_mean", "buff_mean", "flash_mean", "planner_score_mean", "ratio")


@dataclass
class Summary:
    policy: str  # "planner" or the checkpoint path
    ckpt_id: int | None
    episodes: int
    score_mean: float
    score_std: float
    win_rate: float
    chests_mean: float
    chests_available: float
    steps_mean: float
    buff_mean: float
    flash_mean: float
    planner_score_mean: float | None = None  # over the same episodes
    ratio: float | None = None  # score_mean / planner_score_mean

    def row(self) -> dict:
        return {k: getattr(self, k) for k in SUMMARY_FIELDS}


#: what separates a checkpoint's key from the information it was handed (--extra-info): "<ckpt> | withheld"
INFO_MARK = " | "


def ckpt_id_of(policy: str) -> int | None:
    """The checkpoint id of a policy key (a checkpoint path, with --extra-info's value after INFO_MARK)."""
    return ckpt_files.parse_ckpt_id(policy.split(INFO_MARK)[0])


def summarize(policy: str, records: dict, planner: dict | None) -> Summary:
    """Means over one policy's episodes; with the planner's records of the same episodes, the ratio.

    Raises ValueError if an episode of the planner differs (usr_conf or seed) from the agent's.
    """
    indices = sorted(records)
    recs = [records[i] for i in indices]
    scores = np.array([r.total_score for r in recs], dtype=np.float64)
    summary = Summary(
        policy=policy,
        ckpt_id=ckpt_id_of(policy),
        episodes=len(recs),
        score_mean=float(scores.mean()),
        score_std=float(scores.std()),
        win_rate=float(np.mean([r.won for r in recs])),
        chests_mean=float(np.mean([r.chests for r in recs])),
        chests_available=float(np.mean([r.chests_available for r in recs])),
        steps_mean=float(np.mean([r.steps for r in recs])),
        buff_mean=float(np.mean([r.buff_count for r in recs])),
        flash_mean=float(np.mean([r.flash_count for r in recs])),
    )
    if planner is not None and policy != "planner":
        for i in indices:
            same = i in planner and planner[i].usr_conf == records[i].usr_conf and planner[i].seed == records[i].seed
            if not same:
                raise ValueError(f"episode {i}: the planner did not play the same episode as {policy}")
        planner_mean = float(np.mean([planner[i].total_score for i in indices]))
        summary.planner_score_mean = planner_mean
        summary.ratio = summary.score_mean / planner_mean if planner_mean > 0 else float("nan")
    return summary


def _fmt(value, spec: str, empty: str = "-") -> str:
    return empty if value is None else format(value, spec)


def format_table(summaries: list[Summary]) -> str:
    header = (f"{'policy':<22} {'eps':>4} {'score mean ± std':>18} {'win':>6} {'chests':>9} {'steps':>7} "
              f"{'buff':>5} {'flash':>5} {'planner':>8} {'ratio':>6}")
    lines = [header, "-" * len(header)]
    for s in summaries:
        name = "planner" if s.policy == "planner" else (f"ckpt {s.ckpt_id}" if s.ckpt_id is not None else s.policy)
        if s.ckpt_id is not None and INFO_MARK in s.policy:
            name += f" {s.policy.split(INFO_MARK)[1]}"
        chests = f"{s.chests_mean:.1f}/{s.chests_available:.0f}"
        lines.append(f"{name:<22} {s.episodes:>4} {s.score_mean:>9.1f} ± {s.score_std:<6.1f} {s.win_rate:>6.0%} "
                     f"{chests:>9} {s.steps_mean:>7.0f} {s.buff_mean:>5.2f} {s.flash_mean:>5.2f} "
                     f"{_fmt(s.planner_score_mean, '8.1f', '       -')} {_fmt(s.ratio, '6.3f', '     -')}")
    return "\n".join(lines)


def write_outputs(out: Path, settings: dict, summaries: list[Summary], results: dict) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    episode_rows = []
    for policy, records in results.items():
        for index in sorted(records):
            row = records[index].to_row()
            episode_rows.append({"policy": policy, "ckpt_id": ckpt_id_of(policy), "episode": index,
                                 **{k: row[k] for k in EPISODE_FIELDS if k in row}})
    paths = [out / "episodes.csv", out / "summary.csv", out / "results.json"]
    with paths[0].open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=EPISODE_FIELDS)
        writer.writeheader()
        writer.writerows(episode_rows)
    with paths[1].open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SUMMARY_FIELDS)
        writer.writeheader()
        writer.writerows(s.row() for s in summaries)
    body = {"settings": settings, "summary": [s.row() for s in summaries],
            "episodes": [{**r, "usr_conf": json.loads(r["usr_conf"])} for r in episode_rows]}
    paths[2].write_text(json.dumps(body, indent=1) + "\n")
    return paths


def plot_score_vs_step(path: Path, summaries: list[Summary], title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = sorted((s for s in summaries if s.ckpt_id is not None), key=lambda s: s.ckpt_id)
    steps = np.array([s.ckpt_id for s in agents], dtype=np.float64)
    mean = np.array([s.score_mean for s in agents])
    std = np.array([s.score_std for s in agents])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, mean, marker="o", label="agent (mean)")
    ax.fill_between(steps, mean - std, mean + std, alpha=0.2, label="± std")
    planner = next((s for s in summaries if s.policy == "planner"), None)
    if planner is not None:
        ax.axhline(planner.score_mean, color="tab:red", linestyle="--", label=f"planner {planner.score_mean:.0f}")
    ax2 = ax.twinx()
    ax2.plot(steps, [s.win_rate for s in agents], color="tab:green", alpha=0.6, marker=".", label="win rate")
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_ylabel("win rate")
    ax.set_xlabel("train step")
    ax.set_ylabel("total score")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    handles = ax.get_legend_handles_labels()
    handles2 = ax2.get_legend_handles_labels()
    ax.legend(handles[0] + handles2[0], handles[1] + handles2[1], fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def find_checkpoints(path: Path, every: int) -> list[Path]:
    """The checkpoint files to evaluate: one file, or every `every`-th of a checkpoint/run dir."""
    if path.is_file():
        if ckpt_files.parse_ckpt_id(path) is None:
            raise InputError(f"--ckpt: not a checkpoint file (model.ckpt-N.pkl): {path}")
        return [path]
    if not path.is_dir():
        raise InputError(f"--ckpt: no such file or directory: {path}")
    dirs = ckpt_files.checkpoint_dirs(path)
    if not dirs:
        raise InputError(f"--ckpt: no checkpoint (model.ckpt-N.pkl) in {path} or its ckpt/*/")
    if len(dirs) > 1:  # a run dir: the training checkpoints, not the episode loop's own saves in ckpt/user
        dirs = [d for d in dirs if d.name != "user"] or dirs
    if len(dirs) > 1:
        raise InputError(f"--ckpt: {path} holds several checkpoint directories; name one: "
                         + ", ".join(str(d) for d in dirs))
    return [c.path for c in ckpt_files.every_kth(ckpt_files.list_checkpoints(dirs[0]), every)]


def default_out(ckpts: list[Path], label: str, agent: str) -> Path:
    if agent == "ckpt":
        run_dir = ckpt_files.run_dir_of(ckpts[0].parent)
        if run_dir is not None:
            return run_dir / "eval" / label
    return REPO_ROOT / "out" / "eval" / (f"planner-{label}" if agent == "planner" else label)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", type=Path, help="checkpoint file, checkpoint directory or run directory")
    parser.add_argument("--agent", choices=("ckpt", "planner"), default="ckpt",
                        help="evaluate the checkpoint(s) (with the planner beside them) or the planner alone")
    add_episode_args(parser)
    add_map_args(parser)
    add_policy_args(parser)
    add_package_arg(parser)
    parser.add_argument("--episodes", type=int, default=30, help="episodes per policy (default 30)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    parser.add_argument("--ray", default=None, metavar="ADDRESS",
                        help="spread the episodes over a Ray cluster: local, auto or HOST:PORT (--workers caps the "
                             "actors; default one per CPU of the cluster). Needs requirements-ray.txt")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode (then +1 each)")
    parser.add_argument("--every", type=int, default=1, help="with a directory: every k-th checkpoint, newest first")
    add_best_arg(parser)
    parser.add_argument("--extra-info", default=None, metavar="VALUES",
                        help="score the checkpoints with the env handing the package each of these, comma-separated, "
                             "one row each on the same episodes: gorge_chase's [env] gorge_extra_info, full (extra_info "
                             "with frame_state) | withheld (without), e.g. full,withheld; the planner plays once "
                             "(it reads the true state). Default: the config's [env] value alone")
    parser.add_argument("--no-planner", action="store_true", help="skip the planner's reference episodes")
    parser.add_argument("--out", type=Path, help="output directory (default: <run>/eval/<preset>, else out/eval/)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_record_arg(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run_tool(evaluate, parse_args(argv))


def read_config_args(args: argparse.Namespace) -> None:
    """args.config becomes the ConfigSource of --config and --set (None when neither is given),
    read as ./train.sh reads it; --set alone applies over the checkpoint's run config."""
    run_config = None
    if args.config is None and args.overrides and getattr(args, "agent", "ckpt") == "ckpt" and args.ckpt is not None:
        from evaluation.episodes import run_config_file

        run_config = run_config_file(find_checkpoints(args.ckpt, 1)[0])
    args.config = config_source(args, run_config)


def evaluated_platform(args: argparse.Namespace):
    """The platform version the evaluated policy plays in (its game is the episodes'): --package's;
    else, for --ckpt, that of the project agent of the checkpoint's run (app.app, app.algo); else, for the
    reference alone, the version whose evaluation preset --preset is (or one of its game's), else
    that of --config's agent, else the project's."""
    from workflow import platforms
    from workflow.config import ConfigSource
    from workflow.platforms.project import find_project_algorithm
    from workflow.schema import ConfigError

    if args.package is not None:
        try:
            return platforms.of_package(args.package)
        except ConfigError as e:
            raise InputError(str(e)) from e
    if args.agent == "ckpt" and args.ckpt is not None:
        from agent.checkpoint_io import CheckpointError
        from evaluation.episodes import project_algo

        try:
            project = find_project_algorithm(*project_algo(find_checkpoints(args.ckpt, 1)[0], args.config))
        except CheckpointError as e:
            raise InputError(str(e)) from e
        return project.layout.platform
    game = games.of_preset(args.preset) if args.preset else None
    if game is not None:
        family = [v for v in platforms.VERSIONS.values() if v.game == game.name]
        return next((v for v in family if v.eval_preset == args.preset), family[0])
    if args.config is not None:
        from agent.checkpoint_io import CheckpointError
        from evaluation.episodes import project_algo

        try:
            source = ConfigSource.of(args.config)
            return find_project_algorithm(*project_algo(Path(source.path), source)).layout.platform
        except CheckpointError as e:
            raise InputError(str(e)) from e
    return platforms.PROJECT


def evaluate(args: argparse.Namespace) -> int:
    """Checkpoints (or the reference alone) on the episodes of a preset or --usr-conf, in the game
    the evaluated packages play (games): the same mechanism for every game."""
    import realm
    from evaluation.pool import PLANNER, play_all
    from evaluation.worker import episodes_of
    from workflow.supervision.ray_cluster import check_address
    from agent.checkpoint_io import CheckpointError
    from evaluation.episodes import load_agent, run_config_file

    if args.ray is not None:
        try:
            check_address(args.ray)
        except ValueError as e:
            raise InputError(str(e)) from None
    if args.episodes < 1:
        raise InputError(f"--episodes must be >= 1, got {args.episodes}")
    if args.every < 1:
        raise InputError(f"--every must be >= 1, got {args.every}")
    check_episode_args(args)
    read_config_args(args)
    platform = evaluated_platform(args)
    game = games.of_platform(platform)
    try:
        game.check_policy_mode(args.policy)
    except ValueError as e:
        raise InputError(f"--policy {args.policy}: {e}") from None
    label, usr_conf = game_episode_settings(args, game, platform)
    print(describe_episodes(args, label, platform), flush=True)
    ckpts: list[Path] = []
    if args.agent == "ckpt":
        package_checkpoint(args)
        if args.ckpt is None:
            raise InputError("--ckpt is required (or --package, or --agent planner)")
        if args.best:
            args.ckpt = best_checkpoint_file(args.ckpt)
        ckpts = find_checkpoints(args.ckpt, args.every)
        try:
            load_agent(ckpts[-1], args.config, args.package)  # fail here, not in a worker, on an unusable checkpoint
        except CheckpointError as e:
            raise InputError(str(e)) from e
    env_kwargs = eval_env_kwargs(args, game, platform, run_config_file(ckpts[0]) if ckpts else None)
    if args.usr_conf is None:  # a preset: some need map files the env settings must name
        try:
            game.check_preset_env(label, env_kwargs)
        except ValueError as e:
            raise InputError(f"--preset: {e}") from None
    variants = info_variants(args.extra_info, game, env_kwargs)
    try:
        env = realm.make_env(**variants[0][1])
        episodes = episodes_of(env, usr_conf, args.episodes, args.seed)
    except realm.UsrConfError as e:
        chosen = args.package or args.ckpt or args.preset or args.config
        hint = "" if chosen else f" (these are {game.name}'s episodes, the default; --config or --preset picks the game)"
        raise InputError(f"invalid usr_conf ({label}): {e}{hint}") from e
    except (realm.MapError, ValueError, TypeError, OSError) as e:
        raise InputError(f"map or env settings {env_kwargs}: {e}") from e
    maps = game.maps_line(env, [episode.usr_conf for episode in episodes])
    if maps:
        print(maps, flush=True)

    planners = [PLANNER] if args.agent == "planner" or not args.no_planner else []
    keys = [str(c) + mark for mark, _ in variants for c in ckpts] + planners
    workers = args.workers if args.workers is not None else (None if args.ray else os.cpu_count() or 1)
    on_done = progress_bar(len(keys) * len(episodes), args.quiet)
    start = time.monotonic()
    results = {}
    for n, (mark, kwargs) in enumerate(variants):  # each value of the information switch on the same episodes
        tasks = [(str(c), ep) for c in ckpts for ep in episodes] + [(key, ep) for key in planners if n == 0
                                                                    for ep in episodes]
        played = play_all(tasks, kwargs, workers=workers, config_file=args.config, agent_mode=args.policy,
                          package_dir=str(args.package) if args.package else None, on_done=on_done,
                          ray_address=args.ray) if tasks else {}
        results.update({(key if key == PLANNER else key + mark): records for key, records in played.items()})
    seconds = time.monotonic() - start

    planner = results.get(PLANNER)
    summaries = [summarize(key, results[key], planner) for key in keys]
    env_kwargs = variants[0][1]
    # the scores kept beside the checkpoints and plotted: the first --extra-info value's
    first = [s for s in summaries if s.policy == PLANNER or s.policy.endswith(variants[0][0])]
    out = args.out or default_out(ckpts, label, args.agent)
    settings = {"preset": label, "usr_conf": usr_conf, "env": env_kwargs, "episodes": args.episodes, "policy": args.policy,
                "seed": args.seed, "checkpoints": [str(c) for c in ckpts], "game": game.name, "platform": platform.name,
                "seconds": round(seconds, 2)}
    if args.extra_info is not None:
        settings["extra_info"] = {game.info_rule: [kwargs[game.info_rule] for _, kwargs in variants]}
    paths = write_outputs(out, settings, summaries, results)
    if len(ckpts) > 1:
        paths.append(plot_score_vs_step(out / "score_vs_step.png", first, f"{label} on {map_label(env_kwargs)}"))
    if ckpts:
        scores = {s.ckpt_id: s.score_mean for s in first if s.ckpt_id is not None}
        ckpt_files.write_scores_sidecar(ckpts[0].parent, scores,
                                        {"usr_conf": usr_conf, "env": env_kwargs, "episodes": args.episodes,
                                         "seed": args.seed, "policy": args.policy})
    print(f"{label} ({game.name}, {platform.title or platform.name}) on {map_label(env_kwargs)}: {args.episodes} "
          f"episodes per policy, seeds {args.seed}..{args.seed + args.episodes - 1}, {seconds:.1f} s")
    print(format_table(summaries))
    for p in paths:
        print(f"wrote {p}")
    if args.record is not None:
        recorded = record_evaluated(args, game, env_kwargs, ckpts, episodes, results, label)
        print(f"wrote {len(recorded)} recorded episodes to {args.record} (python tools/viewer.py --folder {args.record})")
    return 0


def info_variants(values: str | None, game, env_kwargs: dict) -> list[tuple[str, dict]]:
    """(key mark, env arguments) per value of --extra-info (the game's info_rule), each checked by
    building the env; [("", env_kwargs)] without the flag. Raises InputError naming the flag."""
    import realm

    if values is None:
        return [("", env_kwargs)]
    if not game.info_rule:
        raise InputError(f"--extra-info: {game.name}'s env hands packages no global information to withhold")
    chosen = [value.strip() for value in values.split(",") if value.strip()]
    if not chosen or len(set(chosen)) != len(chosen):
        raise InputError(f"--extra-info {values!r}: give distinct values, comma-separated (e.g. full,withheld)")
    variants = []
    for value in chosen:
        kwargs = {**env_kwargs, game.info_rule: value}
        try:
            realm.make_env(**kwargs)
        except ValueError as e:
            raise InputError(f"--extra-info: {e}") from None
        variants.append((INFO_MARK + value, kwargs))
    return variants


def map_label(env_kwargs: dict) -> str:
    """The maps a table's episodes played: a map file, a folder of maps (the preset's ids), or the
    generator's maps of a map_seed."""
    if env_kwargs.get("map_file"):
        return Path(env_kwargs["map_file"]).name
    folder = env_kwargs.get("maps_folder")  # realm.make_env's name for [env] maps_dir, in every game
    if folder:
        return f"the maps in {folder}"
    return f"generated maps of map_seed {env_kwargs.get('map_seed', 0)}"


def progress_bar(total: int, quiet: bool):
    if quiet:
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, desc="episodes", unit="ep", file=sys.stderr, dynamic_ncols=True)

    def on_done(key, index, record):
        bar.update(1)
        if bar.n >= total:
            bar.close()

    return on_done


if __name__ == "__main__":
    sys.exit(main())
