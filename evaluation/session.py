"""What an evaluation plays, resolved once from plain arguments (EvalRequest): the platform version
and the game of the evaluated packages, the episodes, the checkpoints with the newest one's agent
loaded, the env and its extra_info variants; then its episodes drawn, played, drawn as pictures
and recorded, the same way for every game.

tools/evaluate.py, tools/render.py and tools/viewer.py open a Session and print what it gives;
each refusal is an evaluation.inputs.InputError whose message names the flag or file. The lines
a person should see as it opens (which episodes, which checkpoint was the best) go to `report`.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import games
import realm
from agent.checkpoint_io import CheckpointError
from evaluation import inputs
from evaluation.episodes import Episode, EpisodeRecord, LoadedAgent, load_agent, run_config_file
from evaluation.inputs import PACKAGE_SETTINGS, InputError
from evaluation.pool import play_all
from evaluation.recorder import record_episodes
from evaluation.worker import PLANNER, EvalWorker, episodes_of
from workflow.config import ConfigSource
from workflow.platforms.base import PlatformVersion

AGENTS = ("ckpt", "planner")
#: what separates a checkpoint's key from the information it was handed (extra_info): "<ckpt> | withheld"
INFO_MARK = " | "


@dataclass(frozen=True)
class EvalRequest:
    """An evaluation's plain arguments, named as the tools' flags name them."""

    agent: str = "ckpt"  # "ckpt": the checkpoints, the reference beside them; "planner": the reference alone
    ckpt: Path | None = None  # a checkpoint file, or a checkpoint or run directory
    package: Path | None = None  # the Kaiwu code package the checkpoints belong to (default: the project's agent)
    config: Path | ConfigSource | None = None
    overrides: tuple[str, ...] = ()  # --set lines over the config (alone: over the checkpoint's run config)
    preset: str | None = None
    usr_conf: str | dict | None = None  # JSON text, a .json file, "package" (its own env settings) or a dict
    map_file: Path | None = None
    positions_file: Path | None = None
    obstacles_file: Path | None = None
    map_seed: int | None = None
    policy: str = "greedy"  # "greedy" (exploit) or "sample", where the game allows it
    every: int = 1  # of a directory: every k-th checkpoint, counted from the newest
    newest: bool = False  # of a directory: its newest checkpoint alone
    best: bool = False  # of a directory: the checkpoint the run's evaluations scored best
    extra_info: str | None = None  # comma-separated values of the game's info_rule, one row each


@dataclass
class Session:
    """An evaluation's choices, each checked: what it plays, on which episodes and env."""

    request: EvalRequest
    config: ConfigSource | None
    platform: PlatformVersion
    game: games.Game
    label: str  # the episodes' name: a preset, "custom", or the package's settings file
    usr_conf: dict
    ckpts: list[Path]  # oldest first; empty for the reference alone
    loaded: LoadedAgent | None  # the newest checkpoint's agent
    env_kwargs: dict  # realm.make_env arguments of the first variant
    variants: list[tuple[str, dict]]  # (key mark, make_env arguments) per extra_info value

    @property
    def ckpt(self) -> Path | None:
        """The newest checkpoint (what a single episode is played by)."""
        return self.ckpts[-1] if self.ckpts else None

    def policy(self):
        """The newest checkpoint's policy in the requested mode, or the game's reference."""
        if self.loaded is None:
            return self.game.reference_policy()
        return self.game.agent_policy(self.loaded, self.ckpt.name, self.request.policy)

    def episodes(self, count: int, seed: int) -> tuple[object, list[Episode]]:
        """(env, episodes): `count` episodes of the session's usr_conf, seeds seed, seed+1, ...,
        drawn once as the game draws them, so every policy plays exactly those."""
        if count < 1:
            raise InputError(f"--episodes must be >= 1, got {count}")
        with self.refusing_bad_episodes(self.env_kwargs):
            env = realm.make_env(**self.env_kwargs)
            return env, episodes_of(env, self.usr_conf, count, seed)

    def keys(self, reference: bool = True) -> list[str]:
        """The policies' keys in table order: each checkpoint per variant, then the reference."""
        return [str(c) + mark for mark, _ in self.variants for c in self.ckpts] + \
            ([PLANNER] if reference or not self.ckpts else [])

    def play(self, episodes: list[Episode], *, reference: bool = True, workers: int | None = 1, ray: str | None = None,
             on_done: Callable | None = None) -> dict[str, dict[int, EpisodeRecord]]:
        """Every checkpoint on `episodes` in each variant, and the reference once (always for the
        reference alone): {key: {episode index: record}} (evaluation.pool; `ray` a cluster's address)."""
        results = {}
        package = str(self.request.package) if self.request.package else None
        for n, (mark, kwargs) in enumerate(self.variants):  # each value of the information switch on the same episodes
            tasks = [(str(c), episode) for c in self.ckpts for episode in episodes]
            if n == 0 and PLANNER in self.keys(reference):
                tasks += [(PLANNER, episode) for episode in episodes]
            played = play_all(tasks, kwargs, workers=workers, config_file=self.config, agent_mode=self.request.policy,
                              package_dir=package, on_done=on_done, ray_address=ray) if tasks else {}
            results.update({(key if key == PLANNER else key + mark): records for key, records in played.items()})
        return results

    def render(self, seed: int, options: games.base.RenderOptions):
        """One episode (seed `seed`) played by `policy()` and drawn by the game (games.base.Rendering)."""
        policy = self.policy()
        with self.refusing_bad_episodes(self.env_kwargs):
            return self.game.render(realm.make_env(**self.env_kwargs), policy, self.usr_conf, seed,
                                    f"{policy.name}  {self.label}  seed {seed}", options)

    def record(self, folder: Path, episodes: list[Episode], results: dict | None = None) -> list[Path]:
        """`episodes` recorded into `folder` (evaluation.recorder) by the reference and by each
        checkpoint; each checkpoint must score what `results` (an evaluation's) says it did."""
        worker = EvalWorker(self.env_kwargs, self.config, self.request.policy,
                            str(self.request.package) if self.request.package else None)
        players, expected = [], {}
        for ckpt in self.ckpts:
            source = self.agent_source(ckpt)
            players.append((lambda key=str(ckpt): worker.policy(key), source))
            scores = (results or {}).get(str(ckpt) + self.variants[0][0], {})
            expected[source["name"]] = {index: record.total_score for index, record in scores.items()}
        return record_episodes(folder, self.game, worker.env, players, episodes, self.label, expected)

    def agent_source(self, ckpt: Path) -> dict:
        """A recording header's `policy` for a checkpoint of this session."""
        config = ConfigSource.of(Path(self.config.path).resolve(), self.config.overrides) if self.config else None
        return {"name": Path(ckpt).name.removesuffix(".pkl"), "kind": "agent", "checkpoint": str(Path(ckpt).resolve()),
                "package": str(Path(self.request.package).resolve()) if self.request.package else None,
                "config": str(config) if config else None, "mode": self.request.policy}

    @contextmanager
    def refusing_bad_episodes(self, env_kwargs: dict):
        """The simulator's refusal of the usr_conf or of the map, as an InputError naming it."""
        try:
            yield
        except realm.UsrConfError as e:
            r = self.request
            chosen = r.package or r.ckpt or r.preset or r.config
            hint = "" if chosen else (f" (these are {self.game.name}'s episodes, the default; --config or --preset "
                                      "picks the game)")
            raise InputError(f"invalid usr_conf ({self.label}): {e}{hint}") from e
        except (realm.MapError, ValueError, TypeError, OSError) as e:
            raise InputError(f"map or env settings {env_kwargs}: {e}") from e


