"""Evaluation, Kaiwu's shape: greedy actions (`exploit`), one episode per usr_conf, a record each.

A policy is anything with `play(env, usr_conf, seed) -> EpisodeRecord`; each game's own are in
`evaluation/<game>.py` (the 2024 game's: a trained Agent through the episode runner, and the
route planner). Its agent and planner meet the same episodes because
`resolve_episodes` fixes every random chest draw up front: an episode is a usr_conf with
explicit `treasure_id` plus the reset seed, so agent and planner scores compare like for like.

`load_agent` rebuilds the agent of a checkpoint: the project's own (its settings from the run's
effective config) or any Kaiwu package's (`package_dir`), with the package's own `load_model`.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from typing import Any, Callable


from agent.checkpoint_io import CheckpointError, read_torch, train_state_file
from games.back_to_the_realm import resolve_episodes, resolved_usr_conf  # noqa: F401 (evaluation's names)
from games.base import Episode  # noqa: F401
from workflow.checkpoints.ckpt_files import parse_ckpt_id, run_dir_of
from workflow import platforms
from workflow.host.kaiwu_package import KaiwuPackage, config_file
from workflow.platforms.project import PROJECT_DEFAULT, current_name, described, find_project_algorithm


@dataclass
class LoadedAgent:
    """A package's agent with its checkpoint loaded, and the protocol functions it acts through."""

    agent: Any
    observation_process: Callable
    action_process: Callable
    platform: platforms.PlatformVersion = platforms.PROJECT  # its platform version: it meets episodes in its protocol
    map_window: str = "hero"  # a 2025 agent's map_info window (realm.back_to_the_realm.env18)


@dataclass
class EpisodeRecord:
    total_score: float  # final score (0 when the step limit ran out)
    won: bool  # reached the end within max_step
    chests: int
    steps: int
    buff_count: int
    flash_count: int
    usr_conf: dict  # resolved: explicit treasure_id, treasure_random 0
    seed: int
    actions: list[int] = field(default_factory=list, repr=False)  # to replay the episode

    @property
    def chests_available(self) -> int:
        """The chests the episode had (its usr_conf lists them once resolved)."""
        return len(self.usr_conf["diy"]["treasure_id"])

    def to_row(self) -> dict:
        """Flat values for CSV/JSON (usr_conf as JSON text, actions left out)."""
        row = dataclasses.asdict(self)
        row.pop("actions")
        row["usr_conf"] = json.dumps(self.usr_conf, sort_keys=True)
        return row


def seed_agent_draws(agent, seed: int) -> None:
    """Seed every draw an agent may make in an episode with the episode seed (its own
    `sample_generator` where it has one: the project's agents; numpy's and torch's global ones),
    so an episode scores the same in any process and order."""
    import numpy as np
    import torch

    np.random.seed(int(seed) % 2**32)
    torch.manual_seed(int(seed))
    generator = getattr(agent, "sample_generator", None)
    if generator is not None:
        generator.manual_seed(int(seed))


def record_from(stats, won: bool, usr_conf: dict, seed: int, actions: list[int]) -> EpisodeRecord:
    """The score fields of an EpisodeStats or of the planner's result (total_score, chests,
    steps, buff_count, flash_count), and whether the episode was won, as a record."""
    return EpisodeRecord(
        total_score=float(stats.total_score),
        won=bool(won),
        chests=int(stats.chests),
        steps=int(stats.steps),
        buff_count=int(stats.buff_count),
        flash_count=int(stats.flash_count),
        usr_conf=usr_conf,
        seed=int(seed),
        actions=[int(a) for a in actions],
    )


# --- checkpoints -> policies ---------------------------------------------------------------------

RUN_CONFIG_NAMES = ("log/effective_config.toml", "config.toml")  # where a run keeps the config it used


def run_config_file(ckpt_file: str | Path) -> Path | None:
    """The effective config of the run a checkpoint belongs to, if it is there."""
    run_dir = run_dir_of(Path(ckpt_file).parent)
    for name in RUN_CONFIG_NAMES if run_dir is not None else ():
        if (run_dir / name).is_file():
            return run_dir / name
    return None


def _read_toml(source) -> dict:
    """A config's tree as ./train.sh reads it (includes merged, --set applied): `source` is a
    file or a workflow.config.ConfigSource."""
    from workflow.config import ConfigSource
    from workflow.schema import ConfigError

    try:
        return ConfigSource.of(source).tree()
    except ConfigError as e:
        raise CheckpointError(f"cannot read config {source}: {e}") from e


def _source(config, ckpt_file: Path):
    """`config` (a file or ConfigSource), else the effective config of the checkpoint's run."""
    return config if config else run_config_file(ckpt_file)


def project_algo(ckpt_file: Path, config) -> tuple[str, str]:
    """Which of the project's agents made a checkpoint: (app.app, app.algo) of `config`, else of
    the run's effective config, by this release's names (a run of an earlier release that named
    the v2 agent "ppo_v2" is back_to_the_realm_v2's "ppo"); the default agent when no config says."""
    source = _source(config, ckpt_file)
    app_section = (_read_toml(source).get("app") or {}) if source is not None else {}
    algo = app_section.get("algo")
    if algo is None:
        return PROJECT_DEFAULT.game, PROJECT_DEFAULT.algo
    app, algo = current_name(app_section.get("app", PROJECT_DEFAULT.game), algo)
    if find_project_algorithm(app, algo) is None:
        raise CheckpointError(f"{source}: app = {app!r}, algo = {algo!r} is not one of the project's agents "
                              f"({described()}); a Kaiwu package's checkpoint needs --package DIR")
    return app, algo


