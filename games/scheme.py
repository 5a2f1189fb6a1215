"""The game scheme: where every piece of a game lives. Each layer has one folder (or one file) of
the game's name, with the same file names inside, so a newcomer finds any game's piece where they
found another's; a layer's root holds mechanisms only. docs/08-adding-a-game.md is this table as a
checklist; tests/test_game_scheme.py holds every registered game to it and fails when a module
outside the scheme carries a game's name. `Game.project_agents`, `reward_episodes` and
`feature_layout` are read from here, never declared twice."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Place:
    """One file of a game: its path ({game}, {algo} filled in) and what it holds."""

    path: str
    holds: str

    def of(self, game: str, algo: str = "") -> str:
        return self.path.format(game=game, algo=algo)


#: Every game: its simulator, its object, its evaluation side, its config and its page.
GAME_FILES = (
    Place("realm/{game}/__init__.py", "the game's public names, one line on how make_env builds it"),
    Place("realm/{game}/constants.py", "the game's numbers; every simulator choice marked"),
    Place("realm/{game}/env.py", "the env in its platform's API: PROTOCOL, GAME, PROTOCOL_RULES, MAP_SOURCE, "
                                 "from_source(source, *, seed=None, **rules)"),
    Place("realm/{game}/maps.py", "the map type and the official map files' reader"),
    Place("realm/{game}/generator.py", "seeded maps of the official maps' family, the embedded default"),
    Place("realm/{game}/usr_conf.py", "an episode's settings checked (the key named) and resolved"),
    Place("realm/{game}/reference.py", "the full-information reference policy every score is compared with"),
    Place("realm/{game}/presets.py", "the named evaluation settings (usr_conf by name)"),
    Place("realm/{game}/render.py", "pictures: the map with an episode on it, the hero's view"),
    Place("realm/{game}/gym_env.py", "the gymnasium env over make_env"),
    Place("games/{game}.py", "the Game object: presets, evaluation episodes and env, [env] rule keys, algorithms"),
    Place("evaluation/{game}.py", "AgentPolicy, ReferencePolicy, play_and_draw, recorded_world, recorded_state"),
    Place("conf/{game}.toml", "the game's run config: its own sections, each key documented"),
    Place("docs/games/{game}.md", "the rules as simulated: sources, choices, every unknown as an option"),
)

#: A game the project trains agents for (Game.algorithms not empty): its features and episodes once...
AGENT_GAME_FILES = (
    Place("feature/{game}/__init__.py", "what the game's package code holds"),
    Place("feature/{game}/constants.py", "the numbers the features read (the package imports no simulator)"),
    Place("feature/{game}/layout.py", "the model's input as tables of feature.tables rows (MAP_LAYOUT)"),
    Place("feature/{game}/observation.py", "observation_process: the platform's observation to ObsData"),
    Place("feature/{game}/reward.py", "the reward terms as a table of feature.terms.Term"),
    Place("feature/{game}/curriculum.py", "the episodes' settings a training run draws"),
    Place("agent/{game}/__init__.py", "the game's agents"),
    Place("episodes/{game}/__init__.py", "the game's episodes and workflows"),
    Place("episodes/{game}/episodes.py", "game_episodes(settings): the game's part of episodes.training"),
)

#: ...and four modules per algorithm (the package's config, definition, agent, workflow).
ALGORITHM_FILES = {
    "config": Place("agent/{game}/{algo}_config.py", "the platform's Config and the sections it reads (Settings)"),
    "definition": Place("feature/{game}/{algo}_definition.py", "the data classes and protocol functions"),
    "agent": Place("agent/{game}/{algo}_agent.py", "the Agent class"),
    "workflow": Place("episodes/{game}/{algo}_workflow.py", "the training episode loop (workflow)"),
}

#: The layers where a game has a folder of its name.
GAME_FOLDERS = ("realm", "feature", "agent", "episodes", "tools")
#: The layers where a game has one module of its name.
GAME_MODULES = ("games", "evaluation", "tasks")

#: The existing files a new game edits: one registration line each.
REGISTRATIONS = (
    Place("games/__init__.py", "one import and one entry in GAMES"),
    Place("realm/__init__.py", "one import and one entry in ENVS (make_env builds it by PROTOCOL)"),
    Place("realm/gym_ids.py", "its gymnasium id in GYM_ENVS, keyed by the env's GAME"),
    Place("docs/README.md", "a row for docs/games/{game}.md"),
)


def module(place: Place, game: str, algo: str = "") -> str:
    """A place's dotted module name."""
    return place.of(game, algo).removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def agent_modules(game: str, algo: str) -> dict[str, str]:
    """The four dotted modules of the project's agent `algo` for `game`."""
    return {part: module(place, game, algo) for part, place in ALGORITHM_FILES.items()}


def required_files(game: str, algorithms: tuple[str, ...]) -> list[Place]:
    """Every file the scheme asks of `game` (with the project's agents `algorithms`), paths filled in."""
    places = [Place(p.of(game), p.holds) for p in GAME_FILES]
    if algorithms:
        places += [Place(p.of(game), p.holds) for p in AGENT_GAME_FILES]
        places += [Place(p.of(game, algo), p.holds) for algo in algorithms for p in ALGORITHM_FILES.values()]
    return places
