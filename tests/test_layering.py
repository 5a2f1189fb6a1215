"""The import rules, held at folder level: package code (agent.algorithms.PACKAGE_FOLDERS)
imports only itself, the platform's modules, numpy and torch; inside it, feature/ sits below
agent/, which sits below episodes/; the simulator imports nothing of the project; the training
system reaches package code only through the host's few algorithm-free entry points."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from agent.algorithms import ALGORITHMS, PACKAGE_FOLDERS

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ("kaiwu_agent", "kaiwudrl")
PROJECT = PACKAGE_FOLDERS + ("realm", "workflow", "tools") + PLATFORM
#: What each package folder may import of the project, beside the platform's modules.
BELOW = {"feature": ("feature",), "agent": ("feature", "agent"), "episodes": ("feature", "agent", "episodes")}
#: The training system's only imports of package code, none of them an algorithm's: the registry of
#: the project's packages, the checkpoint files' home (names, error, atomic writes, checks) and the
#: episode runner that evaluation steps any package's agent with. Everything else of a package it
#: reaches through workflow.kaiwu_package, by module name, as the platform does.
SYSTEM_USES = ("agent.algorithms", "agent.checkpoint_io", "episodes.runner")


def imports(file: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_every_package_folder_is_a_folder_with_code():
    assert set(BELOW) == set(PACKAGE_FOLDERS)
    for folder in PACKAGE_FOLDERS:
        assert files(folder), folder
    for modules in ALGORITHMS.values():  # the four modules of every algorithm are package code
        assert {name.split(".")[0] for name in modules.values()} <= set(PACKAGE_FOLDERS)


@pytest.mark.parametrize("folder", PACKAGE_FOLDERS)
def test_package_code_imports_only_package_code_the_platform_numpy_and_torch(folder):
    allowed = set(BELOW[folder]) | set(PLATFORM) | {"numpy", "torch"} | set(sys.stdlib_module_names)
    if folder == "feature":
        allowed -= {"torch"}  # features are numpy: the simulator's side of the network
    for file in files(folder):
        for name in imports(file):
            assert name.split(".")[0] in allowed, f"{file.relative_to(ROOT)} imports {name}"


def test_the_simulator_imports_nothing_of_the_project():
    for file in files("realm"):
        for name in imports(file):
            top = name.split(".")[0]
            assert top == "realm" or top not in PROJECT, f"{file.relative_to(ROOT)} imports {name}"


def test_the_training_system_reaches_package_code_only_through_its_entry_points():
    for file in files("workflow"):
        for name in imports(file):
            if name.split(".")[0] in PACKAGE_FOLDERS:
                assert name in SYSTEM_USES, f"{file.relative_to(ROOT)} imports {name}"
