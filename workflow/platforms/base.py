"""What a platform version answers: the questions on which Kaiwu's platform versions differ.

The rest of the toolkit asks a `PlatformVersion` (workflow.platforms.get / detect) and never
compares version names. A new version is one module beside v2024.py and v18.py, registered in
workflow/platforms/__init__.py, and its tests.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from workflow.schema import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[2]
#: What a package names itself in kaiwu.json when it does not say.
DEFAULT_PROJECT_CODE = "back_to_the_realm"


@dataclass(frozen=True)
class Layout:
    """Where a package's four modules are (dotted names, `{algo}` filled in)."""

    config: str = "{algo}.config"
    definition: str = "{algo}.feature.definition"
    agent: str = "{algo}.algorithm.agent"
    workflow: str = "{algo}.train_workflow"
    #: what of the root is package code (where an error is reported as the package's); empty: all of it
    code: tuple[str, ...] = ()
    #: the platform version the package speaks (None: the 2024 platform's, workflow.platforms.PROJECT)
    platform: "PlatformVersion | None" = None
    agent_class: str = "Agent"
    workflow_function: str = "workflow"

    @property
    def kaiwu_version(self) -> str:
        """The name of the platform version the package speaks (workflow.platforms.NAMES)."""
        return self.platform.name if self.platform is not None else "2024"

    def module(self, part: str, algo: str) -> str:
        return getattr(self, part).format(algo=algo)

    def file(self, part: str, algo: str) -> str:
        return self.module(part, algo).replace(".", "/") + ".py"

    def folder(self, algo: str) -> str:
        """The algorithm's top folder in the package ("agent_ppo"): what the platform's
        configure_app.toml calls `{agent_name}`."""
        return self.module("agent", algo).split(".")[0]


@dataclass(frozen=True)
class ExportLayout:
    """Where the export (export.package, tools/export_kaiwu.py) puts a project agent in this
    version's package; paths hold `{algo}` until the algorithm's name is known."""

    folder: str  # the algorithm's folder
    modules: dict  # part (config, definition, agent, workflow) -> file
    folders: dict  # package folder -> where its other files go
    model_file: str  # agent/model.py's place (the platform's model/model.py)
    dirs: tuple  # folders that get an __init__.py
    kaiwu_json_version: str | None = None  # kaiwu.json's "version"; None: the toolkit's own
    app_keys: dict = field(default_factory=dict)  # [app] keys the platform's configure_app.toml adds
    #: episodes/protocol.py's line that names the envs' protocol, as exported (None: as it is)
    protocol_line: str | None = None
    #: extra package files: folder key of `folders` -> (file name, text)
    extra_sources: dict = field(default_factory=dict)
    #: writes train_env_conf.toml and the algorithm's registration (conf/algo_conf_*.toml)
    registers_algorithm: bool = False

    def place(self, path: str, algo: str) -> str:
        return path.format(algo=algo)


