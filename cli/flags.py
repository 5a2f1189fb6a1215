"""The flags the evaluation tools share (tools/evaluate.py, render.py, bench_learn.py,
export_kaiwu.py) and the evaluation.session.EvalRequest they make: which checkpoint or package,
which episodes (a preset or a usr_conf), which map and config, which policy mode, and --record."""
from __future__ import annotations

import argparse
from pathlib import Path

import games
from evaluation.inputs import DEFAULT_PRESET
from evaluation.session import EvalRequest


def preset_help() -> str:
    """Every game's presets, for --preset's help."""
    return "; ".join(f"{game}: {', '.join(names)}" for game, names in games.all_presets().items())


def add_episode_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", default=None,
                        help=f"episode settings of the evaluated game ({preset_help()}); default: the evaluated "
                             f"platform version's ({DEFAULT_PRESET} for the 2024 game)")
    parser.add_argument("--usr-conf", default=None,
                        help='usr_conf as JSON text or a .json file, e.g. \'{"diy": {"treasure_num": 5}}\', or '
                             "'package': the --package's own env settings file (its train_env_conf.toml); replaces "
                             "--preset")


def add_policy_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default="greedy", choices=["greedy", "sample"],
                        help="greedy: Kaiwu's exploit (argmax); sample: draw from the policy as in training, "
                             "seeded per episode (default greedy)")


def add_package_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--package", type=Path, default=None,
                        help="a Kaiwu code package directory whose agent the checkpoint belongs to (its own "
                             "load_model, observation_process and exploit act); without --ckpt: the newest "
                             "checkpoint in its ckpt/ (default: the project's agent)")


def add_best_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--best", action="store_true",
                        help="with --ckpt RUN or a checkpoint directory: the checkpoint the run's evaluator scored best "
                             "([eval], <ckpt dir>/evaluations.json)")


def add_map_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--map-file", type=Path, help="official map json (with --positions-file)")
    parser.add_argument("--positions-file", type=Path, help="position_pool.json that goes with --map-file")
    parser.add_argument("--obstacles-file", type=Path, default=None,
                        help="a back_to_the_realm_v2 map's obstacles json (with --map-file, a map_data/<name>.json)")
    parser.add_argument("--map-seed", type=int, default=None, help="generated map of this seed")
    add_config_args(parser, "a config file, read as ./train.sh reads it (includes, --set): its [app] picks the game "
                            "and agent, its [env] the map, its [model] rebuilds a checkpoint that carries no model "
                            "config (default: the checkpoint's run, log/effective_config.toml)")


def add_config_args(parser: argparse.ArgumentParser, help_text: str) -> None:
    """--config FILE and --set section.key=value, as ./train.sh takes them."""
    parser.add_argument("--config", type=Path, default=None, help=help_text)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one key of the config, as ./train.sh --set does (repeatable); without "
                             "--config over the checkpoint's run config, else conf/configure_app.toml")


def add_record_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--record", type=Path, default=None, metavar="DIR",
                        help="also write every episode played as a recording (JSON lines; the reference's on the same "
                             "episode beside it) into DIR, for tools/viewer.py or a notebook (docs/10-viewer.md)")


def eval_request(args: argparse.Namespace, **fixed) -> EvalRequest:
    """The EvalRequest of a tool's parsed flags (those it has), with `fixed` fields of its own."""
    names = ("agent", "ckpt", "package", "config", "preset", "usr_conf", "map_file", "positions_file", "obstacles_file",
             "map_seed", "policy", "every", "best", "extra_info")
    given = {name: getattr(args, name) for name in names if hasattr(args, name)}
    return EvalRequest(**given, overrides=tuple(getattr(args, "overrides", ())), **fixed)
