"""The import rules, held at folder level: package code (agent.algorithms.PACKAGE_FOLDERS)
imports only itself, the platform's modules, numpy and torch; inside it, feature/ sits below
agent/, which sits below episodes/; the simulator imports nothing of the project; the training
system reaches package code only through the host's few algorithm-free entry points. The
training system's rooms stand on floors (FLOORS): no import goes up, none goes round in a cycle,
and evaluation, the learning tasks, the sweep's library, the export, the command line's pieces
and the tools stand above the training system; a tool imports those packages, never another tool."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from agent.algorithms import PACKAGE_FOLDERS

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ("kaiwu_agent", "kaiwudrl")
#: The project's Python above the package code, lowest first: the floors' rooms beside workflow's.
ABOVE = ("workflow", "evaluation", "tasks", "tuning", "export", "cli", "tools")
PROJECT = PACKAGE_FOLDERS + ("realm",) + ABOVE + PLATFORM
#: What each package folder may import of the project, beside the platform's modules.
BELOW = {"feature": ("feature",), "agent": ("feature", "agent"), "episodes": ("feature", "agent", "episodes")}
#: The training system's only imports of package code, none of them an algorithm's: the registry of
#: the project's packages, the checkpoint files' home (names, error, atomic writes, checks) and the
#: episode runner that evaluation steps any package's agent with. Everything else of a package it
#: reaches through workflow.host.kaiwu_package, by module name, as the platform does.
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
    import games

    for game in games.GAMES.values():  # the four modules of every game's agents are package code
        for modules in game.project_agents.values():
            assert {name.split(".")[0] for name in modules.values()} <= set(PACKAGE_FOLDERS), game.name


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


def test_the_games_stand_on_the_simulator_and_the_package_code_alone():
    """games/ is content the training system, evaluation and the tools ask (workflow.config's
    presets, the evaluation pool): it imports the simulators and package code, never a floor
    above; a game's evaluation side is found by its name (Game.evaluation(): evaluation/<game>.py)."""
    for file in files("games"):
        for name in imports(file):
            top = name.split(".")[0]
            assert top in ("games", "realm", *PACKAGE_FOLDERS) or top not in PROJECT + ("games",), \
                f"{file.relative_to(ROOT)} imports {name}"


def test_the_training_system_reaches_package_code_only_through_its_entry_points():
    for file in files("workflow"):
        for name in imports(file):
            if name.split(".")[0] in PACKAGE_FOLDERS:
                assert name in SYSTEM_USES, f"{file.relative_to(ROOT)} imports {name}"


#: The training system's rooms, lowest first: a room imports only rooms of its own floor or below
#: (and the simulator and the package code's entry points). A top-level module of workflow/ is a
#: room of its own.
FLOORS = (
    ("workflow.schema", "workflow.metrics_keys", "workflow.precision", "workflow.allocator"),
    ("workflow.platforms",),
    ("workflow.checkpoints", "workflow.transport"),
    ("workflow.run_sections",),
    ("workflow.config",),
    ("workflow.host", "workflow.metrics"),
    ("workflow.supervision",),
    ("workflow.telemetry",),
    ("workflow.aisrv", "workflow.learner"),
    ("workflow.launcher",),
    ("evaluation", "tasks", "tuning"),
    ("export",),
    ("cli",),
    ("tools",),
)
FLOOR = {room: level for level, rooms in enumerate(FLOORS) for room in rooms}


def room_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "workflow" and len(parts) > 1 else parts[0]


