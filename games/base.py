"""What a game answers: the questions on which the Kaiwu games differ, asked by the tools, the
evaluator and the config, never a comparison of game names.

A game brings content (its simulator in realm/, its presets, its reference policy, how its
episodes are drawn and played, its pictures); the mechanisms (the evaluation pool, the
evaluator, tools/evaluate.py and tools/render.py) exist once and ask the `Game`. A new game is
one module beside back_to_the_realm.py, registered in games/__init__.py (docs/08-adding-a-game.md).
"""
from __future__ import annotations

import copy
import importlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from games import scheme


COMPASS = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")  # direction d = d × 45° counter-clockwise from East


@dataclass(frozen=True)
class Episode:
    """One evaluation episode: the usr_conf it plays (random draws made explicit where the game
    draws them up front) and its reset seed; every policy plays exactly these."""

    index: int
    seed: int
    usr_conf: dict


@dataclass(frozen=True)
class ScoreRow:
    """One row of a game's scorecard (tools/scorecard.py): a preset's first `episodes` episodes,
    and the ratio to the reference each value of the game's information switch must reach there
    ("" when the game has no switch)."""

    preset: str
    episodes: int
    targets: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class ScoreGap:
    """The train / held-out gap a scorecard bounds: 1 − (held-out ratio) / (training maps' ratio),
    on two presets of the same settings, at most `most`, for each value of the information switch."""

    train: str
    heldout: str
    episodes: int
    most: float


