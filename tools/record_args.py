"""`--record DIR` of tools/evaluate.py and tools/render.py: each episode they play is written again
as a recorded episode (evaluation.recording: JSON lines, the reference's recording of the same
episode beside it) for tools/viewer.py or a notebook. The episodes are replayed in the tool's own
process after it has played them; an evaluation's recordings must score what it scored."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_record_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--record", type=Path, default=None, metavar="DIR",
                        help="also write every episode played as a recording (JSON lines; the reference's on the same "
                             "episode beside it) into DIR, for tools/viewer.py or a notebook (docs/10-viewer.md)")


def agent_source(args: argparse.Namespace, ckpt: Path) -> dict:
    """The header's `policy` of a checkpoint the tool plays."""
    return {"name": Path(ckpt).name.removesuffix(".pkl"), "kind": "agent", "checkpoint": str(Path(ckpt).resolve()),
            "package": str(Path(args.package).resolve()) if args.package else None,
            "config": str(Path(args.config).resolve()) if args.config else None, "mode": args.policy}


def record_rendered(args: argparse.Namespace, game, env_kwargs: dict, policy, usr_conf: dict, label: str) -> list[Path]:
    """tools/render.py's episode (seed --seed), by its policy and the reference."""
    import realm
    from evaluation.recorder import record_episodes

    env = realm.make_env(**env_kwargs)
    episode = game.episodes(env, usr_conf, 1, args.seed)[0]
    players = [] if args.agent == "planner" else [(lambda: policy, agent_source(args, args.ckpt))]
    return record_episodes(args.record, game, env, players, [episode], label)


def record_evaluated(args: argparse.Namespace, game, env_kwargs: dict, ckpts: list[Path], episodes: list, results: dict,
                     label: str) -> list[Path]:
    """tools/evaluate.py's episodes by each checkpoint (checked against the scores it evaluated)
    and the reference."""
    from evaluation.recorder import record_episodes
    from evaluation.worker import EvalWorker

    worker = EvalWorker(env_kwargs, str(args.config) if args.config else None, args.policy,
                        str(args.package) if args.package else None)
    players, expected = [], {}
    for ckpt in ckpts:
        source = agent_source(args, ckpt)
        players.append((lambda key=str(ckpt): worker.policy(key), source))
        expected[source["name"]] = {index: record.total_score for index, record in results.get(str(ckpt), {}).items()}
    return record_episodes(args.record, game, worker.env, players, episodes, label, expected)
