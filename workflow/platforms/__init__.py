"""The Kaiwu platform versions a package may be written for, one module each.

`get(name)` is the version app.kaiwu_version / --kaiwu-version names; `detect(package_dir)`
recognises a package's (kaiwu.json's version and project_code, else its layout); `of_package`
resolves "auto". Everything that differs between versions is a question to the returned
`PlatformVersion` (workflow.platforms.base), never a comparison of names.
"""
from __future__ import annotations

from pathlib import Path

from workflow.platforms.base import ConfigError, ExportLayout, Layout, PlatformVersion, read_manifest
from workflow.platforms.v2 import PLATFORM as V2_24
from workflow.platforms.v2 import PLATFORM_28 as V2_28
from workflow.platforms.v13 import PLATFORM as V13
from workflow.platforms.v15 import PLATFORM as V15
from workflow.platforms.v18 import PLATFORM as V18
from workflow.platforms.v2024 import PLATFORM as V2024

#: Newest first, a game's own versions before those that claim by the version number alone:
#: detection asks each in turn (gorge_chase's 15.x and robot_vacuum's 13.x before 2024's "below 18").
VERSIONS: dict[str, PlatformVersion] = {version.name: version for version in (V2_28, V2_24, V15, V13, V18, V2024)}
NAMES = tuple(reversed(VERSIONS))  # oldest first, as messages list them
#: The version of the project's own agents (and of a run with no package).
PROJECT = V2024
AUTO = "auto"

__all__ = ["AUTO", "NAMES", "PROJECT", "VERSIONS", "ConfigError", "ExportLayout", "Layout", "PlatformVersion",
           "detect", "get", "of_package"]


def allowed() -> str:
    return " | ".join(f'"{name}"' for name in NAMES)


def get(name: str) -> PlatformVersion:
    """The version named `name`, or ValueError listing the names."""
    try:
        return VERSIONS[name]
    except (KeyError, TypeError):
        raise ValueError(f"kaiwu_version {name!r}: allowed {' | '.join(NAMES)}") from None


def detect(package_dir: str | Path) -> PlatformVersion:
    """The version of the package at `package_dir`: kaiwu.json's version (and project_code), else
    its layout. A kaiwu.json that cannot be read is a ConfigError naming it."""
    root = Path(package_dir)
    manifest = read_manifest(root, allowed())
    for version in VERSIONS.values():
        if version.claims_manifest(*manifest) if manifest else version.claims_layout(root):
            return version
    raise ConfigError(f"{root}: no platform version recognises this package (kaiwu.json {manifest}); "
                      f"set app.kaiwu_version = {allowed()}")


def of_package(package_dir: str | Path | None, setting: str = AUTO) -> PlatformVersion:
    """The version a run hosts a package with: `setting` (app.kaiwu_version), detected when "auto";
    the project's own with no package."""
    if not package_dir:
        return PROJECT
    return detect(package_dir) if setting == AUTO else get(setting)
