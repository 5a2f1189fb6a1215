"""Every registered game follows the game scheme (games/scheme.py, docs/08-adding-a-game.md): each
file the scheme names exists, and no module outside the scheme carries a game's name. The
checks are run against planted violations too, so they are known to find them."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import games
from games import scheme

REPO = Path(__file__).resolve().parents[1]
#: The words a file name uses for a game beside its full name (a name part: "bench_gorge_env.py").
NICKNAMES = {"back_to_the_realm_v2": ("v2",), "gorge_chase": ("gorge",), "robot_vacuum": ("vacuum",),
             "back_to_the_realm": ()}
#: What the check reads: the project's own files; the platform's modules (kaiwu_platform/, laid out
#: as the platform lays them out) and the version axis (workflow/platforms/: "v2" there is the
#: 24.x/28.x platform family) are not games' homes and may carry their names.
NOT_READ = ("tests/", "kaiwu_platform/", "workflow/platforms/", ".ci/", "deploy/")


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout.split()
    return [f for f in out if f.endswith((".py", ".toml", ".md")) and not f.startswith(NOT_READ)
            and (REPO / f).is_file()]


def game_named(path: str) -> str | None:
    """The game whose name (or nickname) a path's file or folder names carry, if any."""
    parts = re.split(r"[/_.\-]", path.lower())
    for game in sorted(NICKNAMES, key=len, reverse=True):
        if game in path:
            return game
        if any(nick in parts for nick in NICKNAMES[game]):
            return game
    return None


def in_scheme(path: str, game: str) -> bool:
    """Whether `path` is one of `game`'s homes in the scheme."""
    if any(path.startswith(f"{folder}/{game}/") for folder in scheme.GAME_FOLDERS):
        return True
    if any(path == f"{folder}/{game}.py" for folder in scheme.GAME_MODULES):
        return True
    return (path.startswith(f"conf/{game}") and path.endswith(".toml")) or path == f"docs/games/{game}.md"


def strays(paths: list[str]) -> list[str]:
    found = []
    for path in paths:
        game = game_named(path)
        if game is not None and not in_scheme(path, game):
            found.append(f"{path} ({game})")
    return found


@pytest.mark.parametrize("game", sorted(games.GAMES))
def test_every_registered_game_has_every_file_of_the_scheme(game):
    algorithms = games.GAMES[game].algorithms
    missing = [f"{place.path}: {place.holds}" for place in scheme.required_files(game, algorithms)
               if not (REPO / place.path).is_file()]
    assert not missing, f"{game} lacks (docs/08-adding-a-game.md):\n" + "\n".join(missing)


def test_a_game_missing_a_file_is_found():
    places = scheme.required_files("a_new_game", ("ppo",))
    assert "realm/a_new_game/env.py" in [p.path for p in places]
    assert "agent/a_new_game/ppo_agent.py" in [p.path for p in places]
    assert not any((REPO / p.path).is_file() for p in places)


def test_no_module_outside_the_scheme_carries_a_games_name():
    assert strays(tracked_files()) == []


def test_the_stray_check_finds_planted_strays_and_passes_homes():
    planted = ["feature/layout_v2.py", "agent/ppo_gorge_agent.py", "episodes/gorge_episodes.py",
               "tools/bench_vacuum_env.py", "realm/back_to_the_realm_v2.py", "docs/GORGE_RULES.md"]
    assert [s.split(" ")[0] for s in strays(planted)] == planted
    homes = ["feature/gorge_chase/layout.py", "realm/back_to_the_realm_v2/env.py", "tools/robot_vacuum/bench_env.py",
             "evaluation/gorge_chase.py", "conf/back_to_the_realm_v2_24.toml", "docs/games/robot_vacuum.md",
             "tasks/gorge_chase.py", "feature/segments.py"]
    assert strays(homes) == []


def test_the_games_agent_modules_are_the_schemes():
    for game in games.GAMES.values():
        for algo, modules in game.project_agents.items():
            for part, dotted in modules.items():
                assert (REPO / (dotted.replace(".", "/") + ".py")).is_file(), (game.name, algo, part)
        if game.algorithms:
            module, factory = game.reward_episodes.split(":")
            assert factory == "game_episodes" and (REPO / (module.replace(".", "/") + ".py")).is_file()


def test_the_checklist_names_every_file_of_the_scheme():
    text = (REPO / "docs" / "08-adding-a-game.md").read_text(encoding="utf-8")
    places = (*scheme.GAME_FILES, *scheme.AGENT_GAME_FILES, *scheme.ALGORITHM_FILES.values(), *scheme.REGISTRATIONS)
    missing = [p.path for p in places if p.path.replace("{game}", "<game>").replace("{algo}", "<algo>") not in text]
    assert not missing, missing
