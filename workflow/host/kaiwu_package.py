"""A Kaiwu code package on disk: its layout, its modules, and where an error in it happened.

A package is a directory with `conf/configure_app.toml` and one folder per algorithm, imported as
the platform imports it: with the package directory first on `sys.path`, so
`dqn.feature.definition` and `conf.usr_conf` resolve inside it. Where a version puts the
modules, and which platform root modules go on the path after the package, is its platform
version's answer (workflow.platforms: v2024, v18); `detect_kaiwu_version` recognises it
(`kaiwu.json`, else the layout) and `app.kaiwu_version` overrides it.

The project's own agents are packages too, laid out as this repository is: each game declares
its agents' modules, agent.algorithms the folders that are package code (`PROJECT_ALGORITHMS` here
is that declaration as Layouts); the training system hosts them by the same path, `app.app` and
`app.algo` choosing.
tools/export_kaiwu.py writes them out in the platform's layout.
"""
from __future__ import annotations

import importlib
import importlib.util
import numbers
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from workflow import platforms
from workflow.platforms import Layout
from workflow.platforms.project import (PROJECT_ALGO, PROJECT_ALGORITHMS, PROJECT_CODE, PROJECT_LAYOUT,  # noqa: F401
                                       find_project_algorithm, project_algorithm)
from workflow.platforms.v18 import PLATFORM_ROOT as V18_PLATFORM_ROOT
from workflow.schema import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[2]  # the repository: the root of the project's own packages
#: The 2025 platform's root-level modules (arena_proto, tools.train_env_conf_validate, tools.metrics_utils).
KAIWU18_DIR = V18_PLATFORM_ROOT
#: The versions a package may speak; "auto" (app.kaiwu_version) asks detect_kaiwu_version.
KAIWU_VERSIONS = platforms.NAMES
PLATFORM_LAYOUT = Layout()
class PackageError(RuntimeError):
    """A package that does not keep the platform's contract (a missing name, a wrong width...)."""


def config_file(package_dir: str | Path) -> Path:
    return Path(package_dir) / "conf" / "configure_app.toml"


def detect_kaiwu_version(package_dir: str | Path) -> str:
    """The name of the package's platform version (workflow.platforms.detect)."""
    return platforms.detect(package_dir).name


def env_conf_file(root: Path, layout: Layout) -> Path | None:
    """The env settings file the package's workflow reads (a 2025 package's train_env_conf.toml)."""
    return layout.platform.env_conf_file(root, layout)


def package_layout(package_dir: str | Path, algo: str,
                   platform: platforms.PlatformVersion | str = platforms.PROJECT) -> tuple[Path, Layout]:
    """The package's root and the layout of `algo` in it, or ConfigError naming what is missing
    (`platform`: the version, or its name as a user gives it)."""
    root = Path(package_dir).resolve()
    if not root.is_dir():
        raise ConfigError(f"--package {package_dir}: not a directory")
    version = platforms.get(platform) if isinstance(platform, str) else platform
    return root, version.package_layout(root, algo)


def where_in_package(exc: BaseException, root: str | Path, code: tuple[str, ...] = ()) -> str | None:
    """'dqn/algorithm/agent.py:123 in learn' for the innermost frame of `exc` inside the package
    (inside `root`, and under one of the `code` prefixes when given)."""
    root = Path(root).resolve()
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename).resolve()
        if path.is_relative_to(root):
            relative = path.relative_to(root).as_posix()
            if not code or relative.startswith(code):
                found = f"{relative}:{frame.lineno} in {frame.name}"
    return found


def failure_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or while handling (__cause__, else
    __context__), outermost first: a workflow's `except Exception: raise RuntimeError("workflow
    error")` keeps the real failure there."""
    chain = [exc]
    while len(chain) < 16:
        inner = chain[-1].__cause__ or chain[-1].__context__
        if inner is None or any(inner is seen for seen in chain):
            break
        chain.append(inner)
    return chain


