"""The code an exported package carries: the agent's four modules and every package-code module
they import (nothing else), each at its place in the platform version's layout
(workflow.platforms.ExportLayout), its imports moved under the algorithm's folder, the loops set
to the version's protocol; and the check that the package imports only what the platform has."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from agent.algorithms import PACKAGE_FOLDERS
from evaluation.inputs import InputError
from workflow import platforms
from workflow.config import REPO_ROOT
from workflow.platforms import ExportLayout as Target

PROJECT_TARGET = platforms.PROJECT.export
MODEL_SOURCE = "agent/model.py"  # the network: the platform's model/model.py
OTHER_FOLDERS = ("realm", "workflow", "tools")  # the project's Python beside the package code: never exported
ALLOWED_TOP_LEVEL = {"numpy", "torch", "kaiwu_agent", "kaiwudrl"}  # beside the standard library and {algo}
#: The package's protocol constant (episodes.protocol.KAIWU_VERSION) as the project has it; a
#: target's ExportLayout.protocol_line replaces it, so the exported loops speak its protocol.
PROTOCOL_MODULE = "episodes/protocol.py"
PROTOCOL_LINE = f'KAIWU_VERSION = "{platforms.PROJECT.name}"'


def file_map(project, target: Target = PROJECT_TARGET) -> dict[str, str]:
    """Project file -> exported path ({algo} not yet filled in) for one of the project's agents
    (workflow.platforms.project.ProjectAlgorithm): its four modules and every package-code module
    they import, directly or not (nothing else)."""
    layout = project.layout
    own = {layout.file(part, project.algo): target.modules[part] for part in ("config", "definition", "agent", "workflow")}
    files: dict[str, str] = {}
    pending = list(own)
    while pending:
        relative = pending.pop()
        if relative in files:
            continue
        folder, name = relative.split("/", 1)
        place = own.get(relative) or (target.model_file if relative == MODEL_SOURCE else target.folders[folder] + name)
        if relative not in own and place in own.values():  # e.g. the PPO package's definition under a v2 one's
            place = target.folders[folder] + "base_" + name
        files[relative] = place
        for module in imported_modules((REPO_ROOT / relative).read_text()):
            if module.split(".")[0] in PACKAGE_FOLDERS and (REPO_ROOT / (module.replace(".", "/") + ".py")).is_file():
                pending.append(module.replace(".", "/") + ".py")
    return files


def imported_modules(text: str) -> list[str]:
    """The dotted modules a file imports (absolute imports)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def module_map(project, algo: str, target: Target = PROJECT_TARGET) -> dict[str, str]:
    """Dotted project module -> dotted module in the exported package."""
    return {path.removesuffix(".py").replace("/", "."): place.format(algo=algo).removesuffix(".py").replace("/", ".")
            for path, place in file_map(project, target).items()}


def source_files(project, algo: str, target: Target = PROJECT_TARGET) -> dict[str, Path]:
    """Exported relative path -> project file."""
    return {place.format(algo=algo): REPO_ROOT / path for path, place in file_map(project, target).items()}


def rewrite_imports(text: str, modules: dict[str, str], where: str) -> str:
    """Move `from X import ...` / `import X` of the project's modules under the package."""
    def replace(match: re.Match) -> str:
        name = match.group("module")
        if name not in modules:
            raise InputError(f"{where}: imports {name}, which is not part of the exported package")
        return f"{match.group('lead')}{modules[name]}"

    project = "|".join(PACKAGE_FOLDERS + OTHER_FOLDERS)
    pattern = re.compile(rf"^(?P<lead>\s*(?:from|import)\s+)(?P<module>(?:{project})(?:\.\w+)*)", re.MULTILINE)
    return pattern.sub(replace, text)


def foreign_imports(text: str, folder: str) -> list[str]:
    """Top-level modules a file imports that the platform would not have (`folder`: the package's own)."""
    allowed = ALLOWED_TOP_LEVEL | set(sys.stdlib_module_names) | {folder, "__future__"}
    return [name for name in imported_modules(text) if name.split(".")[0] not in allowed]


def package_texts(project, algo: str, target: Target) -> dict[str, str]:
    """Exported path -> the file's text, imports moved under the algorithm's folder; the loops
    set to the target's protocol and its extra files added (a 2025 export's
    feature/preprocessor.py). Every text is checked to import only what the platform has."""
    modules = module_map(project, algo, target)
    folder = target.folder.format(algo=algo)
    sources = {place: (source.read_text(), str(source.relative_to(REPO_ROOT)))
               for place, source in source_files(project, algo, target).items()}
    if target.protocol_line is not None:
        protocol_place = target.folders["episodes"].format(algo=algo) + Path(PROTOCOL_MODULE).name
        text, where = sources[protocol_place]
        if text.count(PROTOCOL_LINE) != 1:
            raise InputError(f"{where}: expected one line {PROTOCOL_LINE!r} to set the package's protocol")
        sources[protocol_place] = (text.replace(PROTOCOL_LINE, target.protocol_line), where)
    for folder_key, (name, text) in target.extra_sources.items():
        sources[target.folders[folder_key].format(algo=algo) + name] = (text, name)
    texts = {}
    for place, (text, where) in sources.items():
        text = rewrite_imports(text, modules, where)
        foreign = foreign_imports(text, folder)
        if foreign:
            raise InputError(f"{where} imports {', '.join(foreign)}: the platform has only its own modules, numpy and "
                             "torch")
        texts[place] = text
    return texts
