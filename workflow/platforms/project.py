"""The project's own agents as packages: laid out as this repository is, hosted in the project's
platform version. agent.algorithms declares their modules and the folders that are package code;
`PROJECT_ALGORITHMS` is that declaration as Layouts, which the config (app.algo), the host and
the export read."""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from agent.algorithms import ALGORITHMS, DEFAULT_ALGORITHM, PACKAGE_FOLDERS
from workflow.platforms import PROJECT
from workflow.platforms.base import Layout

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


PROJECT_ALGORITHMS: dict[str, ProjectAlgorithm] = {
    algo: ProjectAlgorithm(Layout(**modules, code=PROJECT_CODE, kaiwu_version=PROJECT.name))
    for algo, modules in ALGORITHMS.items()}
PROJECT_ALGO = DEFAULT_ALGORITHM
PROJECT_LAYOUT = PROJECT_ALGORITHMS[PROJECT_ALGO].layout