def open_session(request: EvalRequest, report: Callable[[str], None] = lambda line: None) -> Session:
    """Every choice of `request` resolved and checked, in the order a person fixes them: the
    config, the platform version and game, the policy mode, the episodes, the checkpoints (the
    newest one loaded, so an unusable one is refused here), the env and its variants."""
    if request.agent not in AGENTS:
        raise InputError(f"--agent {request.agent!r}: allowed {' | '.join(AGENTS)}")
    if request.every < 1:
        raise InputError(f"--every must be >= 1, got {request.every}")
    if request.usr_conf == PACKAGE_SETTINGS and request.package is None:
        raise InputError("--usr-conf package plays a --package's own train_env_conf.toml: give --package")
    config = request_config(request)
    platform = inputs.evaluated_platform(request.agent, request.ckpt, request.package, request.preset, config)
    game = games.of_platform(platform)
    try:
        game.check_policy_mode(request.policy)
    except ValueError as e:
        raise InputError(f"--policy {request.policy}: {e}") from None
    label, usr_conf = inputs.game_episodes(game, platform, request.preset, request.usr_conf, request.package)
    report(inputs.describe_episodes(label, request.usr_conf, request.preset, platform))
    ckpts, loaded = [], None
    if request.agent == "ckpt":
        ckpts = checkpoints(request, report)
        try:
            loaded = load_agent(ckpts[-1], config, request.package)
        except CheckpointError as e:
            raise InputError(str(e)) from e
    env_kwargs = inputs.env_kwargs(game, platform, map_file=request.map_file, positions_file=request.positions_file,
                                   obstacles_file=request.obstacles_file, map_seed=request.map_seed, config=config,
                                   run_config=run_config_file(ckpts[0]) if ckpts else None)
    if request.usr_conf is None:  # a preset: some need map files the env settings must name
        try:
            game.check_preset_env(label, env_kwargs)
        except ValueError as e:
            raise InputError(f"--preset: {e}") from None
    variants = info_variants(request.extra_info, game, env_kwargs)
    return Session(request, config, platform, game, label, usr_conf, ckpts, loaded, variants[0][1], variants)


def request_config(request: EvalRequest) -> ConfigSource | None:
    """The request's config and --set lines, read as ./train.sh reads them; --set alone applies
    over the checkpoint's run config."""
    run_config = None
    if request.config is None and request.overrides and request.agent == "ckpt" and request.ckpt is not None:
        run_config = run_config_file(inputs.find_checkpoints(request.ckpt)[0])
    return inputs.config_source(request.config, request.overrides, run_config)


def checkpoints(request: EvalRequest, report: Callable[[str], None]) -> list[Path]:
    """The checkpoint files a request plays, oldest first: of its package's ckpt/ when it names
    none, the run's best with `best`, every `every`-th of a directory or its newest alone."""
    ckpt = inputs.package_checkpoints(request.package, request.ckpt)
    if ckpt is None:
        raise InputError("--ckpt is required (or --package, or --agent planner)")
    if request.best:
        ckpt, described = inputs.best_checkpoint(ckpt)
        report(f"best by the run's evaluations: {described}")
    found = inputs.find_checkpoints(ckpt, request.every)
    return found[-1:] if request.newest else found


def info_variants(values: str | None, game, env_kwargs: dict) -> list[tuple[str, dict]]:
    """(key mark, env arguments) per value of extra_info (the game's info_rule), each checked by
    building the env; [("", env_kwargs)] without it."""
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