class Game:
    """One Kaiwu game. Subclasses set the class attributes and implement what differs."""

    name: str = ""  # kaiwu.json's project_code, and the env's GAME
    title: str = ""  # for messages: "Back to the Realm (2024)"
    #: how a checkpoint may act in its evaluation ("greedy": the package's exploit; "sample": predict)
    policy_modes: tuple[str, ...] = ("greedy",)
    #: the [env] key that goes with map_file for an official map ("positions_file", "obstacles_file")
    map_companion: str = ""
    #: whether render draws the whole map step by step (a hero that sees part of the map)
    map_animation: bool = False
    #: how an episode ended, for messages: (won, lost)
    outcomes: tuple[str, str] = ("won", "timed out")
    #: the project's own agents for this game (app.algo): one algorithm name, say "ppo", in every game;
    #: the game (app.app) brings the content. Their modules follow the game scheme
    #: (docs/08-adding-a-game.md): `project_agents` names them.
    algorithms: tuple[str, ...] = ()
    #: algorithm names of earlier releases that are now this game's: old algo -> algo
    renamed_agents: dict[str, str] = {}
    #: the [env] keys of this game's own rules, beside the map keys every game has
    #: (workflow.config.EnvConfig): a dataclass whose fields are written under [env] with the
    #: names the simulator gives them, checked by its `validate()` and handed to realm.make_env by
    #: its `make_kwargs(platform)`; a run reads only its game's
    env_rules: type | None = None
    #: what [env] maps_dir names for this game, for messages ("" when the game has no folder of maps)
    maps_dir_holds: str = ""
    #: [env] keys of earlier releases that are now other keys: old key -> new key (a run's old
    #: effective config is read with them renamed; a config file that sets one is refused, naming the new)
    renamed_env_keys: dict[str, str] = {}
    #: the env rule (a realm.make_env keyword, an [env] key) that withholds the global information
    #: a package is handed, as an evaluation might ("" when the game's env has none): its values
    #: are what tools/evaluate.py --extra-info scores side by side
    info_rule: str = ""
    #: the project's ppo Settings' section of what its features read ("features_gorge"), whose
    #: `global_info` turns on reading what `info_rule` withholds; "" when the game has none
    features_section: str = ""
    #: what that withheld information tells the agent, for the export's statement
    global_info_holds: str = ""
    #: the actions by index, as every Kaiwu grid game numbers them: 8 moves (counter-clockwise from
    #: East), then a flash in each of those directions
    action_names: tuple[str, ...] = COMPASS + tuple(f"flash {d}" for d in COMPASS)
    #: the targets the project's agent is held to, over seeds (tools/scorecard.py); () when none are set
    scorecard: tuple[ScoreRow, ...] = ()
    #: the train / held-out gap those targets bound, or None
    scorecard_gap: ScoreGap | None = None

    # --- where its pieces are: the game scheme (docs/08-adding-a-game.md) ---------------------------

    @property
    def project_agents(self) -> dict[str, dict[str, str]]:
        """algo -> its four modules, dotted (games.scheme.ALGORITHM_FILES): `config` (the platform's
        Config and the TOML sections it reads, as `Settings`), `definition` (data classes and
        protocol functions), `agent` (the Agent class), `workflow` (the training episode loop)."""
        return {algo: scheme.agent_modules(self.name, algo) for algo in self.algorithms}

    @property
    def reward_episodes(self) -> str:
        """The project's shaped reward as its training episodes compute it, "module:factory": the
        factory (episodes/<game>/episodes.py's `game_episodes`) takes a package's settings and gives
        an episodes.training.GameEpisodes (a recorded episode's reward and reward terms,
        evaluation.recorder); "" when the project has no agent for the game."""
        return f"episodes.{self.name}.episodes:game_episodes" if self.algorithms else ""

    @property
    def feature_layout(self) -> str:
        """The module declaring the project's features for this game: its MAP_LAYOUT names the planes."""
        return f"feature.{self.name}.layout" if self.algorithms else ""

    # --- episodes ---------------------------------------------------------------------------------

    def presets(self) -> dict[str, dict]:
        """The game's named evaluation settings: preset name -> usr_conf."""
        raise NotImplementedError

    def preset(self, name: str) -> dict:
        """A fresh copy of the preset `name`'s usr_conf; ValueError listing the game's presets."""
        table = self.presets()
        if name not in table:
            raise ValueError(f"unknown preset {name!r}; available: {', '.join(table)} (the {self.name} game's)")
        return copy.deepcopy(table[name])

    def usr_conf_of_settings_file(self, tree: dict) -> dict:
        """The evaluation usr_conf of a package's own env settings file as parsed (its
        train_env_conf.toml): by default the tree the env's reset takes as it is."""
        return tree

    def check_usr_conf(self, usr_conf: dict) -> None:
        """Raise the game's usr_conf error (a ValueError) when `usr_conf` is not valid for it."""

    def episodes(self, env, usr_conf: dict, count: int, base_seed: int = 0) -> list:
        """`count` evaluation episodes (evaluation.episodes.Episode) of `usr_conf` on `env`, seeds
        base_seed, base_seed+1, ...: every policy plays exactly these."""
        raise NotImplementedError

    # --- the evaluation env -----------------------------------------------------------------------

    def env_kwargs(self, env_config, platform) -> dict:
        """realm.make_env arguments of the env an evaluation of `platform`'s packages plays: the
        run's [env] (workflow.config.EnvConfig), in the protocol the game's evaluation speaks."""
        raise NotImplementedError

    def check_preset_env(self, preset: str, env_kwargs: dict) -> None:
        """ValueError naming the [env] key when preset `preset` needs maps that `env_kwargs` (the
        env's realm.make_env arguments) do not give; by default every preset plays anywhere."""

    def maps_line(self, env, usr_confs: list) -> str | None:
        """One line for the terminal at a run's or an evaluation's start: the maps episodes of
        `usr_confs` play on `env` (None: the game has nothing to say; [] usr_confs: not known)."""
        return None

    # --- policies and pictures: the game's evaluation side, `evaluation/<game>.py` -----------------
    # That module names five things: `AgentPolicy(loaded, name=, mode=)`, a checkpoint's policy, with
    # `play(env, usr_conf, seed)` -> a record (total_score, won, chests, chests_available, steps,
    # buff_count, flash_count, usr_conf, seed, actions); `ReferencePolicy()`, the full-information
    # reference on the same episodes; `play_and_draw(game, env, policy, usr_conf, seed, title,
    # options)`, one episode drawn; `recorded_world(env)` and `recorded_state(env)`, what a recorded
    # episode (evaluation.recording) says of the map and of each step.

    def evaluation(self):
        """The game's evaluation module, imported when first asked: it stands above the game (it
        imports torch and the episode runner), as gymnasium's entry points stand above its registry."""
        return importlib.import_module(f"evaluation.{self.name}")

    def agent_policy(self, loaded, name: str, mode: str):
        self.check_policy_mode(mode)
        return self.evaluation().AgentPolicy(loaded, name=name, mode=mode)

    def reference_policy(self):
        return self.evaluation().ReferencePolicy()

    def recorded_world(self, env) -> dict:
        """What a recorded episode's header says of the world `env` just reset: the map grid and the
        fixed points (evaluation/<game>.py's `recorded_world`)."""
        return self.evaluation().recorded_world(env)

    def recorded_state(self, env) -> dict:
        """What a recorded step says of `env` now: the hero's and monsters' cells, which chests and
        buffs are live (evaluation/<game>.py's `recorded_state`)."""
        return self.evaluation().recorded_state(env)

    def plane_names(self) -> tuple[str, ...]:
        """The names of the project's feature planes for this game (its MAP_LAYOUT), () when it declares none."""
        if not self.feature_layout:
            return ()
        return tuple(channel.name for channel in importlib.import_module(self.feature_layout).MAP_LAYOUT)

    def reward_settings_classes(self) -> tuple[type, ...]:
        """The settings classes of the project's agents of this game (their reward sections are this game's)."""
        return tuple(importlib.import_module(modules["config"]).Settings for modules in self.project_agents.values())

    def shaped_reward(self, settings=None):
        """The project's training episodes of this game (`reward_episodes`) for `settings` when they are
        one of the project's agents' of this game, else for the defaults of its ppo; None when the game
        declares no reward."""
        if not self.reward_episodes:
            return None
        if not isinstance(settings, self.reward_settings_classes()):
            settings = importlib.import_module(self.project_agents["ppo"]["config"]).Settings()
        module, name = self.reward_episodes.split(":")
        return getattr(importlib.import_module(module), name)(settings)

    def check_policy_mode(self, mode: str) -> None:
        if mode not in self.policy_modes:
            raise ValueError(f"policy mode {mode!r}: a {self.name} agent is evaluated with "
                             f"{' | '.join(self.policy_modes)}")

    def information_needed(self, settings) -> str | None:
        """What an agent with `settings` (its algorithm's Settings) reads of the information the
        platform may withhold (`info_rule`): a sentence for the export to state, None when it
        reads none (it plays from what every observation holds)."""
        features = getattr(settings, self.features_section, None) if self.features_section else None
        if not getattr(features, "global_info", False):
            return None
        return (f"reads env_obs's extra_info.frame_state ([{self.features_section}] global_info = true: "
                f"{self.global_info_holds}), which the platform may withhold; without it the agent plays "
                f"from its view alone (score both: tools/evaluate.py --extra-info full,withheld)")

    # --- export: what a registering platform version's package has beside its code --------------

    def train_env_conf(self, settings) -> tuple[dict, str]:
        """(train_env_conf.toml's tree, a comment line on where it comes from) of an exported
        package: the run's curriculum (its `settings`, the algorithm's Settings) as the platform's
        settings. ValueError naming the section when they are not valid for the game."""
        raise NotImplementedError

    #: the module of the platform's own eval and exam workflows, `{algo}` filled in
    eval_workflows: str = "tools.eval.workflow"
    #: extra entries of the app_conf policy (the 2024 game's state and action classes)
    policy_extras: dict = {}

    def registration_files(self, settings, algo: str, folder: str) -> dict[str, tuple[str, dict]]:
        """The files that register `algo` (relative path -> (comment, TOML tree)): its
        train_env_conf.toml, conf/algo_conf_<game>.toml and conf/app_conf_<game>.toml."""
        env_conf, comment = self.train_env_conf(settings)
        return {f"{folder}/conf/train_env_conf.toml": (comment, env_conf),
                f"conf/algo_conf_{self.name}.toml": ("", algo_conf(algo, self.eval_workflows)),
                f"conf/app_conf_{self.name}.toml": ("", {self.name: {
                    "run_handler": "environment.back_to_the_realm_run_handler.NatureRunHandler",
                    "rl_helper": "kaiwudrl.server.aisrv.kaiwu_rl_helper_standard.KaiWuRLStandardHelper",
                    "policies": {"train_one": {"policy_builder": "kaiwudrl.server.aisrv.async_policy.AsyncBuilder",
                                               "algo": algo, **self.policy_extras}}}})}

    def render(self, env, policy, usr_conf: dict, seed: int, title: str, options: "RenderOptions") -> "Rendering":
        """Play one episode with `policy` and draw it: the map with the route (PNG) and, unless
        options.gif is off, the hero's views (GIF frames)."""
        return self.evaluation().play_and_draw(self, env, policy, usr_conf, seed, title, options)