def imported_modules(file: Path) -> list[str]:
    """Like imports(), with `from workflow import x` read as the module workflow.x."""
    found = []
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "workflow":
            found += [f"workflow.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def room_of_file(file: Path) -> str:
    return room_of(".".join(file.relative_to(ROOT).with_suffix("").parts))


def room_imports() -> dict[str, set[str]]:
    """room -> the rooms of the training system and of the floors above it that it imports."""
    found: dict[str, set[str]] = {}
    for folder in ABOVE:
        for file in files(folder):
            room = room_of_file(file)
            for name in imported_modules(file):
                target = room_of(name)
                if target.split(".")[0] in ABOVE and target not in (room, "workflow"):
                    found.setdefault(room, set()).add(target)
    return found


def test_every_room_has_a_floor():
    rooms = {room_of_file(file) for file in files("workflow")} - {"workflow.__init__"}
    assert rooms <= set(FLOOR), f"rooms without a floor: {sorted(rooms - set(FLOOR))}"


def test_no_import_goes_up_a_floor():
    for room, targets in room_imports().items():
        for target in targets:
            assert FLOOR[target] <= FLOOR[room], f"{room} (floor {FLOOR[room]}) imports {target} (floor {FLOOR[target]})"


def test_no_rooms_import_each_other_in_a_cycle():
    graph = room_imports()

    def visit(room: str, path: tuple[str, ...]) -> None:
        for target in graph.get(room, ()):
            assert target not in path, "import cycle: " + " -> ".join(path + (target,))
            visit(target, path + (target,))
    for room in graph:
        visit(room, (room,))


#: The one import between tools left: gorge_chase's bench_features measures the features on its bench_env's episodes.
TOOL_IMPORTS_LEFT = {("bench_features", "bench_env")}


def edits_sys_path(tree: ast.AST) -> bool:
    """Whether code calls a method of sys.path (insert, append, ...) or assigns to it."""
    def is_sys_path(node) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
                and node.value.id == "sys")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_sys_path(node.func.value):
            return True
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(is_sys_path(t) or (isinstance(t, ast.Subscript) and is_sys_path(t.value)) for t in targets):
                return True
    return False


def test_a_tool_imports_the_library_never_another_tool_and_leaves_sys_path_alone():
    """tools/ is a folder of scripts, not a package (in a process hosting a 2025 package the
    platform's own root package `tools` must be importable): a tool reaches the project's packages
    as any program does (the project is installed editable), its shared flags and its work in
    them (cli, evaluation, export, tasks, tuning), never a module of another tool, and never
    through sys.path."""
    assert not (ROOT / "tools" / "__init__.py").exists()
    tools = {file.stem for file in files("tools")}
    for file in files("tools"):
        for name in imports(file):
            top = name.split(".")[0]
            assert top not in tools or (file.stem, top) in TOOL_IMPORTS_LEFT, \
                f"tools/{file.name} imports the tool {top}"
        assert not edits_sys_path(ast.parse(file.read_text())), f"tools/{file.name} edits sys.path"


def test_the_training_system_has_few_modules_at_its_top_level():
    top = [p.name for p in (ROOT / "workflow").glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= 15, sorted(top)
    assert not [name for name in top if name.startswith("eval")], "evaluation lives in evaluation/"


LAUNCHER_CHECKS = """
import sys
from workflow import launcher
for config in sys.argv[1:]:
    cfg = launcher.load_run_config(launcher.parse_args(["--config", config]))
    launcher.check_episode_settings(cfg)
    launcher.check_replay_memory(cfg)
    if cfg.eval.enabled:
        launcher.check_evaluation(cfg)
print(sorted({'torch', 'reverb', 'tensorflow'} & set(sys.modules)))
"""


def test_the_launcher_checks_a_config_without_torch_or_reverb():
    """A config error is answered in well under a second: the launcher's imports (the config's
    sections included: agent.model_options, ppo_options, dqn_options) and its checks before a run
    starts (the package's replay rows among them) load neither torch nor reverb, for a project
    agent of each game; its children do, forked from a server that imported them once."""
    import subprocess

    configs = [str(ROOT / "conf" / name) for name in ("smoke.toml", "back_to_the_realm_v2.toml", "gorge_chase.toml")]
    done = subprocess.run([sys.executable, "-c", LAUNCHER_CHECKS, *configs], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"  # after the checks' own lines (the maps a run plays)


def test_local_mode_runs_without_the_replay_servers_library():
    """Local mode (workflow.host.local_trainer: envs, agent and learner in one process) imports
    neither dm-reverb nor TensorFlow, so it trains where they are not installed, as on a GPU
    machine's own Python (tests/test_cuda.py runs it there)."""
    import subprocess

    probe = ("import sys, workflow.host.local_trainer\n"
             "print(sorted({'reverb', 'tensorflow'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
