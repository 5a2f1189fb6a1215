"""The Kaiwu games the toolkit plays, one module each, as workflow/platforms has one per platform
version. `get(name)` is the game of a project_code (a platform version's `game`, an env's
`GAME`); `of_platform(version)` the game a version's packages play; `of_preset(name)` the game
whose preset it is. Everything that differs by game is a question to the returned `Game`
(games.base), never a comparison of names; tests/test_games.py holds the code to that.
"""
from __future__ import annotations

from games.back_to_the_realm import GAME as BACK_TO_THE_REALM
from games.back_to_the_realm_v2 import GAME as BACK_TO_THE_REALM_V2
from games.base import Game, Rendering, RenderOptions
from games.gorge_chase import GAME as GORGE_CHASE
from games.robot_vacuum import GAME as ROBOT_VACUUM

GAMES: dict[str, Game] = {game.name: game for game in (BACK_TO_THE_REALM, BACK_TO_THE_REALM_V2, GORGE_CHASE,
                                                       ROBOT_VACUUM)}

__all__ = ["GAMES", "Game", "RenderOptions", "Rendering", "all_presets", "get", "of_env", "of_platform", "of_preset"]


def get(name: str) -> Game:
    """The game of project_code `name`, or ValueError listing the games."""
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        raise ValueError(f"game {name!r}: allowed {' | '.join(GAMES)}") from None


def of_platform(platform) -> Game:
    """The game a platform version's packages play."""
    return get(platform.game)


def of_env(env) -> Game:
    """The game an env (realm.make_env's) plays."""
    return get(env.GAME)


def of_preset(name: str) -> Game | None:
    """The game whose preset `name` is (None: no game has it)."""
    return next((game for game in GAMES.values() if name in game.presets()), None)


def all_presets() -> dict[str, list[str]]:
    """Every game's preset names, for help texts."""
    return {game.name: list(game.presets()) for game in GAMES.values()}
