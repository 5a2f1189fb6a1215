"""The project's own agents as packages: laid out as this repository is, each hosted in the
platform version of the game it plays (hosting_version). A game declares its agents
(games.<game>'s `project_agents`); a run names one by (app.app, app.algo): one algorithm name, say
"ppo", in every game. `PROJECT_ALGORITHMS` is that declaration as Layouts, which the config, the
host and the export read."""
from __future__ import annotations

import importlib
from dataclasses import dataclass

import games
from agent.algorithms import DEFAULT_ALGORITHM, PACKAGE_FOLDERS
from workflow.platforms import PROJECT, VERSIONS, of_package
from workflow.platforms.base import Layout, PlatformVersion

#: What of this repository is package code (the rest is the simulator, the training system, tools).
PROJECT_CODE = tuple(f"{folder}/" for folder in PACKAGE_FOLDERS)


@dataclass(frozen=True)
class ProjectAlgorithm:
    """One of the project's own packages: its game and algorithm, where its modules are."""

    game: str
    algo: str
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


PROJECT_ALGORITHMS: dict[tuple[str, str], ProjectAlgorithm] = {
    (game.name, algo): ProjectAlgorithm(game.name, algo, Layout(**modules, code=PROJECT_CODE,
                                                                platform=hosting_version(game.name)))
    for game in games.GAMES.values() for algo, modules in game.project_agents.items()}
PROJECT_ALGO = DEFAULT_ALGORITHM
PROJECT_DEFAULT = PROJECT_ALGORITHMS[(PROJECT.game, PROJECT_ALGO)]  # what configure_app.toml trains
PROJECT_LAYOUT = PROJECT_DEFAULT.layout


def described() -> str:
    """The project's agents for messages: "ppo, dqn_plus (back_to_the_realm); ppo (...)"."""
    by_game: dict[str, list[str]] = {}
    for game, algo in PROJECT_ALGORITHMS:
        by_game.setdefault(game, []).append(algo)
    return "; ".join(f"{', '.join(algos)} (app = \"{game}\")" for game, algos in by_game.items())


def current_name(app: str, algo: str) -> tuple[str, str]:
    """(app, algo) as this release names the agent: an algorithm name of an earlier release that
    a game has taken over (`renamed_agents`: "ppo_v2" is back_to_the_realm_v2's "ppo") becomes
    that game's; an `app` that names no game (an earlier release took it as a label only, its
    agents being the 2024 game's) becomes the 2024 game for the algorithms that game has; any
    other pair is returned as it is."""
    for game in games.GAMES.values():
        if algo in game.renamed_agents:
            return game.name, game.renamed_agents[algo]
    if app not in games.GAMES and (PROJECT.game, algo) in PROJECT_ALGORITHMS:
        return PROJECT.game, algo
    return app, algo


def rename_hint(app: str, algo: str) -> str:
    """What to change in a config that names an agent by an earlier release's name ("" if none)."""
    new_app, new_algo = current_name(app, algo)
    if (new_app, new_algo) == (app, algo):
        return ""
    said = (f"algo \"{algo}\" is now the algorithm \"{new_algo}\" of game \"{new_app}\"" if new_algo != algo else
            f"app \"{app}\" names no game: app names the game ({', '.join(games.GAMES)}) and, with algo, the "
            f"checkpoint folder")
    return (f"{said}: set app = \"{new_app}\" and algo = \"{new_algo}\" in [app] (a run's checkpoints then live in "
            f"ckpt/{new_app}_{new_algo})")


def find_project_algorithm(app: str, algo: str) -> ProjectAlgorithm | None:
    return PROJECT_ALGORITHMS.get((app, algo))


def project_algorithm(app: str, algo: str) -> ProjectAlgorithm:
    """The project's agent `algo` for game `app`; ValueError saying what to set otherwise."""
    found = PROJECT_ALGORITHMS.get((app, algo))
    if found is None:
        hint = rename_hint(app, algo)
        raise ValueError(hint or f"app = \"{app}\", algo = \"{algo}\" is none of the project's agents: "
                                 f"{described()} (a Kaiwu package's own: ./train.sh --package DIR)")
    return found


def run_platform(app) -> PlatformVersion:
    """The platform version a run ([app]) hosts its package in: a package's (app.kaiwu_version,
    detected when "auto"), else the project agent's (app.app, app.algo)."""
    project = None if app.package else find_project_algorithm(app.app, app.algo)
    if project is None:
        return of_package(app.package, app.kaiwu_version)
    return project.layout.platform