class EngineRules:
    """The [env] rules of a game on the 2026 engine, mixed into its dataclass: the options its
    `options_module` names (OPTIONS, check_option) under their own names, the key `errors_key` of
    how the env answers errors (its type allows "env_obs" | "raise"), randomize_unknown_rules."""

    options_module: ClassVar[str] = ""
    errors_key: ClassVar[str] = ""

    def _options(self):
        return importlib.import_module(self.options_module)

    def validate(self) -> None:
        """Every option in the simulator's readings, the errors mode one of two (ValueError naming the key)."""
        from realm.answered_errors import ERROR_MODES

        options = self._options()
        for name in options.OPTIONS:
            options.check_option(name, getattr(self, name))
        errors = getattr(self, self.errors_key)
        if errors not in ERROR_MODES:
            raise ValueError(f"{self.errors_key} = {errors!r} is invalid: allowed 'env_obs' (answered as the platform "
                             "answers) | 'raise'")

    def make_kwargs(self, platform) -> dict:
        """realm.make_env's rules: the options under their own names, errors, randomize_rules."""
        return {**{name: getattr(self, name) for name in self._options().OPTIONS},
                "errors": getattr(self, self.errors_key), "randomize_rules": self.randomize_unknown_rules}


class EngineGame(Game):
    """A game of the 2026 engine (gorge_chase 15.0.1, robot_vacuum 13.0.1): its simulator's modules
    realm.<name>.presets / .maps / .usr_conf / .constants answer its presets, its usr_confs and
    its maps alike (PRESETS and check_preset_maps, GENERATED_IDS, validate_usr_conf and
    default_usr_conf, OPEN_MAP_IDS); an evaluation episode is (usr_conf, seed) with one map; its
    packages register an algorithm's agent under actor_agent / learner_agent / aisrv_agent and
    name the algorithm to train in app_conf's policy."""

    policy_modes = ("greedy",)  # the platform evaluates exploit
    map_companion = "positions_file"  # refused with a hint: the engine's maps are a folder, [env] maps_dir
    #: the project's ppo Settings' section of the episodes' settings a run draws ("curriculum_gorge"),
    #: the train_env_conf of its exported packages
    curriculum_section: str = ""

    def realm_module(self, part: str):
        """The game's simulator module realm.<name>.<part>, imported when first asked."""
        return importlib.import_module(f"realm.{self.name}.{part}")

    def presets(self) -> dict[str, dict]:
        return self.realm_module("presets").PRESETS

    def check_usr_conf(self, usr_conf: dict) -> None:
        """Keys, types and ranges; map ids as far as a generated source answers them (the
        held-out generated maps are 11..): the env checks them against its own maps at reset."""
        self.realm_module("usr_conf").validate_usr_conf(usr_conf, map_ids=self.realm_module("maps").GENERATED_IDS)

    def episodes(self, env, usr_conf: dict, count: int, base_seed: int = 0) -> list:
        """Episode i plays one map of the usr_conf's list: in turn (map_random false, the
        official order) or drawn from its seed; one reset checks the usr_conf against the env's maps."""
        from realm.episode import checked_reset

        checked_reset(env, usr_conf, seed=base_seed)
        conf = env.conf
        episodes = []
        for i in range(count):
            seed = base_seed + i
            map_id = random.Random(seed).choice(conf.map) if conf.map_random else conf.map[i % len(conf.map)]
            one = copy.deepcopy(usr_conf) if usr_conf else {}
            one.setdefault("env_conf", {})
            one["env_conf"]["map"] = [int(map_id)]
            one["env_conf"]["map_random"] = False
            episodes.append(Episode(i, seed, one))
        return episodes

    def env_kwargs(self, env_config, platform) -> dict:
        return env_config.make_kwargs(platform)

    def check_preset_env(self, preset: str, env_kwargs: dict) -> None:
        """The presets of the official open maps need their files ([env] maps_dir)."""
        self.realm_module("presets").check_preset_maps(preset, env_kwargs.get("maps_folder"))

    def maps_line(self, env, usr_confs: list) -> str | None:
        """The generated maps (map_seed, ids) or the folder's files the usr_confs' map ids play."""
        generated, usr_conf_module = self.realm_module("maps").GENERATED_IDS, self.realm_module("usr_conf")
        ids = sorted({i for usr_conf in usr_confs for i in usr_conf_module.validate_usr_conf(usr_conf, generated).map})
        return env.describe_maps(ids)

    # --- export -----------------------------------------------------------------------------------

    def train_env_conf(self, settings) -> tuple[dict, str]:
        """The run's curriculum section (the project's ppo) with the map ids the platform has (its
        generated-only ids named in the comment), else the official defaults."""
        open_map_ids = self.realm_module("constants").OPEN_MAP_IDS
        usr_confs = self.realm_module("usr_conf")
        curriculum = getattr(settings, self.curriculum_section, None)
        if curriculum is None:
            return (usr_confs.default_usr_conf(),
                    f"# the official defaults (realm.{self.name}.usr_conf.default_usr_conf)\n")
        usr_conf = curriculum.usr_conf()
        comment = f"# the run's [{self.curriculum_section}] (feature/{self.name}/curriculum.py)\n"
        maps = usr_conf["env_conf"]["map"]
        simulator_only = [m for m in maps if m not in open_map_ids]  # generated maps: the platform has 1..10
        if simulator_only:
            kept = [m for m in maps if m in open_map_ids]
            usr_conf["env_conf"]["map"] = kept or usr_confs.default_usr_conf()["env_conf"]["map"]
            comment += (f"# map: the run's ids the platform has; its generated maps {simulator_only} exist only in "
                        f"this project's simulator\n")
        usr_confs.validate_usr_conf(usr_conf)
        return usr_conf, comment

    def registration_files(self, settings, algo: str, folder: str) -> dict[str, tuple[str, dict]]:
        env_conf, comment = self.train_env_conf(settings)
        entry = algo_conf(algo, self.eval_workflows)[algo]
        agent = entry["aisrv_model"]
        algo_table = {algo: {"actor_agent": agent, "learner_agent": agent, "aisrv_agent": agent,
                             "train_workflow": entry["train_workflow"], "eval_workflow": entry["eval_workflow"],
                             "exam_workflow": entry["exam_workflow"]}}
        app_table = {self.name: {"rl_helper": "kaiwudrl.server.aisrv.kaiwu_rl_helper_standard.KaiWuRLStandardHelper",
                                 "policies": {"train_one": {"policy_builder":
                                                            "kaiwudrl.server.aisrv.async_policy.AsyncBuilder",
                                                            "algo": algo}}}}
        return {f"{folder}/conf/train_env_conf.toml": (comment, env_conf),
                f"conf/algo_conf_{self.name}.toml": ("", algo_table),
                f"conf/app_conf_{self.name}.toml": ("", app_table)}


