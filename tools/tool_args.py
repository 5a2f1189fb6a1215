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


EXIT_BAD_INPUT = 2
DEFAULT_PRESET = "leaderboard-2024"  # the 2024 game's (a package's or run's game: its platform version's)


class InputError(Exception):
    """A command-line input the tool cannot use; the message names it."""


def preset_help() -> str:
    """Every game's presets, for --preset's help."""
    import games

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
    add_config_args(parser, "a config file, read as ./train.sh reads it (includes, --set): its [app] picks the game "
                            "and agent, its [env] the map, its [model] rebuilds a checkpoint that carries no model "
                            "config (default: the checkpoint's run, log/effective_config.toml)")


def add_config_args(parser: argparse.ArgumentParser, help_text: str) -> None:
    """--config FILE and --set section.key=value, as ./train.sh takes them."""
    parser.add_argument("--config", type=Path, default=None, help=help_text)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one key of the config, as ./train.sh --set does (repeatable); without "
                             "--config over the checkpoint's run config, else conf/configure_app.toml")


def config_source(args: argparse.Namespace, run_config: Path | None = None):
    """--config and --set as one workflow.config.ConfigSource (None when neither is given): the
    file a tool reads exactly as ./train.sh does. --set alone applies over `run_config` (the
    checkpoint's run) when there is one. Raises InputError naming a missing file or a bad key."""
    from workflow.config import DEFAULT_CONFIG, ConfigSource
    from workflow.schema import ConfigError

    overrides = list(getattr(args, "overrides", None) or [])
    if isinstance(args.config, ConfigSource):
        return args.config
    if args.config is None and not overrides:
        return None
    path = Path(args.config) if args.config is not None else (run_config or DEFAULT_CONFIG)
    if not path.is_file():
        raise InputError(f"--config: file not found: {path}")
    source = ConfigSource.of(path, overrides)
    try:
        source.tree()
    except ConfigError as e:
        raise InputError(f"--config {source}: {e}") from None
    return source


def episode_settings(args: argparse.Namespace) -> tuple[str, dict]:
    """(label, usr_conf) from --usr-conf or --preset, the preset of whichever game has it (the
    2024 game's DEFAULT_PRESET when neither is given). Raises InputError."""
    import games

    if args.usr_conf is not None:
        return "custom", read_usr_conf_arg(args.usr_conf)
    name = args.preset or DEFAULT_PRESET
    game = games.of_preset(name)
    if game is None:
        every = [name for names in games.all_presets().values() for name in names]
        raise InputError(f"--preset: unknown preset {name!r}; available: {', '.join(every)}")
    return name, game.preset(name)


def read_usr_conf_arg(text: str) -> dict:
    """--usr-conf's JSON text or .json file as a dict. Raises InputError."""
    path = Path(text)
    if not text.lstrip().startswith("{") and path.suffix == ".json":
        if not path.is_file():
            raise InputError(f"--usr-conf: file not found: {path}")
        text = path.read_text()
    try:
        usr_conf = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"--usr-conf is not valid JSON ({e}): {text!r}") from e
    if not isinstance(usr_conf, dict):
        raise InputError(f"--usr-conf must be a JSON object of the game's usr_conf, got {text!r}")
    return usr_conf


def game_episode_settings(args: argparse.Namespace, game, platform) -> tuple[str, dict]:
    """(label, usr_conf) of the episodes `game` is evaluated on: --usr-conf, else --preset, else
    the platform version's evaluation preset. Raises InputError naming the game's presets."""
    if args.usr_conf == PACKAGE_SETTINGS:
        return package_settings_episodes(args, game, platform)
    if args.usr_conf is not None:
        return "custom", read_usr_conf_arg(args.usr_conf)
    name = args.preset or platform.eval_preset
    try:
        return name, game.preset(name)
    except ValueError as e:
        raise InputError(f"--preset: {e}") from None


PACKAGE_SETTINGS = "package"  # --usr-conf package: the package's own train_env_conf.toml


def check_episode_args(args: argparse.Namespace) -> None:
    """What the episode flags need of the others, before anything is loaded (InputError)."""
    if args.usr_conf == PACKAGE_SETTINGS and args.package is None:
        raise InputError("--usr-conf package plays a --package's own train_env_conf.toml: give --package")