def describe_failure(exc: BaseException, root: str | Path, code: tuple[str, ...] = ()) -> str | None:
    """'agent_dqn/feature/preprocessor.py:40 in process: NameError: name 'np' is not defined
    (raised on as RuntimeError: workflow error at agent_dqn/workflow/train_workflow.py:57 in
    workflow)': the innermost failure of the chain with the package's frame nearest to it, then
    what wrapped it. None when `exc` did not pass through the package."""
    located = [(e, where_in_package(e, root, code)) for e in failure_chain(exc)]
    if located[0][1] is None:
        return None
    where = next(w for _, w in reversed(located) if w)  # an innermost raised in a library: the package's call
    wrappers = [f"{_named_error(e)}{' at ' + w if w else ''}" for e, w in reversed(located[:-1])]
    return f"{where}: {_named_error(located[-1][0])}" + (f" (raised on as {'; then '.join(wrappers)})" if wrappers else "")


def _named_error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


@dataclass
class KaiwuPackage:
    """The imported package: the agent class, the episode loop and the row converters."""

    root: Path
    algo: str
    agent_class: type
    workflow: Callable
    sample_dim: int
    layout: Layout = PLATFORM_LAYOUT
    #: where sample_dim is stated ("agent_ppo/conf/conf.py Config.SAMPLE_DIM"), for messages
    sample_dim_source: str = ""
    #: the package's own data classes and protocol functions, taken when it is imported (the
    #: registry is per process; a second package loaded in the same process must not change them)
    protocols: dict[str, Callable] = field(default_factory=dict)

    @classmethod
    def load(cls, package_dir: str | Path, algo: str, config_values: dict[str, Any],
             layout: Layout | None = None, platform: platforms.PlatformVersion = platforms.PROJECT) -> "KaiwuPackage":
        """Fill the platform's CONFIG, put the package on sys.path and import its algorithm
        (`layout` given: the project's own, else the package's layout in `platform`)."""
        root, layout = _placed(package_dir, algo, layout, platform, config_values)
        allow_lazy_parameters_in_torch_load()
        protocols, sample_dim, source = _sample_rows(root, algo, layout)
        agent_module = _imported(root, algo, layout, "agent")
        workflow_module = _imported(root, algo, layout, "workflow")
        agent_class = _named(agent_module, layout.agent_class, layout.file("agent", algo))
        workflow = _named(workflow_module, layout.workflow_function, layout.file("workflow", algo))
        return cls(root=root, algo=algo, agent_class=agent_class, workflow=workflow, sample_dim=sample_dim,
                   layout=layout, sample_dim_source=source, protocols=protocols)

    @classmethod
    def row_width(cls, cfg) -> int:
        """The width of the run's replay rows (its package's SAMPLE_DIM), read from the package's
        config and definition modules alone: the launcher checks the replay's memory without
        importing torch, which its fork server imports once for every child."""
        root, layout = _placed(*_run_source(cfg), platform_config(cfg, "launcher", None))
        return _sample_rows(root, cfg.app.algo, layout)[1]

    @classmethod
    def of_run(cls, cfg, role: str, paths) -> "KaiwuPackage":
        """The package a run trains: `app.package`, or the project's own `app.algo`."""
        package_dir, algo, layout, platform = _run_source(cfg)
        return cls.load(package_dir, algo, platform_config(cfg, role, paths), layout, platform)

    @property
    def kaiwu_version(self) -> str:
        """The name of the platform version it speaks (workflow.platforms.NAMES)."""
        return self.layout.kaiwu_version

    @property
    def platform(self) -> platforms.PlatformVersion:
        """Its platform version: what differs between versions is asked of it."""
        return self.layout.platform

    @property
    def env_conf_file(self) -> Path | None:
        """The env settings file its workflow reads (a 2025 package's train_env_conf.toml)."""
        return env_conf_file(self.root, self.layout)

    @classmethod
    def project(cls, app: str, algo: str, config_values: dict[str, Any]) -> "KaiwuPackage":
        """One of the project's own packages (PROJECT_ALGORITHMS): game `app`'s `algo`."""
        return cls.load(REPO_ROOT, algo, config_values, project_layout(app, algo))

    def preprocessor_class(self) -> type | None:
        """A 2025 package's `agent_<algo>/feature/preprocessor.py` Preprocessor (its features'
        per-episode state, which the platform's eval workflow builds), None when it has none."""
        module = self.platform.preprocessor_module(self.layout)
        if module is None or importlib.util.find_spec(module) is None:
            return None
        return getattr(importlib.import_module(module), "Preprocessor", None)

    def protocol(self, name: str) -> Callable:
        """The package's protocol function or data class (`SampleData2NumpyData`, `ObsData`, ...):
        as its definition.py defines it, else as registered."""
        if name in self.protocols:
            return self.protocols[name]
        from kaiwu_agent.agent.protocol import protocol

        return getattr(protocol, name)

    @property
    def row_width_named(self) -> str:
        """'agent_ppo/conf/conf.py Config.SAMPLE_DIM = 63': the row width and where it is stated."""
        return f"{self.sample_dim_source or self.config_name + ' Config.SAMPLE_DIM'} = {self.sample_dim}"

    @property
    def config_name(self) -> str:
        """'dqn/config.py' (2024) or 'agent_dqn/conf/conf.py' (2025): where Config lives."""
        return self.layout.file("config", self.algo)

    @property
    def learn_name(self) -> str:
        """'dqn Agent.learn (dqn/algorithm/agent.py)': the package's learn, as messages name it."""
        return f"{self.algo} Agent.learn ({self.layout.file('agent', self.algo)})"

    def where(self, exc: BaseException) -> str | None:
        return where_in_package(exc, self.root, self.layout.code)

    def failure(self, exc: BaseException) -> str | None:
        """Where in the package and what failed, its innermost cause first (describe_failure)."""
        return describe_failure(exc, self.root, self.layout.code)

    def make_agent(self, agent_type: str, logger, monitor, device: str = "cpu"):
        """The package's Agent as the platform builds it for a role ("aisrv", "learner", "eval")."""
        import torch

        try:
            return self.agent_class(agent_type=agent_type, device=torch.device(device), logger=logger, monitor=monitor)
        except Exception as e:
            failure = self.failure(e)
            raise PackageError(f"{self.algo} Agent(agent_type={agent_type!r}, ...) failed "
                               + (f"at {failure}" if failure else f": {type(e).__name__}: {e}")) from e


