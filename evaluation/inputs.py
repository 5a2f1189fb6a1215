"""An evaluation's inputs, each read and checked on its own: the config (a file and --set lines,
as ./train.sh reads them), the checkpoints (a file, every k-th of a checkpoint or run directory,
the one the run's evaluations scored best, a package's own ckpt/), the platform version the
evaluated packages play in, the episodes (a preset, a usr_conf, a package's own env settings
file) and the env (the map given, else [env] of the config or of the checkpoint's run).

evaluation.session puts them together for the evaluation tools; the export and the bench tools
read some of them alone. A bad input is an InputError, the one refusal of these services, whose
message names the flag (--ckpt, --preset, ...) or the file as the tools print it; the tools end
with exit code 2 on it.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import toml

import games
from agent.checkpoint_io import CheckpointError
from evaluation.episodes import package_algo, project_algo
from realm.back_to_the_realm.usr_conf import UsrConfError
from workflow import platforms
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.evaluations import EVALUATIONS_FILE, best_checkpoint as best_of, describe
from workflow.config import DEFAULT_CONFIG, ConfigSource, EnvConfig, EvalConfig, load_config
from workflow.platforms.project import find_project_algorithm, run_platform
from workflow.schema import ConfigError
from workflow.supervision.ray_cluster import check_address

#: The episodes when no game is chosen: the 2024 game's (a package's or run's game: its platform version's).
DEFAULT_PRESET = "leaderboard-2024"
#: usr_conf = "package": the package's own env settings file (its train_env_conf.toml).
PACKAGE_SETTINGS = "package"


class InputError(Exception):
    """An input the evaluation (or the export) cannot use; the message names the flag or file."""


# --- the config ---------------------------------------------------------------------------------

def config_source(config, overrides=(), run_config: Path | None = None) -> ConfigSource | None:
    """--config and --set as one workflow.config.ConfigSource (None when neither is given): the
    file read exactly as ./train.sh reads it. --set alone applies over `run_config` (the
    checkpoint's run) when there is one, else over conf/configure_app.toml."""
    overrides = list(overrides or ())
    if isinstance(config, ConfigSource):
        return ConfigSource.of(config, overrides)
    if config is None and not overrides:
        return None
    path = Path(config) if config is not None else (run_config or DEFAULT_CONFIG)
    if not path.is_file():
        raise InputError(f"--config: file not found: {path}")
    source = ConfigSource.of(path, overrides)
    try:
        source.tree()
    except ConfigError as e:
        raise InputError(f"--config {source}: {e}") from None
    return source


def config_tree_of(config) -> dict:
    """The tree of a config file or ConfigSource as ./train.sh reads it (includes, --set), unvalidated."""
    source = ConfigSource.of(config)
    if not Path(source.path).is_file():
        raise InputError(f"--config: file not found: {source.path}")
    try:
        return source.tree()
    except ConfigError as e:
        raise InputError(f"--config {source}: {e}") from None


# --- the checkpoints ----------------------------------------------------------------------------

def find_checkpoints(path: Path, every: int = 1) -> list[Path]:
    """The checkpoint files to evaluate, oldest first: one file, or every `every`-th of a checkpoint
    or run directory counted from the newest (which is always among them)."""
    path = Path(path)
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


def best_checkpoint(path: Path) -> tuple[Path, str]:
    """(file, description) of the checkpoint the run's evaluations score best, of a run or
    checkpoint directory; refused when there is none (the run did not evaluate, or its best is gone)."""
    if not Path(path).is_dir():
        raise InputError(f"--best: {path} is not a run or checkpoint directory")
    for ckpt_dir in [d for d in ckpt_files.checkpoint_dirs(path) if d.name != "user"]:
        found = best_of(ckpt_dir)
        if found is not None:
            return found[0].path, describe(found[0].id, found[1])
    raise InputError(f"--best: no evaluated checkpoint in {path} (no {EVALUATIONS_FILE} with a checkpoint still on disk; "
                     "a run evaluates its checkpoints with [eval] every_train_steps or every_minutes)")


def package_checkpoints(package: Path | None, ckpt: Path | None) -> Path | None:
    """The checkpoints a --package plays: `ckpt` when given, else the package's own ckpt/ (what
    an exported package ships); `ckpt` itself without a package."""
    if package is None:
        return ckpt
    if not (Path(package) / "conf" / "configure_app.toml").is_file():
        raise InputError(f"--package {package}: not a Kaiwu code package (no conf/configure_app.toml)")
    if ckpt is not None:
        return ckpt
    if not (Path(package) / "ckpt").is_dir():
        raise InputError(f"--package {package}: no ckpt/ directory; give --ckpt")
    return Path(package) / "ckpt"


# --- the platform version -----------------------------------------------------------------------

def evaluated_platform(agent: str, ckpt: Path | None, package: Path | None, preset: str | None,
                       config: ConfigSource | None):
    """The platform version the evaluated policy plays in (its game is the episodes'): the
    package's; else, for a checkpoint, that of the project agent of the checkpoint's run (app.app,
    app.algo); else, for the reference alone, the version whose evaluation preset `preset` is (or
    one of its game's), else that of the config's agent, else the project's."""
    if package is not None:
        try:
            return platforms.of_package(package)
        except ConfigError as e:
            raise InputError(str(e)) from e
    if agent == "ckpt" and ckpt is not None:
        try:
            return find_project_algorithm(*project_algo(find_checkpoints(ckpt)[0], config)).layout.platform
        except CheckpointError as e:
            raise InputError(str(e)) from e
    game = games.of_preset(preset) if preset else None
    if game is not None:
        family = [v for v in platforms.VERSIONS.values() if v.game == game.name]
        return next((v for v in family if v.eval_preset == preset), family[0])
    if config is not None:
        try:
            source = ConfigSource.of(config)
            return find_project_algorithm(*project_algo(Path(source.path), source)).layout.platform
        except CheckpointError as e:
            raise InputError(str(e)) from e
    return platforms.PROJECT


# --- the episodes -------------------------------------------------------------------------------

def read_usr_conf(text: str) -> dict:
    """--usr-conf's JSON text or .json file as a dict."""
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


def game_episodes(game, platform, preset: str | None, usr_conf: str | dict | None,
                  package: Path | None) -> tuple[str, dict]:
    """(label, usr_conf) of the episodes `game` is evaluated on: `usr_conf` (a dict, JSON text, a
    .json file, or "package": the package's own env settings file), else `preset`, else the
    platform version's evaluation preset."""
    if usr_conf == PACKAGE_SETTINGS:
        return package_settings_episodes(package, game, platform)
    if isinstance(usr_conf, dict):
        return "custom", copy.deepcopy(usr_conf)
    if usr_conf is not None:
        return "custom", read_usr_conf(usr_conf)
    name = preset or platform.eval_preset
    try:
        return name, game.preset(name)
    except ValueError as e:
        raise InputError(f"--preset: {e}") from None


def package_settings_episodes(package: Path | None, game, platform) -> tuple[str, dict]:
    """("package <file>", usr_conf) of the package's own env settings file, as its game plays it."""
    if package is None:
        raise InputError("--usr-conf package plays a --package's own train_env_conf.toml: give --package")
    try:
        root = Path(package).resolve()
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


def describe_episodes(label: str, usr_conf: str | dict | None, preset: str | None, platform) -> str:
    """Which episodes an evaluation plays, and where they come from, in one line."""
    if usr_conf == PACKAGE_SETTINGS:
        return f"episodes: the package's own {label.split(' ', 1)[1]}"
    if usr_conf is not None:
        return "episodes: --usr-conf"
    if preset:
        return f"episodes: preset {label}"
    return (f"episodes: preset {label}, the {platform.title or platform.name} platform's evaluation default (choose with "
            "--preset, --usr-conf, or --usr-conf package for the package's own train_env_conf.toml)")


def episode_settings(preset: str | None, usr_conf: str | None) -> tuple[str, dict]:
    """(label, usr_conf) of `usr_conf`, else of `preset` of whichever game has it (DEFAULT_PRESET
    when neither is given), checked as that game's (a usr_conf as the 2024 game's), before any
    run is trained for them."""
    from realm.back_to_the_realm.usr_conf import UsrConfError

    if usr_conf is not None:
        label, conf = "custom", read_usr_conf(usr_conf)
    else:
        label = preset or DEFAULT_PRESET
        if games.of_preset(label) is None:
            every = [name for names in games.all_presets().values() for name in names]
            raise InputError(f"--preset: unknown preset {label!r}; available: {', '.join(every)}")
        conf = games.of_preset(label).preset(label)
    try:
        (games.of_preset(label) or games.BACK_TO_THE_REALM).check_usr_conf(conf)
    except UsrConfError as e:
        raise InputError(f"invalid usr_conf ({label}): {e}") from e
    return label, conf


# --- where the episodes are played ---------------------------------------------------------------

def check_ray_address(address: str | None) -> None:
    """A Ray cluster's address the episodes can be spread over (local, auto or HOST:PORT), when one is given."""
    if address is not None:
        try:
            check_address(address)
        except ValueError as e:
            raise InputError(str(e)) from None


# --- the env ------------------------------------------------------------------------------------

def env_kwargs(game, platform, *, map_file=None, positions_file=None, obstacles_file=None, map_seed: int | None = None,
               config=None, run_config: Path | None = None) -> dict:
    """realm.make_env arguments of an evaluation of `game`: the map given (`map_file` with the
    game's companion file, or `map_seed`), else [env] of `config` or of the run's config, else the
    generated map of seed 0; the game decides the protocol (games.Game.env_kwargs)."""
    files = {"positions_file": positions_file, "obstacles_file": obstacles_file}
    companion = game.map_companion
    for key, value in files.items():
        if key != companion and value is not None:
            raise InputError(f"--{key.replace('_', '-')} is not a {game.name} map's file; its official map takes "
                             f"--map-file with --{companion.replace('_', '-')}")
    if map_file is not None or files.get(companion) is not None:
        section = {"map_file": None if map_file is None else str(map_file),
                   companion: None if files.get(companion) is None else str(files[companion])}
    elif map_seed is not None:
        section = {"map_seed": int(map_seed)}
    elif (config or run_config) is not None:
        section = config_tree_of(config or run_config).get("env", {})
    else:
        section = {}
    section = {key: value for key, value in section.items() if value is not None}
    try:
        return game.env_kwargs(EnvConfig.for_game(game, section), platform)
    except ConfigError as e:
        raise InputError(f"map or env settings: {e}") from e


def env_from_config(config) -> dict:
    """make_env arguments from a config file's [env] section (map and rules), for the 2024 env the
    project's agents play."""
    section = config_tree_of(config).get("env", {})
    try:
        kwargs = EnvConfig.for_game(games.of_platform(platforms.PROJECT), section).make_kwargs()
    except ConfigError as e:
        raise InputError(f"{config}: {e}") from e
    kwargs.pop("protocol", None)
    kwargs.pop("map_window", None)  # the agent's window: load_agent reads it from the run's config
    return kwargs


def run_env_kwargs(config: Path) -> dict:
    """The evaluation env of a run (realm.make_env arguments): its map and rules in the game its
    package plays, as its own evaluator ([eval]) builds it."""
    try:
        cfg = load_config(config)
        return EvalConfig.env_kwargs(cfg.env, run_platform(cfg.app))
    except ConfigError as e:
        raise InputError(f"{config}: {e}") from e


def map_label(env_kwargs: dict) -> str:
    """The maps an evaluation's episodes played: a map file, a folder of maps (the preset's ids),
    or the generator's maps of a map_seed."""
    if env_kwargs.get("map_file"):
        return Path(env_kwargs["map_file"]).name
    folder = env_kwargs.get("maps_folder")  # realm.make_env's name for [env] maps_dir, in every game
    if folder:
        return f"the maps in {folder}"
    return f"generated maps of map_seed {env_kwargs.get('map_seed', 0)}"

