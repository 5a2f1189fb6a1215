"""Command-line pieces that tools/evaluate.py and tools/render.py share: which episodes
(a preset or a usr_conf in JSON), which map (official files, a generated map, or the one the
checkpoint's run trained on), and input errors that end the tool with exit code 2.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

import toml  # noqa: E402

from realm.presets import PRESETS, preset  # noqa: E402

EXIT_BAD_INPUT = 2
DEFAULT_PRESET = "leaderboard-2024"


class InputError(Exception):
    """A command-line input the tool cannot use; the message names it."""


def add_episode_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", default=None,
                        help=f"episode settings: {', '.join(PRESETS)} (default {DEFAULT_PRESET})")
    parser.add_argument("--usr-conf", default=None,
                        help='usr_conf as JSON text or a .json file, e.g. \'{"diy": {"treasure_num": 5}}\'; '
                             "replaces --preset")


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


def best_checkpoint_file(path: Path) -> Path:
    """The checkpoint the run's evaluations score best, of a run or checkpoint directory; InputError
    when there is none (the run did not evaluate, or its best is gone)."""
    from workflow.checkpoints import ckpt_files
    from workflow.checkpoints.evaluations import EVALUATIONS_FILE, best_checkpoint, describe

    if not Path(path).is_dir():
        raise InputError(f"--best: {path} is not a run or checkpoint directory")
    dirs = [d for d in ckpt_files.checkpoint_dirs(path) if d.name != "user"]
    for ckpt_dir in dirs:
        found = best_checkpoint(ckpt_dir)
        if found is not None:
            print(f"best by the run's evaluations: {describe(found[0].id, found[1])}")
            return found[0].path
    raise InputError(f"--best: no evaluated checkpoint in {path} (no {EVALUATIONS_FILE} with a checkpoint still on disk; "
                     "a run evaluates its checkpoints with [eval] every_train_steps or every_minutes)")


def package_checkpoint(args: argparse.Namespace) -> None:
    """With --package and no --ckpt, the package's own ckpt/ (what an exported package ships)."""
    if args.package is None:
        return
    if not (args.package / "conf" / "configure_app.toml").is_file():
        raise InputError(f"--package {args.package}: not a Kaiwu code package (no conf/configure_app.toml)")
    if args.ckpt is None:
        args.ckpt = args.package / "ckpt"
        if not args.ckpt.is_dir():
            raise InputError(f"--package {args.package}: no ckpt/ directory; give --ckpt")


def add_map_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--map-file", type=Path, help="official map json (with --positions-file)")
    parser.add_argument("--positions-file", type=Path, help="position_pool.json that goes with --map-file")
    parser.add_argument("--obstacles-file", type=Path, default=None,
                        help="a back_to_the_realm_v2 map's obstacles json (with --map-file, a map_data/<name>.json)")
    parser.add_argument("--map-seed", type=int, default=None, help="generated map of this seed")
    parser.add_argument("--config", type=Path, default=None,
                        help="a run's config (log/effective_config.toml): its [env] picks the map and its [model] "
                             "rebuilds a checkpoint that carries no model config (default: the checkpoint's run)")


def episode_settings(args: argparse.Namespace) -> tuple[str, dict]:
    """(label, usr_conf) from --usr-conf or --preset. Raises InputError."""
    if args.usr_conf is not None:
        text = args.usr_conf
        path = Path(text)
        if not text.lstrip().startswith("{") and path.suffix == ".json":
            if not path.is_file():
                raise InputError(f"--usr-conf: file not found: {path}")
            text = path.read_text()
        try:
            usr_conf = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"--usr-conf is not valid JSON ({e}): {args.usr_conf!r}") from e
        if not isinstance(usr_conf, dict):
            raise InputError(f'--usr-conf must be a JSON object like {{"diy": {{...}}}}, got {args.usr_conf!r}')
        return "custom", usr_conf
    name = args.preset or DEFAULT_PRESET
    try:
        return name, preset(name)
    except KeyError as e:
        raise InputError(f"--preset: unknown preset {name!r}; available: {', '.join(PRESETS)}") from e


def env_settings(args: argparse.Namespace, run_config: Path | None) -> dict:
    """realm.make_env arguments (always the 2024 protocol: a 2025 package's agent plays the same
    game through realm.env18): the command line's map, else [env] of the run's config, else the
    generated map of seed 0; the rules those leave open are the package's platform's. Raises
    InputError for a missing or half-given map."""
    if (args.map_file is None) != (args.positions_file is None):
        raise InputError("--map-file and --positions-file go together (official map), or give neither")
    version = package_version(args)
    if args.map_file is not None:
        for flag, path in (("--map-file", args.map_file), ("--positions-file", args.positions_file)):
            if not path.is_file():
                raise InputError(f"{flag}: file not found: {path}")
        return {"map_file": str(args.map_file), "positions_file": str(args.positions_file),
                "flash_blocked": default_flash_rule(version)}
    if args.map_seed is not None:
        return {"map_seed": int(args.map_seed), "flash_blocked": default_flash_rule(version)}
    config = args.config or run_config
    if config is not None:
        return env_from_config(config, version)
    return {"map_seed": 0, "flash_blocked": default_flash_rule(version)}


def package_version(args: argparse.Namespace) -> str:
    """The name of --package's platform version (the project's without one)."""
    from workflow import platforms
    from workflow.schema import ConfigError

    try:
        return platforms.of_package(getattr(args, "package", None)).name
    except ConfigError as e:
        raise InputError(str(e)) from e


def default_flash_rule(kaiwu_version: str) -> str:
    from workflow import platforms

    return platforms.get(kaiwu_version).flash_rule


def env_from_config(config: Path, kaiwu_version: str | None = None) -> dict:
    """make_env arguments from a config file's [env] section (map and rules), for the 2024 env a
    package of `kaiwu_version` plays through."""
    from workflow.config import EnvConfig
    from workflow.schema import ConfigError, build

    if not config.is_file():
        raise InputError(f"--config: file not found: {config}")
    try:
        section = toml.loads(config.read_text()).get("env", {})
        env = build(EnvConfig, section, "env")
        kwargs = env.make_kwargs(kaiwu_version) if kaiwu_version else env.make_kwargs()
    except (toml.TomlDecodeError, ConfigError) as e:
        raise InputError(f"{config}: {e}") from e
    kwargs.pop("protocol", None)
    kwargs.pop("map_window", None)  # the agent's window: load_agent reads it from the run's config
    return kwargs


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_tool(action, args: argparse.Namespace) -> int:
    """Run a tool's body with one torch thread, turning bad input into exit code 2."""
    import torch

    torch.set_num_threads(1)  # batch-1 inference: one thread is several times faster than many
    try:
        return action(args)
    except InputError as e:
        return fail(str(e))
