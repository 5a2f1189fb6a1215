"""Which sections a run's config holds, and whose the others are.

A run reads the training system's [app] [env] [eval] and the sections of the one agent it trains
(its algorithm's `Settings`, declared by the game's `project_agents`); [env] holds the map keys
every game has and the run's game's own rule keys (games.<game>'s `env_rules`). A section or an
[env] key of another game or agent in a config file is refused, naming whose it is. A run's
effective config written by an earlier release (every game's sections, old key names) is the
run's record, not the user's input: `current_record` reads it as this release writes it.
"""
from __future__ import annotations

import dataclasses

import games
from workflow import platforms
from workflow.platforms.project import (PROJECT_ALGORITHMS, PROJECT_DEFAULT, ProjectAlgorithm, current_name,
                                        find_project_algorithm, run_platform)
from workflow.schema import ConfigError, closest_key

#: The training system's own sections, in every run's config.
SYSTEM_SECTIONS = ("app", "env", "eval")


def run_game(app) -> games.Game:
    """The game a run ([app]) plays: its platform version's."""
    return games.of_platform(run_platform(app))


def run_agent(app) -> ProjectAlgorithm | None:
    """The project's agent a run ([app]) trains; None for a Kaiwu code package (app.package)."""
    return None if app.package else find_project_algorithm(app.app, app.algo)


def run_sections(agent: ProjectAlgorithm | None) -> tuple[str, ...]:
    """The sections of a run that trains `agent` (None: a package, which reads its own settings)."""
    return SYSTEM_SECTIONS + (agent.sections if agent is not None else ())


def every_section() -> tuple[str, ...]:
    """Every section some run reads: the system's, then each agent's (for --set's section check)."""
    names = list(SYSTEM_SECTIONS)
    for agent in PROJECT_ALGORITHMS.values():
        names += [name for name in agent.sections if name not in names]
    return tuple(names)


def _listed(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def refused_section(name: str, app, game: games.Game, agent: ProjectAlgorithm | None) -> ConfigError:
    """The error for a section the run does not read: whose it is (another game's, another of the
    game's agents', the project's agents' in a package run), or unknown."""
    ours = run_sections(agent)
    readers = [other for other in PROJECT_ALGORITHMS.values() if name in other.sections]
    listed = f"this run's sections: {', '.join(ours)}"
    if not readers:
        return ConfigError(f"unknown section [{name}]{closest_key(name, list(ours)) or closest_key(name, list(every_section()))}; "
                           f"{listed}")
    if agent is None:
        return ConfigError(f"[{name}] is read by the project's agents ({_listed(sorted({r.game for r in readers}))}); this "
                           f"run trains the Kaiwu code package {app.package}, which reads its own settings ({listed})")
    their_games = [g for g in games.GAMES if any(r.game == g for r in readers)]
    if game.name not in their_games:
        return ConfigError(f"[{name}] is {_listed(their_games)}'s; this run plays {game.name} ({listed})")
    algos = [r.algo for r in readers if r.game == game.name]
    return ConfigError(f"[{name}] is {game.name}'s {_listed(algos)}'s; this run trains its {agent.algo} ({listed})")


def env_keys(game: games.Game, shared: tuple[str, ...]) -> tuple[str, ...]:
    """The [env] keys of a run of `game`: the `shared` map keys, then the game's rule keys."""
    return shared + tuple(f.name for f in dataclasses.fields(game.env_rules))


def refused_env_key(key: str, game: games.Game, shared: tuple[str, ...], path: str = "env") -> ConfigError:
    """The error for an [env] key a run of `game` does not read: a key renamed since (naming the
    new one), another game's rule, or unknown."""
    for other in games.GAMES.values():
        if key in other.renamed_env_keys:
            return ConfigError(f"[{path}] {key} is now [{path}] {other.renamed_env_keys[key]}: rename it "
                               f"(one key names the folder of official maps in every game)")
    ours = env_keys(game, shared)
    owners = [other.name for other in games.GAMES.values()
              if key in {f.name for f in dataclasses.fields(other.env_rules)}]
    if owners:
        return ConfigError(f"[{path}] {key} is {_listed(owners)}'s rule; this run plays {game.name} "
                           f"(its [{path}] keys: {', '.join(ours)})")
    return ConfigError(f"unknown key '{path}.{key}'{closest_key(key, list(ours))}; allowed in [{path}] for "
                       f"{game.name}: {', '.join(ours)}")


def _record_game(app: dict) -> games.Game | None:
    """The game a run's record plays: its package's (when the package is still there), else its app's."""
    if app.get("package"):
        try:
            return games.of_platform(platforms.of_package(app["package"], app.get("kaiwu_version", platforms.AUTO)))
        except (ConfigError, OSError, ValueError):
            pass
    return games.GAMES.get(app.get("app", PROJECT_DEFAULT.game))


def current_record(tree: dict, shared_env_keys: tuple[str, ...]) -> dict:
    """A run's effective config (`tree`, as its file holds it) as this release reads it: the agent
    by this release's names (an earlier release's "ppo_v2" is back_to_the_realm_v2's "ppo"), the
    renamed [env] keys of its game under their new names (gorge_maps -> maps_dir), and what the
    run did not read left out (an earlier release wrote every game's sections and [env] keys)."""
    app = tree.get("app")
    if not isinstance(app, dict):
        return tree
    if not app.get("package") and "algo" in app:
        app["app"], app["algo"] = current_name(app.get("app", PROJECT_DEFAULT.game), app["algo"])
    game = _record_game(app)
    if game is None:
        return tree  # not a game of this release: load_config says what is wrong with it
    agent = None if app.get("package") else find_project_algorithm(app.get("app", game.name),
                                                                    app.get("algo", PROJECT_DEFAULT.algo))
    kept = {name: value for name, value in tree.items() if name in run_sections(agent)}
    env = kept.get("env")
    if isinstance(env, dict):
        for old, new in game.renamed_env_keys.items():
            if old in env:
                env.setdefault(new, env.pop(old))
        ours = env_keys(game, shared_env_keys)
        kept["env"] = {key: value for key, value in env.items() if key in ours}
    return kept