class PlatformVersion:
    """One Kaiwu platform version. Subclasses set the class attributes and override what differs."""

    name: str = ""  # the value of app.kaiwu_version and --kaiwu-version that selects it
    title: str = ""  # for messages and docs: "2024 (8.x-10.x)"
    #: the wire protocol of the env its packages meet: realm.make_env's `protocol`, and the name of
    #: its episodes.protocol.EnvProtocol (which decodes the env's resets and steps)
    env_protocol: str = ""
    #: whether the project's own agents train in this version's protocol (else: export first)
    hosts_project_agents: bool = False
    #: the flash rule of `[env] flash_blocked = "auto"`: what the platform does with a blocked flash
    flash_rule: str = "fail"
    #: the platform's own root modules its packages import (put on sys.path after the package)
    platform_root: Path | None = None
    #: the package's workflow opens files relative to the package's directory
    runs_in_package_dir: bool = False
    #: the game its packages play (project_code): "back_to_the_realm" | "back_to_the_realm_v2"
    game: str = DEFAULT_PROJECT_CODE
    #: the preset a run's evaluator ([eval]) plays when it names none (realm.back_to_the_realm.presets for this game)
    eval_preset: str = "leaderboard-2024"
    export: ExportLayout

    # --- recognising a package ------------------------------------------------------------------

    def claims_manifest(self, major: int, project_code: str) -> bool:
        """Whether a kaiwu.json with this major version and project_code is a package of this version."""
        raise NotImplementedError

    def claims_layout(self, root: Path) -> bool:
        """Whether a package without kaiwu.json is laid out as this version's."""
        raise NotImplementedError

    def package_layout(self, root: Path, algo: str) -> Layout:
        """The layout of `algo` in the package at `root`, or ConfigError naming what is missing."""
        raise NotImplementedError

    def app_defaults(self, root: Path) -> dict:
        """[app] values the package states outside configure_app.toml (where this version's
        platform reads them), used when its configure_app.toml and --set leave them out."""
        return {}

    def env_conf_file(self, root: Path, layout: Layout) -> Path | None:
        """The env settings file the package's workflow reads (None: it has none)."""
        return None

    def check_env_conf_file(self, path: Path, env_config=None) -> None:
        """ConfigError naming `path` and the key when the package's env settings are invalid
        (`env_config`: the run's [env], for checks against its map)."""

    def sample_rows(self, protocols: dict, config_class) -> tuple[dict, Any]:
        """(the package's protocol functions, the width of a replay row): what its definition.py
        defines and its Config.SAMPLE_DIM; a version whose framework packs the samples itself
        adds the converters. ValueError saying what the package must declare."""
        return protocols, getattr(config_class, "SAMPLE_DIM", None)

    def preprocessor_module(self, layout: Layout) -> str | None:
        """The module of the package's per-episode Preprocessor (None: it has none)."""
        return None

    # --- what the env and the platform's servers speak -------------------------------------------

    def env_kwargs(self, env_config) -> dict:
        """realm.make_env's protocol arguments for an [env] section (workflow.config.EnvConfig):
        the protocol, and what of the game's rules only this version's protocol takes."""
        return {}

    def predict_answer(self, result: Any, model_version: int) -> Any:
        """What the platform's aisrv returns from the package's predict / exploit."""
        return result

    def learn_rows(self, rows, device):
        """What the platform's learner hands NumpyData2SampleData: the replay's float32 rows."""
        return rows

    # --- evaluation -------------------------------------------------------------------------------

    def eval_protocol(self, agent, package) -> tuple[Callable, Callable]:
        """(observation_process, action_process) an evaluation steps the package's agent with."""
        return package.protocol("observation_process"), package.protocol("action_process")

    def eval_episode(self, env, usr_conf: dict, map_window: str) -> tuple[Any, dict]:
        """The env and usr_conf an agent of this version plays a (2024-shaped) evaluation episode with."""
        return env, usr_conf


def read_manifest(root: Path, names: str) -> tuple[int, str] | None:
    """(major version, project_code) of `root/kaiwu.json`, None when there is none; ConfigError
    naming the file when it cannot be read (`names`: the allowed app.kaiwu_version values)."""
    manifest = Path(root) / "kaiwu.json"
    if not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        version = str(data["version"])
        major = int(version.split(".")[0])
        project_code = str(data.get("project_code") or DEFAULT_PROJECT_CODE)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{manifest}: expected JSON with a \"version\" like \"18.0.2\" ({type(e).__name__}: {e}); "
                          f"or set app.kaiwu_version = {names}") from None
    return major, project_code


def read_env_conf_file(path: Path, expected: str) -> dict:
    """A package's train_env_conf.toml as a tree with an [env_conf] table; ConfigError naming
    `path` when it cannot be read or has none (`expected`: what the table holds, for the message)."""
    import toml

    try:
        tree = toml.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, toml.TomlDecodeError) as e:
        raise ConfigError(f"{path}: cannot read it ({type(e).__name__}: {e})") from None
    if not isinstance(tree.get("env_conf"), dict):
        raise ConfigError(f"{path}: expected an [env_conf] table {expected}; "
                          f"found {', '.join(map(repr, tree)) or 'nothing'}")
    return tree