def check_imports(cfg, paths) -> None:
    """Import the run's package as a process of the run would (KaiwuPackage.of_run): a PackageError
    names what is broken and where."""
    KaiwuPackage.of_run(cfg, "launcher", paths)


def preload_dir(app, root: str | Path, layout: Layout) -> Path:
    """Where `app.preload_model_dir` points. A hosted package's (`app.package`) is read inside
    the package, as the platform reads it: `{agent_name}` is the algorithm's folder (agent_ppo)
    and a relative path is relative to the package's directory. The project's own agents keep
    the path as given (relative to the working directory)."""
    if not app.package:
        return Path(app.preload_model_dir)
    path = Path(app.preload_model_dir.replace("{agent_name}", layout.folder(app.algo)))
    return path if path.is_absolute() else Path(root) / path


def allow_lazy_parameters_in_torch_load() -> None:
    """A lazy module (torch.nn.LazyLinear) saved before its first forward holds uninitialised
    parameters, which torch.load's default weights_only unpickler refuses, though they are torch's
    own data classes: the package's load_model of checkpoint 0 reads them here as on the
    platform's older torch."""
    import torch

    add = getattr(torch.serialization, "add_safe_globals", None)
    if add is not None:
        add([torch.nn.parameter.UninitializedParameter, torch.nn.parameter.UninitializedBuffer])


PROTOCOL_NAMES = ("ObsData", "ActData", "SampleData", "observation_process", "action_process", "sample_process",
                  "SampleData2NumpyData", "NumpyData2SampleData")


def project_layout(app: str, algo: str) -> Layout:
    """The layout of one of the project's own agents; ConfigError saying what to set otherwise."""
    try:
        return project_algorithm(app, algo).layout
    except ValueError as e:
        raise ConfigError(f"[app] {e}") from None


def _run_source(cfg) -> tuple[str | Path, str, Layout | None, platforms.PlatformVersion]:
    """(package directory, algo, layout, platform version) of the package a run trains: `app.package`
    (its layout found in it), or the project's own `app.algo`."""
    if cfg.app.package:
        return cfg.app.package, cfg.app.algo, None, platforms.of_package(cfg.app.package, cfg.app.kaiwu_version)
    return REPO_ROOT, cfg.app.algo, project_layout(cfg.app.app, cfg.app.algo), platforms.PROJECT


