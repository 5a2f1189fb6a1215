"""The project's own agents as packages: laid out as this repository is, each hosted in the
platform version of the game it plays (agent.algorithms.GAMES; hosting_version).
agent.algorithms declares their modules and the folders that are package code;
`PROJECT_ALGORITHMS` is that declaration as Layouts, which the config (app.algo), the host and
the export read."""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from agent.algorithms import ALGORITHMS, DEFAULT_ALGORITHM, DEFAULT_GAME, GAMES, PACKAGE_FOLDERS
from workflow.platforms import VERSIONS, of_package
from workflow.platforms.base import Layout, PlatformVersion

#: What of this repository is package code (the rest is the simulator, the training system, tools).
PROJECT_CODE = tuple(f"{folder}/" for folder in PACKAGE_FOLDERS)


@dataclass(frozen=True)
class ProjectAlgorithm:
    """One of the project's own packages: where its modules are in this repository."""

    layout: Layout

    @property
    def settings_class(self) -> type:
        """Its config module's `Settings`: a dataclass whose fields are the TOML sections it reads."""
        return importlib.import_module(self.layout.config).Settings

    @property
    def sections(self) -> tuple[str, ...]:
        """The sections of the run's TOML it reads (handed over as CONFIG.package_settings)."""
        return self.settings_class.sections()


def hosting_version(game: str) -> PlatformVersion:
    """The platform version the project's agents of `game` are hosted in: the newest of that game
    that hosts them (the 2024 protocol for back_to_the_realm, 28.x for back_to_the_realm_v2)."""
    for version in VERSIONS.values():  # newest first
        if version.game == game and version.hosts_project_agents:
            return version
    raise ValueError(f"no platform version hosts the project's agents of game {game!r}")


PROJECT_ALGORITHMS: dict[str, ProjectAlgorithm] = {
    algo: ProjectAlgorithm(Layout(**modules, code=PROJECT_CODE,
                                  platform=hosting_version(GAMES.get(algo, DEFAULT_GAME))))
    for algo, modules in ALGORITHMS.items()}
PROJECT_ALGO = DEFAULT_ALGORITHM
PROJECT_LAYOUT = PROJECT_ALGORITHMS[PROJECT_ALGO].layout


def run_platform(app) -> PlatformVersion:
    """The platform version a run ([app]) hosts its package in: a package's (app.kaiwu_version,
    detected when "auto"), else the project algorithm's (app.algo)."""
    if app.package or app.algo not in PROJECT_ALGORITHMS:
        return of_package(app.package, app.kaiwu_version)
    return PROJECT_ALGORITHMS[app.algo].layout.platform
