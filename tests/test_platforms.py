"""The platform versions: one module each (workflow/platforms), asked everything that differs;
nothing else in the toolkit compares version names."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from workflow import platforms
from workflow.platforms import ConfigError, PlatformVersion

ROOT = Path(__file__).resolve().parents[1]
#: Where a version name may appear as a literal: the versions themselves, the package code's own
#: protocol table (it ships inside exported packages) and the simulator's protocol classes.
VERSION_MODULES = ("workflow/platforms/", "episodes/protocol.py", "realm/back_to_the_realm/env18.py", "realm/back_to_the_realm/env.py", "realm/back_to_the_realm_v2/")
SOURCE_FOLDERS = ("workflow", "episodes", "agent", "feature", "realm", "tools", "evaluation")


def test_every_version_answers_every_question(tmp_path):
    questions = [name for name, value in vars(PlatformVersion).items()
                 if callable(value) and not name.startswith("_")]
    for version in platforms.VERSIONS.values():
        assert version.name and version.title and version.env_protocol, version
        for question in ("claims_manifest", "claims_layout", "package_layout"):
            assert question in questions
            assert getattr(type(version), question) is not getattr(PlatformVersion, question), (version.name, question)
        assert version.export.modules.keys() == {"config", "definition", "agent", "workflow"}
        assert isinstance(version.claims_layout(tmp_path), bool)


def test_names_are_unique_and_the_project_speaks_one_of_them():
    assert len(set(platforms.NAMES)) == len(platforms.NAMES) == len(platforms.VERSIONS)
    assert platforms.PROJECT.hosts_project_agents and platforms.PROJECT.name in platforms.NAMES
    with pytest.raises(ValueError, match="allowed"):
        platforms.get("2025")


def test_a_manifest_is_claimed_by_exactly_one_version(tmp_path):
    for major in (8, 10, 18, 24, 28):
        claims = [v.name for v in platforms.VERSIONS.values() if v.claims_manifest(major, "back_to_the_realm")]
        assert len(claims) >= 1, major
        (tmp_path / "kaiwu.json").write_text(json.dumps({"version": f"{major}.0.1"}))
        assert platforms.detect(tmp_path).name == claims[0]  # newest first
    (tmp_path / "kaiwu.json").write_text("[]")
    with pytest.raises(ConfigError, match=r"kaiwu.json.*app.kaiwu_version"):
        platforms.detect(tmp_path)


def test_auto_detects_and_a_setting_overrides(tmp_path):
    assert platforms.of_package(None) is platforms.PROJECT
    (tmp_path / "kaiwu.json").write_text(json.dumps({"version": "9.2.1"}))
    for name in platforms.NAMES:
        assert platforms.of_package(tmp_path, name).name == name
    assert platforms.of_package(tmp_path, platforms.AUTO).name == platforms.detect(tmp_path).name


def _version_comparisons(source: str, where: str) -> list[str]:
    """Lines of `source` that compare something with a version name, or hold one as a literal."""
    names = set(platforms.NAMES)
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            literals = [n for n in [node.left, *node.comparators] if isinstance(n, ast.Constant)]
            if any(isinstance(n.value, str) and n.value in names for n in literals):  # "13", never 13
                found.append(f"{where}:{node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.append(f"{where}:{node.lineno} ({node.value!r})")
    return found


def test_no_version_names_outside_the_version_modules():
    found = []
    for folder in SOURCE_FOLDERS:
        for file in sorted((ROOT / folder).rglob("*.py")):
            where = file.relative_to(ROOT).as_posix()
            if not where.startswith(VERSION_MODULES):
                found += _version_comparisons(file.read_text(), where)
    assert not found, "version names outside workflow/platforms: " + ", ".join(found)


def test_the_check_finds_a_version_branch():
    found = _version_comparisons('def f(v):\n    return 1 if v == "18" else 2\n', "probe.py")
    assert found and all(line.startswith("probe.py:2") for line in found)
    assert not _version_comparisons('def f(v):\n    return v.platform.learn_rows(v)\n', "probe.py")
