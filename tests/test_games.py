"""The game axis: every game is one registered object (games), asked what differs; no code
outside a game's home branches on a game's name. The guard fails on a planted branch."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import games
from workflow import platforms

ROOT = Path(__file__).resolve().parents[1]
#: Where a game's content lives (its simulator, its registration) and the platform versions,
#: which declare the game their packages play.
HOMES = ("games/", "realm/", "workflow/platforms/")
GAME_CONSTANT = re.compile(r"^[A-Z0-9_]*GAME$")  # V2_GAME, RealmEnv.GAME


def _names_a_game(node: ast.AST, names: set[str]) -> bool:
    """Whether `node` is a fixed game: a game's name as a literal, a *GAME constant, or the game
    of a module-level constant (PROJECT.game)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in names
    if isinstance(node, ast.Name):
        return bool(GAME_CONSTANT.match(node.id))
    if isinstance(node, ast.Attribute):
        if GAME_CONSTANT.match(node.attr):
            return True
        base = node.value
        base_name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        return node.attr == "game" and base_name.isupper()
    return False


def game_branches(source: str, names: set[str]) -> list[int]:
    """Lines of `source` that compare against a fixed game, or key a table by one."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            if any(_names_a_game(side, names) for side in [node.left, *node.comparators]):
                lines.append(node.lineno)
        elif isinstance(node, ast.Dict):
            if any(key is not None and not isinstance(key, ast.Constant) and _names_a_game(key, names)
                   for key in node.keys):
                lines.append(node.lineno)
    return lines


def _game_names() -> set[str]:
    return set(games.GAMES) | {version.game for version in platforms.VERSIONS.values()}


def _product_files() -> list[Path]:
    skip = ("tests/", ".venv/", "runs/", "out/")
    files = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(skip) and not rel.startswith(HOMES):
            files.append(path)
    return files


@pytest.mark.parametrize("planted", [
    'if platform.game == "back_to_the_realm_v2":\n    pass\n',
    "if env.GAME == RealmEnvV2.GAME:\n    pass\n",
    "x = platform.game != platforms.PROJECT.game\n",
    "if game == V2_GAME:\n    pass\n",
    "POLICIES = {RealmEnv.GAME: 1, RealmEnvV2.GAME: 2}\n",
    'ok = "back_to_the_realm" in (platform.game,)\n',
])
def test_the_guard_finds_a_planted_branch_on_a_game(planted):
    assert game_branches(planted, _game_names()) == [1]


def test_the_guard_lets_a_lookup_by_value_pass():
    lookup = "family = [v for v in VERSIONS.values() if v.game == game.name]\nhost = version.game == game\n"
    assert game_branches(lookup, _game_names()) == []


def test_no_code_outside_a_games_home_branches_on_a_game():
    names = _game_names()
    found = {path.relative_to(ROOT).as_posix(): game_branches(path.read_text(encoding="utf-8"), names)
             for path in _product_files()}
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_every_platform_version_plays_a_registered_game():
    for version in platforms.VERSIONS.values():
        assert games.of_platform(version).name == version.game
        assert version.eval_preset in games.of_platform(version).presets(), version.name


def test_every_game_answers_for_its_presets_and_envs():
    """Each game's presets reset its own evaluation env, and draw the episodes every policy plays."""
    import realm
    from workflow.config import EnvConfig

    for version in platforms.VERSIONS.values():
        game = games.of_platform(version)
        env = realm.make_env(**game.env_kwargs(EnvConfig.for_game(game), version))
        assert games.of_env(env) is game
        episodes = game.episodes(env, game.preset(version.eval_preset), 2, base_seed=5)
        assert [e.seed for e in episodes] == [5, 6]


def test_every_games_evaluation_module_names_its_policies_and_its_drawing():
    """evaluation/<game>.py is found by the game's name alone; a mode the game does not evaluate is
    refused naming the ones it does, before any checkpoint is touched."""
    for game in games.GAMES.values():
        module = game.evaluation()
        assert module.__name__ == f"evaluation.{game.name}"
        assert callable(module.play_and_draw) and callable(game.reference_policy().play)
        with pytest.raises(ValueError, match=" \\| ".join(game.policy_modes) or "greedy"):
            game.agent_policy(None, name="agent", mode="best")


def test_an_unknown_preset_or_game_is_named_with_what_is_allowed():
    with pytest.raises(ValueError, match="unknown preset 'nope'.*leaderboard-2024"):
        games.get("back_to_the_realm").preset("nope")
    with pytest.raises(ValueError, match="game 'tetris': allowed back_to_the_realm"):
        games.get("tetris")
    assert games.of_preset("v2-28-fixed") is games.BACK_TO_THE_REALM_V2
    assert games.of_preset("nope") is None


def test_an_agent_that_reads_withheld_information_is_said_to_and_one_that_does_not_is_not():
    """games.Game.information_needed, what an export states: the engine games' project agents read
    env_obs's extra_info.frame_state while their features' global_info is on; the others read
    nothing the platform withholds."""
    import dataclasses
    import importlib

    for name, section in (("gorge_chase", "features_gorge"), ("robot_vacuum", "features_vacuum")):
        game = games.get(name)
        settings = importlib.import_module(game.project_agents["ppo"]["config"]).Settings()
        assert game.info_rule and getattr(settings, section).global_info  # the default reads it
        said = game.information_needed(settings)
        assert said.startswith(f"reads env_obs's extra_info.frame_state ([{section}] global_info = true: ")
        assert "--extra-info full,withheld" in said
        alone = dataclasses.replace(settings, **{section: dataclasses.replace(getattr(settings, section),
                                                                              global_info=False)})
        assert game.information_needed(alone) is None
    for name in ("back_to_the_realm", "back_to_the_realm_v2"):
        game = games.get(name)
        settings = importlib.import_module(game.project_agents["ppo"]["config"]).Settings()
        assert game.information_needed(settings) is None