def _placed(package_dir: str | Path, algo: str, layout: Layout | None, platform: platforms.PlatformVersion,
            config_values: dict[str, Any]) -> tuple[Path, Layout]:
    """The package's root and layout, with the platform's CONFIG filled and the package (then its
    platform's modules) first on sys.path, as the platform imports it."""
    from kaiwudrl.common.config.config_control import CONFIG

    if layout is None:
        root, layout = package_layout(package_dir, algo, platform)
    else:
        root = Path(package_dir).resolve()
    CONFIG.load(config_values)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    platform_root = layout.platform.platform_root
    if platform_root is not None and str(platform_root) not in sys.path:
        sys.path.insert(sys.path.index(str(root)) + 1, str(platform_root))
    return root, layout


def _imported(root: Path, algo: str, layout: Layout, role: str):
    """One of the algorithm's modules ("config", "definition", "agent", "workflow"); a failure
    names the package's file and line."""
    try:
        return importlib.import_module(layout.module(role, algo))
    except Exception as e:
        failure = describe_failure(e, root, layout.code)
        raise PackageError(f"importing package {root} ({algo}) failed "
                           + (f"at {failure}" if failure else f": {type(e).__name__}: {e}")) from e


def _sample_rows(root: Path, algo: str, layout: Layout) -> tuple[dict[str, Callable], int, str]:
    """(the package's protocol functions, the width of its replay rows, where that width is
    stated) from its config and definition modules (the definition registers the protocol
    functions)."""
    config = _imported(root, algo, layout, "config")
    definition = _imported(root, algo, layout, "definition")
    config_class = _named(config, "Config", layout.file("config", algo))
    try:  # the platform version's converters and row width (15.0.1 packs SampleData itself)
        protocols, sample_dim = layout.platform.sample_rows(_protocols(definition), config_class)
    except ValueError as e:
        raise PackageError(f"{layout.file('definition', algo)}: {e}") from None
    if not isinstance(sample_dim, numbers.Integral) or isinstance(sample_dim, bool) or sample_dim < 1:
        raise PackageError(f"{layout.file('config', algo)}: Config.SAMPLE_DIM must be a positive int (the width "
                           f"of SampleData2NumpyData's rows), got {sample_dim!r}")
    source = (f"{layout.file('config', algo)} Config.SAMPLE_DIM" if getattr(config_class, "SAMPLE_DIM", None) is not None
              else f"the widths {layout.file('definition', algo)} declares for SampleData")
    return protocols, int(sample_dim), source


def _protocols(definition) -> dict[str, Callable]:
    """What of the protocol a package's definition module defines itself."""
    return {name: getattr(definition, name) for name in PROTOCOL_NAMES if getattr(definition, name, None) is not None}


def _named(module, name: str, where: str):
    found = getattr(module, name, None)
    if found is None:
        raise PackageError(f"{where} defines no {name}")
    return found


def numeric_values(data, finite_only: bool = True) -> dict[str, float]:
    """The finite numbers of a monitor report {pid: {key: value}} (or a flat {key: value});
    with `finite_only` false NaN and inf too (the learner counts them)."""
    if not isinstance(data, dict):
        return {}
    flat = {}
    for key, value in data.items():
        inner = value if isinstance(value, dict) else {key: value}
        for k, v in inner.items():
            if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and (not finite_only or np.isfinite(v)):
                flat[str(k)] = float(v)
    return flat


def platform_config(cfg, role: str, paths) -> dict[str, Any]:
    """What the package's CONFIG holds in a process: every [app] key of the run, the platform-only
    ones included, plus the platform's per-process keys for this run's directories."""
    data = cfg.to_dict()
    values = dict(data["app"])
    values["svr_name"] = role
    if paths is not None:  # a run on disk (not the in-process local mode)
        values.update(restore_dir=str(paths.ckpt_root), user_ckpt_dir=str(paths.user_ckpt),
                      metrics_file=str(paths.metrics_csv))  # tools.metrics_utils (2025 packages) reads it
    if cfg.settings is not None:  # the project's agents read their sections, validated by load_config
        values["package_settings"] = cfg.settings
    return values