def project_settings(ckpt_file: Path, config) -> dict:
    """The project agent's sections for a checkpoint: from `config`, else the run's effective
    config; the network's shape from the checkpoint's training state when it has one."""
    source = _source(config, ckpt_file)
    data = _read_toml(source) if source is not None else {}
    sections = find_project_algorithm(*project_algo(ckpt_file, config)).sections
    settings = {name: dict(data[name]) for name in sections if isinstance(data.get(name), dict)}
    train_file = train_state_file(ckpt_file.parent, parse_ckpt_id(ckpt_file))
    if train_file.is_file():
        state = read_torch(train_file, "cpu")
        if isinstance(state, dict) and isinstance(state.get("model_config"), dict):
            settings["model"] = dict(state["model_config"])
    return settings


def package_algo(package_dir: Path) -> str:
    """The algorithm a package's conf/configure_app.toml selects."""
    file = config_file(package_dir)
    if not file.is_file():
        raise CheckpointError(f"--package {package_dir}: no conf/configure_app.toml")
    algo = _read_toml(file).get("app", {}).get("algo") or platforms.detect(package_dir).app_defaults(package_dir).get("algo")
    if not isinstance(algo, str) or not algo:
        raise CheckpointError(f"{file}: [app] algo is not set")
    return algo


def package_eval_config(package_dir: Path, algo: str, platform) -> dict:
    """What a package's CONFIG holds in an evaluation: its own conf/configure_app.toml's [app]
    over the platform's defaults (its own keys too, as in training), the game it plays, the
    evaluated algorithm, svr_name "eval"."""
    from workflow.config import PACKAGE_DEFAULTS, config_tree
    from workflow.schema import ConfigError

    file = config_file(package_dir)
    try:
        app = dict(config_tree(file, base=PACKAGE_DEFAULTS).get("app") or {}) if file.is_file() else {}
    except ConfigError as e:
        raise CheckpointError(f"--package {package_dir}: {e}") from e
    app.update(app=platform.game, algo=algo, svr_name="eval")
    return app


def load_agent(ckpt_file: str | Path, config_file_path=None,
               package_dir: str | Path | None = None, agent_type: str = "eval") -> LoadedAgent:
    """The agent of `ckpt_file` with that checkpoint loaded by its package's own load_model:
    the project's agent (settings from `config_file_path` or the run's effective config), or
    the Kaiwu package at `package_dir` (its algorithm: `app.algo` of `config_file_path` when
    given, else of the run the checkpoint belongs to, else the package's own conf/configure_app.toml).
    `agent_type` "learner" also checks the checkpoint's training state, which playing does not
    read (agent.checkpointed.ACTING_TYPES). Raises CheckpointError naming what is wrong."""
    ckpt_file = Path(ckpt_file)
    ckpt_id = parse_ckpt_id(ckpt_file)
    if ckpt_id is None or not ckpt_file.is_file():
        raise CheckpointError(f"not a checkpoint file (model.ckpt-N...): {ckpt_file}")
    try:
        if package_dir is not None:  # the run's algorithm (its config given, or the run's own), else the package's
            run_config = _source(config_file_path, ckpt_file)
            run_algo = (_read_toml(run_config).get("app") or {}).get("algo") if run_config else None
            algo = run_algo if isinstance(run_algo, str) and run_algo else package_algo(Path(package_dir))
            platform = platforms.detect(package_dir)
            package = KaiwuPackage.load(package_dir, algo, package_eval_config(Path(package_dir), algo, platform),
                                        platform=platform)
        else:
            run_config = None
            app, algo = project_algo(ckpt_file, config_file_path)
            settings_class = find_project_algorithm(app, algo).settings_class
            try:  # the run's sections, checked once here: the agent takes them as they are
                settings = settings_class.from_dict(project_settings(ckpt_file, config_file_path))
            except ValueError as e:
                raise CheckpointError(f"{_source(config_file_path, ckpt_file) or ckpt_file}: {e}") from e
            values = {"app": app, "algo": algo, "svr_name": "eval", "package_settings": settings}
            package = KaiwuPackage.project(app, algo, values)
        agent = package.make_agent(agent_type, logging.getLogger("eval"), None)  # platform agents log as they load
        agent.load_model(path=str(ckpt_file.parent), id=ckpt_id)
    except CheckpointError:
        raise
    except Exception as e:  # the package's own load_model, or its import, refused it
        where = f" ({package.where(e)})" if "package" in locals() and package.where(e) else ""
        raise CheckpointError(f"cannot load {ckpt_file}{where}: {type(e).__name__}: {e}") from e
    window = ((_read_toml(run_config).get("env") or {}).get("map_window", "hero")) if run_config else "hero"
    observation_process, action_process = package.platform.eval_protocol(agent, package)
    return LoadedAgent(agent, observation_process, action_process, package.platform, window)