def package_settings_episodes(args: argparse.Namespace, game, platform) -> tuple[str, dict]:
    """("package <file>", usr_conf) of --package's own env settings file, as its game plays it.
    Raises InputError naming the file or key."""
    from agent.checkpoint_io import CheckpointError
    from evaluation.episodes import package_algo
    from workflow.schema import ConfigError

    if args.package is None:
        raise InputError("--usr-conf package plays a --package's own train_env_conf.toml: give --package")
    try:
        root = Path(args.package).resolve()
        path = platform.env_conf_file(root, platform.package_layout(root, package_algo(root)))
    except (ConfigError, ValueError, CheckpointError) as e:
        raise InputError(f"--usr-conf package: {e}") from None
    if path is None or not path.is_file():
        raise InputError(f"--usr-conf package: a {platform.name} package keeps no env settings file"
                         + (f" ({path} is missing)" if path is not None else "") + "; give --preset or a --usr-conf")
    try:
        tree = toml.loads(path.read_text(encoding="utf-8"))
        return f"package {path.relative_to(root)}", game.usr_conf_of_settings_file(tree)
    except (OSError, UnicodeDecodeError, toml.TomlDecodeError, ValueError) as e:
        raise InputError(f"--usr-conf package: {path}: {e}") from None


def describe_episodes(args: argparse.Namespace, label: str, platform) -> str:
    """Which episodes an evaluation plays, and where they come from, for the terminal."""
    if args.usr_conf == PACKAGE_SETTINGS:
        return f"episodes: the package's own {label.split(' ', 1)[1]}"
    if args.usr_conf is not None:
        return "episodes: --usr-conf"
    if args.preset:
        return f"episodes: preset {label}"
    return (f"episodes: preset {label}, the {platform.title or platform.name} platform's evaluation default (choose with "
            "--preset, --usr-conf, or --usr-conf package for the package's own train_env_conf.toml)")


def eval_env_kwargs(args: argparse.Namespace, game, platform, run_config: Path | None) -> dict:
    """realm.make_env arguments of an evaluation of `game`: the command line's map (--map-file
    with the game's companion file, or --map-seed), else [env] of --config or of the run's config,
    else the generated map of seed 0; the game decides the protocol (games.Game.env_kwargs).
    Raises InputError naming the flag or key."""
    from workflow.config import EnvConfig
    from workflow.schema import ConfigError

    companion = game.map_companion
    for key in ("positions_file", "obstacles_file"):
        if key != companion and getattr(args, key, None) is not None:
            raise InputError(f"--{key.replace('_', '-')} is not a {game.name} map's file; its official map takes "
                             f"--map-file with --{companion.replace('_', '-')}")
    if args.map_file is not None or getattr(args, companion) is not None:
        section = {"map_file": None if args.map_file is None else str(args.map_file),
                   companion: None if getattr(args, companion) is None else str(getattr(args, companion))}
    elif args.map_seed is not None:
        section = {"map_seed": int(args.map_seed)}
    elif (args.config or run_config) is not None:
        section = config_tree_of(args.config or run_config).get("env", {})
    else:
        section = {}
    section = {key: value for key, value in section.items() if value is not None}
    try:
        return game.env_kwargs(EnvConfig.for_game(game, section), platform)
    except ConfigError as e:
        raise InputError(f"map or env settings: {e}") from e


def config_tree_of(config) -> dict:
    """The tree of a config file or ConfigSource as ./train.sh reads it (includes, --set), unvalidated.
    Raises InputError naming the file or key."""
    from workflow.config import ConfigSource
    from workflow.schema import ConfigError

    source = ConfigSource.of(config)
    if not Path(source.path).is_file():
        raise InputError(f"--config: file not found: {source.path}")
    try:
        return source.tree()
    except ConfigError as e:
        raise InputError(f"--config {source}: {e}") from None


def env_from_config(config) -> dict:
    """make_env arguments from a config file's [env] section (map and rules), for the 2024 env the
    project's agents play."""
    import games
    from workflow import platforms
    from workflow.config import EnvConfig
    from workflow.schema import ConfigError

    section = config_tree_of(config).get("env", {})
    try:
        env = EnvConfig.for_game(games.of_platform(platforms.PROJECT), section)
        kwargs = env.make_kwargs()
    except ConfigError as e:
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