class RenderOptions:
    """What tools/render.py asks of a rendering."""

    def __init__(self, scale: int = 4, view_scale: int = 4, frame_stride: int = 1, max_frames: int = 400,
                 gif: bool = True, map_gif: bool = False):
        self.scale, self.view_scale = scale, view_scale
        self.frame_stride, self.max_frames = frame_stride, max_frames
        self.gif, self.map_gif = gif, map_gif


class Rendering:
    """One drawn episode: the record, the map picture, the view frames and (where the game has
    them) whole-map frames."""

    def __init__(self, record: Any, png, frames: list | None = None, map_frames: list | None = None):
        self.record, self.png = record, png
        self.frames, self.map_frames = frames or [], map_frames or []


def frame_indices(n_steps: int, stride: int, max_frames: int) -> list[int]:
    """Steps drawn into a GIF: every `stride`-th, at most `max_frames` of them."""
    return list(range(0, n_steps, max(1, stride)))[:max(1, max_frames)]


def algo_conf(algo: str, eval_workflows: str) -> dict:
    """conf/algo_conf_<game>.toml: the algorithm registered as the platform names it;
    `eval_workflows` is the module holding the platform's own eval and exam workflows. On 18.0.2
    they exist for dqn, target_dqn and diy only (each imports its
    `agent_<algo>.feature.preprocessor`): upload as `--algo diy` for the platform to score it."""
    folder = f"agent_{algo}"
    workflows = eval_workflows.format(algo=algo)
    return {algo: {
        "actor_model": f"{folder}.agent.Agent",
        "learner_model": f"{folder}.agent.Agent",
        "aisrv_model": f"{folder}.agent.Agent",
        "trainer": "kaiwudrl.server.learner.standard_trainer.StandardTrainer",
        "predictor": "kaiwudrl.server.actor.standard_predictor.StandardPredictor",
        "train_workflow": f"{folder}.workflow.train_workflow.workflow",
        "eval_workflow": f"{workflows}.eval_workflow.workflow",
        "exam_workflow": f"{workflows}.exam_workflow.workflow",
    }}


def env_section(config: Path) -> dict:
    """The [env] table of a run's TOML config ({} when it has none)."""
    import toml

    return toml.loads(Path(config).read_text(encoding="utf-8")).get("env", {})
