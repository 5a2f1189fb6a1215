"""One TOML file -> one validated `AppConfig`.

Sections: the training system's own, [app] (Kaiwu's framework keys from configure_app.toml,
same names and meaning), [env] and [eval] (the run's evaluator), and those the project's packages declare (each algorithm's
`Settings` in its config module, each game's `project_agents`: [model] [reward] [curriculum] [ppo] [dqn],
[reward_v2] [curriculum_v2], [reward_gorge] [curriculum_gorge] today); each section is validated by the class that declares it. A file may pull others in with
`include = ["ppo.toml", ...]` (paths relative to it; the including file wins).
Command-line overrides: `--set ppo.learning_rate=1e-4` (the value is read as a TOML literal,
so `--set env.map_file="maps/m.json"` and `--set model.channels=[16,32]` work).
"""
from __future__ import annotations

import dataclasses
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import toml

from workflow import platforms

from workflow.checkpoints import ckpt_files
from workflow.platforms.project import PROJECT_ALGORITHMS, project_algorithm
from workflow.schema import ConfigError, build, closest_key, to_dict

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = REPO_ROOT / "conf" / "configure_app.toml"
MAX_PROCESSES_OR_ENVS = 256  # processes, envs per process, threads: beyond it a typo, not a machine
MAX_STEPS = 10**12  # train or env steps: beyond any run, and exact as a float and in JSON
MAX_REPLAY_CAPACITY = 10**8  # samples; whether this machine's memory holds them is checked at start (launcher)
MAX_KEPT = 1_000_000  # checkpoints kept, restarts allowed

#: Upper bounds of [app]'s integer sizes (what the replay server, torch and a run's counters hold):
#: key -> (at most, what it counts).
APP_SIZE_LIMITS: dict[str, tuple[int, str]] = {
    "replay_buffer_capacity": (MAX_REPLAY_CAPACITY, "samples one replay table holds"),
    "priority_beta_steps": (MAX_STEPS, "train steps"),
    "dump_model_freq": (MAX_STEPS, "train steps"),
    "model_pool_publish_freq": (MAX_STEPS, "train steps"),
    "max_train_steps": (MAX_STEPS, "train steps"),
    "max_env_steps": (MAX_STEPS, "env steps"),
    "max_ckpt_keep": (MAX_KEPT, "checkpoints"),
    "user_save_mode_max_count": (MAX_KEPT, "checkpoints"),
    "aisrv_restart_max": (MAX_KEPT, "restarts"),
    "torch_num_threads": (MAX_PROCESSES_OR_ENVS, "threads"),
    "aisrv_torch_num_threads": (MAX_PROCESSES_OR_ENVS, "threads"),
    "aisrv_num": (MAX_PROCESSES_OR_ENVS, "processes this toolkit runs on one machine; several machines: --role aisrv"),
    "envs_per_aisrv": (MAX_PROCESSES_OR_ENVS, "envs one process runs; several machines: --role aisrv"),
}

#: The [app] defaults under a Kaiwu code package's own configure_app.toml (the platform's defaults).
PACKAGE_DEFAULTS = REPO_ROOT / "conf" / "kaiwu_package.toml"

#: Keys of Kaiwu's configure_app.toml that only the platform's own servers read. They are accepted
#: in [app] (so a package's file loads unchanged), kept for the package's CONFIG, and unused here.
PLATFORM_ONLY_KEYS: dict[str, str] = {
    "sample_dim": "the learner takes the row width from the package's Config.SAMPLE_DIM",
    "predict_batch_size": "each aisrv predicts in its own process",
    "send_sample_size": "samples go to the replay server as the workflow hands them over",
    "model_file_load_per_minutes": "aisrv pick up models every model_file_sync_per_minutes",
    "modelpool_max_save_model_count": "the model pool holds the newest model",
    "aisrv_connect_to_kaiwu_env_count": "app.aisrv_num processes each run one workflow",
    "predict_local_or_remote": "prediction is local to each aisrv",
    "wrapper_type": "the training system is always the platform's remote mode",
    "use_which_deep_learning_framework": "the package brings its own framework",
    "run_mode": "./train.sh trains; tools/evaluate.py evaluates",
    "eval_model_dir": "tools/evaluate.py takes --ckpt",
    "eval_model_id": "tools/evaluate.py takes --ckpt",
    "copy_dir": "checkpoints are the package's own files",
    "self_play": "one hero, no self-play",
    "set_name": "platform bookkeeping",
    "self_play_set_name": "platform bookkeeping",
    "selfplay_app_conf": "platform bookkeeping",
    "noselfplay_app_conf": "platform bookkeeping",
    "algo_conf": "the algorithm folder is <package>/<algo>/",
    "rainbow_env_name": "platform bookkeeping",
    "framework_integration_patterns": "platform bookkeeping",
    "aisrv_framework": "platform bookkeeping",
    "log_dir": "logs go to <run>/log",
    "level": "app.log_level",
    "tensorflow_log_level": "no TensorFlow in the agent path",
    "actor_addrs": "--role aisrv --learner HOST:PORT",
    "learner_addrs": "--role aisrv --learner HOST:PORT",
    "reverb_error_buffer": "the replay sizes SampleToInsertRatio's error buffer from the batch and the capacity, "
                           "so that neither the aisrv nor the learner waits forever",
}

SAMPLERS = ("reverb.selectors.Uniform", "reverb.selectors.Fifo", "reverb.selectors.Prioritized",
            "reverb.selectors.Lifo", "reverb.selectors.MaxHeap", "reverb.selectors.MinHeap")
REMOVERS = ("reverb.selectors.Fifo", "reverb.selectors.Lifo", "reverb.selectors.Uniform",
            "reverb.selectors.MinHeap", "reverb.selectors.MaxHeap")


@dataclass
class EnvConfig:
    """Which map and which ▶ rules the simulator uses (SPEC.md)."""

    #: the keys that are back_to_the_realm_v2 rule options (realm.v2.env.OPTIONS), reveal_end_pos aside
    V2_RULES = ("step_length", "buff_step_length", "buff_duration", "distance_bands", "talent_when_cooling",
                "taken_chest_status", "treasure_count_reads", "view_size")
    #: the keys that are gorge_chase options (realm.gorge_chase.options.OPTIONS, the same names)
    GORGE_RULES = ("monster_distance", "map_order", "random_values_in_env_info", "diagonal_rule", "capture_radius",
                   "hero_move_bonus", "monster_speed_bonus", "gorge_extra_info")

    map_file: str | None = None  # official map json; unset = the generated map of map_seed
    positions_file: str | None = None  # position_pool.json that goes with map_file
    map_seed: int = 0
    # a flash whose target is blocked: "fail" (2024 rule: the hero stays) | "nearest" (2025 rule:
    # the nearest passable cell) | "auto" (the rule of the protocol the run speaks)
    flash_blocked: Literal["auto", "fail", "nearest"] = "auto"
    step_jitter: bool = False
    # 2025 packages' map_info window: "hero" (centred on the hero's cell, as the official guide
    # defines it) | "platform" (what the platform's env adapter serves: centred on the x/z-swapped cell)
    map_window: Literal["hero", "platform"] = "hero"
    # back_to_the_realm_v2 packages: the map_data/<name>.json's obstacles json (with map_file)
    obstacles_file: str | None = None
    # back_to_the_realm_v2: when extra_info's game_info.end_pos holds the end: "always" (as the
    # training server does) | "found" (once in view, and on the last frame) | "at_end" (last frame only)
    reveal_end_pos: Literal["always", "found", "at_end"] = "always"
    # back_to_the_realm_v2: a folder of official map files, <map_name>.json beside
    # <map_name>_obstacles.json, where an episode's map_name finds its map; unset: map_file or generated
    v2_maps: str | None = None
    # gorge_chase packages: a folder of official maps (gorge_chase_map_<id>.json or map_<id>.txt);
    # unset: the generated maps of map_seed (map id i is a map of its own)
    gorge_maps: str | None = None
    # gorge_chase: a bad usr_conf, or a step after the episode's end: "env_obs" (answered as the
    # platform answers: observation None, extra_info.result_code < 0, truncated True; the message on
    # stderr) | "raise" (GorgeUsrConfError / EpisodeOverError stops the workflow)
    gorge_errors: Literal["env_obs", "raise"] = "env_obs"
    # back_to_the_realm_v2's open rules (docs/V2_RULES.md, realm.v2.env.OPTIONS: ranges and meaning)
    step_length: int = 1  # cells per plain step: 1 | 2
    buff_step_length: int = 2  # cells per step while the buff lasts: step_length..4
    buff_duration: int = 50  # steps the buff lasts: 1..2000
    distance_bands: Literal["uniform20", "v1"] = "uniform20"  # relative_pos.l2_distance thresholds
    talent_when_cooling: Literal["move", "stay"] = "move"  # a talent action while cooling down
    taken_chest_status: Literal["stays_0", "taken_frame"] = "stays_0"  # how long a taken chest reads status 0
    treasure_count_reads: Literal["chests", "chests_plus_2"] = "chests"  # what game_info.treasure_count counts
    view_size: int = 11  # map_info's rows and values around the hero: an odd int in 11..51
    # gorge_chase's open rules (docs/GORGE_RULES.md, realm.gorge_chase.options.OPTIONS: ranges and meaning)
    monster_distance: str = "bfs4"  # the monsters' distance to the hero: bfs4 | bfs8 | chebyshev | manhattan
    map_order: str = "cycle"  # map_random = false: cycle | first
    random_values_in_env_info: str = "resolved"  # a -1 config value in env_info: resolved | raw
    diagonal_rule: str = "one_free"  # a diagonal step's corner cells: one_free | both_free | target_only
    capture_radius: int = 1  # caught within this Chebyshev distance: 0..2
    hero_move_bonus: int = 0  # cells added to every hero move: 0..3
    monster_speed_bonus: int = 0  # added to the monsters' base speed 1: 0..3
    # what env_obs's extra_info holds: "full" (frame_state, map_id, result_code, result_message) |
    # "withheld" (result_code and result_message only)
    gorge_extra_info: str = "full"
    # each episode draws the game's open rules from their readings (back_to_the_realm_v2: every one
    # above but view_size, realm.v2.env.CANDIDATES; gorge_chase: realm.gorge_chase.options.CANDIDATES),
    # ignoring their values
    randomize_unknown_rules: bool = False

    def validate(self):
        self.check_v2_rules()
        self.check_gorge_rules()
        if self.v2_maps is not None and not Path(self.v2_maps).is_dir():
            raise ValueError(f"v2_maps: not a folder: {self.v2_maps} (a folder of official <map_name>.json map files)")
        if self.obstacles_file is not None:
            if self.map_file is None or self.positions_file is not None:
                raise ValueError("obstacles_file goes with map_file (a back_to_the_realm_v2 map_data/<name>.json), "
                                 "without positions_file")
        elif (self.map_file is None) != (self.positions_file is None):
            raise ValueError("map_file and positions_file go together: set both (official map) or neither "
                             "(generated map of map_seed); a back_to_the_realm_v2 map: map_file and obstacles_file")
        for key in ("map_file", "positions_file", "obstacles_file"):
            path = getattr(self, key)
            if path is not None and not Path(path).is_file():
                raise ValueError(f"{key}: file not found: {path}")
        if self.gorge_maps is not None and not Path(self.gorge_maps).is_dir():
            raise ValueError(f"gorge_maps: not a folder: {self.gorge_maps} (a folder of gorge_chase_map_<id>.json)")

    def check_v2_rules(self) -> None:
        """The v2 rule options in the simulator's ranges (ValueError naming the key)."""
        from realm.v2.env import OPTIONS, check_option

        for name in self.V2_RULES:
            check_option(name, getattr(self, name))
        if self.buff_step_length < self.step_length:
            raise ValueError(f"buff_step_length = {self.buff_step_length} is invalid: allowed "
                             f"{self.step_length}..{max(OPTIONS['buff_step_length'][1])} (at least step_length)")

    def check_gorge_rules(self) -> None:
        """The gorge_chase options in the simulator's ranges (ValueError naming the key)."""
        from realm.gorge_chase.options import check_option

        for name in self.GORGE_RULES:
            check_option(name, getattr(self, name))

    def make_kwargs(self, platform: platforms.PlatformVersion = platforms.PROJECT) -> dict:
        """Arguments for realm.make_env: an env speaking the protocol of `platform` (the hosted
        package's version)."""
        kwargs = dict(map_file=self.map_file, positions_file=self.positions_file, map_seed=self.map_seed,
                      flash_blocked=self.flash_rule(platform), step_jitter=self.step_jitter)
        kwargs.update(platform.env_kwargs(self))
        return kwargs

    def flash_rule(self, platform: platforms.PlatformVersion = platforms.PROJECT) -> str:
        """flash_blocked with "auto" resolved: each platform version's own rule (2024 "fail", 2025
        "nearest", as the 2025 guide states)."""
        if self.flash_blocked != "auto":
            return self.flash_blocked
        return platform.flash_rule


@dataclass
class EvalConfig:
    """[eval]: the run's evaluator (evaluation.evaluator): the greedy policy (the package's own
    `exploit`) of the run's checkpoints played on fixed episodes beside the route planner, the best
    checkpoint by that score kept, and an optional stop at a target. Off when both cadences are 0."""

    every_train_steps: int = 0  # evaluate the newest checkpoint once it is this many train steps past the last evaluated; 0 = not by steps
    every_minutes: float = 0.0  # ... or once this many minutes passed since the last evaluation began; 0 = not by time
    episodes: int = 10  # episodes per evaluation (the planner plays the same ones, once per setting)
    preset: str = ""  # a preset of the game the run's packages play (games: realm.presets, realm.v2.presets); empty: its platform version's
    usr_conf: dict[str, Any] = field(default_factory=dict)  # the episodes' usr_conf instead of a preset (empty: the preset)
    seed: int = 0  # the first episode's seed (then +1 each): the same episodes at every evaluation
    stop_value: float | None = None  # end the run cleanly once an evaluation reaches it (stop_metric); unset: never
    stop_metric: Literal["score", "ratio"] = "ratio"  # "score": the mean total score | "ratio": that / the planner's mean
    workers: int = 1  # processes that play the episodes (1: the evaluator itself)

    @property
    def enabled(self) -> bool:
        return self.every_train_steps > 0 or self.every_minutes > 0

    def episode_usr_conf(self, platform) -> tuple[str, dict]:
        """(label, usr_conf) of the evaluation episodes for a platform version's packages: usr_conf
        when given, else the preset of its game (its eval_preset when empty). ValueError naming
        the presets for an unknown one."""
        import copy

        if self.usr_conf:
            return "usr_conf", copy.deepcopy(self.usr_conf)
        import games

        name = self.preset or platform.eval_preset
        try:
            return name, games.of_platform(platform).preset(name)
        except ValueError as e:
            raise ValueError(f"eval.preset: {e}") from None

    @staticmethod
    def env_kwargs(env: EnvConfig, platform) -> dict:
        """realm.make_env arguments of the evaluation env: the run's map and rules, in the protocol
        of the game's evaluation (games.Game.env_kwargs)."""
        import games

        return games.of_platform(platform).env_kwargs(env, platform)

    def validate(self):
        for key in ("every_train_steps", "every_minutes", "seed"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} must be >= 0, got {getattr(self, key)}")
        if self.every_train_steps > MAX_STEPS:
            raise ValueError(f"every_train_steps = {self.every_train_steps} is too large: at most {MAX_STEPS}")
        if not 1 <= self.episodes <= 100_000:
            raise ValueError(f"episodes must be in 1..100000, got {self.episodes}")
        if not 1 <= self.workers <= MAX_PROCESSES_OR_ENVS:
            raise ValueError(f"workers must be in 1..{MAX_PROCESSES_OR_ENVS}, got {self.workers}")
        if self.stop_value is not None and not self.enabled:
            raise ValueError("stop_value needs evaluations: set every_train_steps or every_minutes > 0")


@dataclass
class FrameworkConfig:
    """[app]: Kaiwu's framework keys (configure_app.toml, same names and meaning), plus this
    toolkit's process, run and observability keys. conf/configure_app.toml documents each one."""

    app: str = "back_to_the_realm"
    algo: str = "ppo"
    package: str = ""  # a Kaiwu code package directory (./train.sh --package); empty = the project's agent
    kaiwu_version: Literal[(platforms.AUTO, *platforms.NAMES)] = platforms.AUTO  # the package's platform version; auto: detected
    # --- replay buffer (reverb) ---
    # samples are the package's SampleData rows: PPO's are segments of up to ppo.num_steps frames
    replay_buffer_capacity: int = 32  # samples the sample table holds (one item each; on-policy: queue bound)
    preload_ratio: float = 1.0  # off-policy: training starts once capacity / preload_ratio samples are in
    train_batch_size: int = 16  # samples per train step (one Agent.learn call)
    production_consume_ratio: float = 1.0  # consumed / produced: times each sample is trained on on average
    reverb_remover: str = "reverb.selectors.Fifo"
    reverb_sampler: str = "reverb.selectors.Fifo"
    # 15.0.1's names for the learner's trigger; set, they decide learner_train_by_while_true and
    # production_consume_ratio: "MinSize" = train whenever a batch is there, "SampleToInsertRatio"
    # = each sample trained on reverb_samples_per_insert times on average
    reverb_rate_limiter: Literal["", "MinSize", "SampleToInsertRatio"] = ""
    reverb_samples_per_insert: float = 0.0  # with "SampleToInsertRatio": > 0
    # --- prioritized replay (reverb_sampler = "reverb.selectors.Prioritized") ---
    priority_alpha: float = 0.6  # P(i) = p_i^alpha / sum_k p_k^alpha
    priority_beta: float = 0.4  # importance-sampling exponent at the start
    priority_beta_steps: int = 0  # train steps over which beta anneals linearly to 1; 0 = constant
    priority_epsilon: float = 1e-6  # added to |priority| when Agent.learn returns new ones
    reverb_port: int = 0  # 0 = any free port; set a fixed one when aisrv join from other machines
    sign_replay: bool = True  # HMAC-sign weights, replay items and telemetry (workflow.transport.signing)
    shared_secret: str = ""  # the signing key across machines (or REALM_SHARED_SECRET); one machine: generated per run
    rate_limiter_timeout_ms: int = 1000  # longest single wait on the replay before a process checks in
    # --- learner ---
    learner_train_by_while_true: bool = True
    learner_train_sleep_seconds: float = 0.0
    algorithm_on_policy_or_off_policy: Literal["on-policy", "off-policy"] = "on-policy"
    dump_model_freq: int = 50  # train steps between checkpoints
    ckpt_write_retry_seconds: float = 5.0  # a failed checkpoint write is retried after this; doubles per failure (<= 300 s)
    ckpt_write_max_failures: int = 5  # checkpoint writes failed in a row that end the run
    max_nonfinite_train_steps: int = 100  # train steps in a row whose learn left NaN/inf that end the run; 0 = never
    model_pool_publish_freq: int = 1  # train steps between publications to the model pool; 0 = checkpoints only
    device: str = "cpu"  # the learner's torch device: "cpu", "cuda" or "cuda:N"
    precision: Literal["auto", "fp32", "bf16"] = "fp32"  # the learner's update (workflow.precision)
    max_ckpt_keep: int = 5  # newest checkpoints kept (plus the best by recent score)
    keep_best_ckpt: bool = True
    user_save_mode_max_count: int = 20  # agent.save_model calls kept in the user dir; 0 = all (the platform's meaning)
    preload_model: bool = False
    preload_model_dir: str = ""
    preload_model_id: int | str = "latest"
    torch_num_threads: int = 2  # the learner's torch threads
    aisrv_torch_num_threads: int = 1  # each aisrv's (batched inference over a few envs gains little from more)
    # --- model pool ---
    model_file_sync_per_minutes: float = 0.0  # Kaiwu's key; 0 = use the seconds variant
    model_file_sync_per_seconds: float = 2.0
    # --- processes ---
    aisrv_num: int | str = 2  # "auto" (with --ray): one aisrv per realm_aisrv slot of the cluster
    envs_per_aisrv: int = 4
    heartbeat_timeout_seconds: float = 60.0
    aisrv_restart_max: int = 5  # restarts per aisrv slot before it is given up
    aisrv_restart_backoff_seconds: float = 2.0  # first restart delay; doubles per restart, at most 60 s
    # --- run ---
    run_dir: str = "runs"
    run_name: str = ""  # empty: a new run is named by its start time; --resume takes the newest run
    ckpt_dir: str = ""  # empty: <run_dir>/<run_name>/ckpt
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    metrics_interval_seconds: float = 10.0  # learner statistics are averaged over this window
    seed: int = 0
    max_env_steps: int = 0  # 0 = no limit
    max_train_steps: int = 0
    max_minutes: float = 0.0

    def __post_init__(self):
        """15.0.1's rate-limiter keys, when set, as the older keys the replay and the learner read."""
        if self.reverb_rate_limiter == "MinSize":
            self.learner_train_by_while_true = True
        elif self.reverb_rate_limiter == "SampleToInsertRatio":
            self.learner_train_by_while_true = False
            if self.reverb_samples_per_insert > 0:
                self.production_consume_ratio = self.reverb_samples_per_insert

    def validate(self):
        if self.reverb_rate_limiter == "SampleToInsertRatio" and self.reverb_samples_per_insert <= 0:
            raise ValueError(f"reverb_samples_per_insert = {self.reverb_samples_per_insert}: with reverb_rate_limiter = "
                             "\"SampleToInsertRatio\" it must be > 0 (times each sample is trained on)")
        project = None if self.package else project_algorithm(self.app, self.algo)  # ValueError: what to set
        if project is not None and self.kaiwu_version != platforms.AUTO and \
                self.kaiwu_version != project.layout.kaiwu_version:
            hosted = project.layout.kaiwu_version
            raise ValueError(f"kaiwu_version = \"{self.kaiwu_version}\": the project's {self.app} {self.algo} speaks the "
                             f"{hosted} protocol here; a {self.kaiwu_version} package trains with "
                             f"./train.sh --package DIR (tools/export_kaiwu.py --kaiwu-version {self.kaiwu_version} "
                             "writes one)")
        if self.replay_buffer_capacity < 1:
            raise ValueError("replay_buffer_capacity must be >= 1")
        if self.preload_ratio < 1:
            raise ValueError("preload_ratio must be >= 1 (training starts at capacity / preload_ratio items)")
        if self.train_batch_size < 1:
            raise ValueError("train_batch_size must be >= 1")
        if self.algorithm_on_policy_or_off_policy == "on-policy" and self.train_batch_size > self.replay_buffer_capacity:
            raise ValueError(f"on-policy: train_batch_size ({self.train_batch_size}) must be <= replay_buffer_capacity "
                             f"({self.replay_buffer_capacity}), the queue a batch is taken from")
        if self.algorithm_on_policy_or_off_policy == "off-policy" and self.min_items_to_train > self.replay_buffer_capacity:
            raise ValueError(f"off-policy: train_batch_size ({self.train_batch_size}) must be <= replay_buffer_capacity "
                             f"({self.replay_buffer_capacity})")
        if self.production_consume_ratio <= 0:
            raise ValueError("production_consume_ratio must be > 0")
        if self.reverb_sampler not in SAMPLERS:
            raise ValueError(f"reverb_sampler: got {self.reverb_sampler!r}, allowed: {', '.join(SAMPLERS)}")
        if self.reverb_remover not in REMOVERS:
            raise ValueError(f"reverb_remover: got {self.reverb_remover!r}, allowed: {', '.join(REMOVERS)}")
        if self.priority_alpha < 0:
            raise ValueError(f"priority_alpha must be >= 0 (0: uniform), got {self.priority_alpha}")
        if not 0 <= self.priority_beta <= 1:
            raise ValueError(f"priority_beta must be in [0, 1], got {self.priority_beta}")
        if self.priority_beta_steps < 0:
            raise ValueError(f"priority_beta_steps must be >= 0 (0: beta stays priority_beta), got {self.priority_beta_steps}")
        if self.priority_epsilon <= 0:
            raise ValueError(f"priority_epsilon must be > 0, got {self.priority_epsilon}")
        if isinstance(self.preload_model_id, str) and self.preload_model_id != "latest":
            raise ValueError(f"preload_model_id: got {self.preload_model_id!r}, allowed: a number or 'latest'")
        if self.preload_model and not self.preload_model_dir:
            raise ValueError("preload_model = true needs preload_model_dir (a directory of model.ckpt-N.pkl)")
        if not 0 <= self.reverb_port <= 65535:
            raise ValueError(f"reverb_port must be in 0..65535, got {self.reverb_port}")
        if not re.fullmatch(r"cpu|cuda(:\d+)?", self.device):
            raise ValueError(f"device: got {self.device!r}, allowed: 'cpu', 'cuda' or 'cuda:N'")
        if isinstance(self.aisrv_num, str) and self.aisrv_num != "auto":
            raise ValueError(f"aisrv_num: got {self.aisrv_num!r}, allowed: a number >= 1, or \"auto\" (with --ray: "
                             "one aisrv per realm_aisrv slot of the cluster)")
        for key in ("dump_model_freq", *(("aisrv_num",) if isinstance(self.aisrv_num, int) else ()), "envs_per_aisrv", "torch_num_threads", "aisrv_torch_num_threads",
                    "max_ckpt_keep", "rate_limiter_timeout_ms", "ckpt_write_max_failures"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1, got {getattr(self, key)}")
        for key in ("heartbeat_timeout_seconds", "metrics_interval_seconds", "ckpt_write_retry_seconds"):
            if getattr(self, key) <= 0:
                raise ValueError(f"{key} must be > 0, got {getattr(self, key)}")
        for key in ("model_pool_publish_freq", "max_env_steps", "max_train_steps", "max_minutes", "model_file_sync_per_minutes", "user_save_mode_max_count",
                    "model_file_sync_per_seconds", "learner_train_sleep_seconds", "aisrv_restart_max",
                    "aisrv_restart_backoff_seconds", "max_nonfinite_train_steps"):
            if getattr(self, key) < 0:
                raise ValueError(f"{key} must be >= 0, got {getattr(self, key)}")
        if not 0 <= self.seed < 2**32:
            raise ValueError(f"seed must be in 0..{2**32 - 1}, got {self.seed}")
        for key, (most, what) in APP_SIZE_LIMITS.items():
            if isinstance(getattr(self, key), int) and getattr(self, key) > most:
                raise ValueError(f"{key} = {getattr(self, key)} is too large: at most {most} ({what})")
        if self.rate_limiter_timeout_ms > self.heartbeat_timeout_seconds * 1000:
            raise ValueError(f"rate_limiter_timeout_ms = {self.rate_limiter_timeout_ms} is too large: at most "
                             f"heartbeat_timeout_seconds × 1000 = {self.heartbeat_timeout_seconds * 1000:.0f} (a process "
                             "waiting longer on the replay misses its heartbeat and is killed as hung)")
        if self.preload_model and not self.package:  # a package's is inside it: the launcher checks it there
            try:
                ckpt_files.find_checkpoint(self.preload_model_dir, self.preload_model_id)
            except (FileNotFoundError, ValueError) as e:
                raise ValueError(f"preload_model_dir / preload_model_id: {e}") from None
        if self.run_name and (Path(self.run_name).name != self.run_name or self.run_name in (".", "..")):
            raise ValueError(f"run_name must be a plain directory name, got {self.run_name!r}")

    @property
    def prioritized(self) -> bool:
        return self.reverb_sampler == "reverb.selectors.Prioritized"

    def priority_beta_at(self, train_step: int) -> float:
        """beta after `train_step` train steps: linear from priority_beta to 1 over priority_beta_steps."""
        if self.priority_beta_steps == 0:
            return self.priority_beta
        return self.priority_beta + (1.0 - self.priority_beta) * min(1.0, train_step / self.priority_beta_steps)

    @property
    def model_sync_seconds(self) -> float:
        """Kaiwu's minutes key wins when set; otherwise the seconds variant."""
        if self.model_file_sync_per_minutes > 0:
            return self.model_file_sync_per_minutes * 60.0
        return self.model_file_sync_per_seconds

    @property
    def min_items_to_train(self) -> int:
        """Kaiwu's preload size: capacity / preload_ratio samples (at least one batch)."""
        return max(self.train_batch_size, int(self.replay_buffer_capacity / self.preload_ratio))


def package_sections() -> dict[str, type]:
    """The TOML sections the project's packages read, by name: the fields of each algorithm's
    `Settings`, in declaration order. A section two packages share ([model], [reward],
    [curriculum]) is one class."""
    sections: dict[str, type] = {}
    for project in PROJECT_ALGORITHMS.values():
        settings = project.settings_class
        for name, cls in typing.get_type_hints(settings).items():
            if name not in project.sections:
                continue
            if sections.setdefault(name, cls) is not cls:
                raise TypeError(f"[{name}] is {sections[name].__name__} for one package and {cls.__name__} "
                                f"for {project.game} {project.algo}: a section shared by packages must be one class")
    return sections


class _AppConfigMethods:
    def to_dict(self) -> dict:
        out = to_dict(self)
        platform = out.pop("platform_keys", {})
        out["app"].update(platform)
        out["app"].update(out.pop("package_keys", {}))
        return {"app": out.pop("app"), "env": out.pop("env"), "eval": out.pop("eval"), **out}  # the system's sections first

    def replace(self, **sections) -> "AppConfig":
        return dataclasses.replace(self, **sections)


def _app_config_class() -> type:
    """AppConfig: [app] and [env], then every package's sections (package_sections), then the
    platform-only [app] keys as the file gave them (PLATFORM_ONLY_KEYS), then the [app] keys a
    hosted package's own configure_app.toml adds for its code (package_own_keys)."""
    fields: list = [("app", FrameworkConfig, field(default_factory=FrameworkConfig)),
                    ("env", EnvConfig, field(default_factory=EnvConfig)),
                    ("eval", EvalConfig, field(default_factory=EvalConfig))]
    fields += [(name, cls, field(default_factory=cls)) for name, cls in package_sections().items()]
    fields.append(("platform_keys", dict[str, Any], field(default_factory=dict, init=False)))
    fields.append(("package_keys", dict[str, Any], field(default_factory=dict, init=False)))
    return dataclasses.make_dataclass("AppConfig", fields, bases=(_AppConfigMethods,), namespace={
        "__module__": __name__, "__qualname__": "AppConfig",
        "__doc__": "The run's config: the training system's sections and the packages' own, each validated."})


AppConfig = _app_config_class()


def _read_toml(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    path = path.resolve()
    if path in seen:
        raise ConfigError(f"{path}: include cycle ({' -> '.join(str(p) for p in seen + (path,))})")
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); "
                          "a TOML config file must be UTF-8") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read it ({e.strerror or e})") from None
    try:
        data = toml.loads(text)
    except toml.TomlDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {duplicate_key(text) or e}") from e
    includes = data.pop("include", [])
    if isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise ConfigError(f"{path}: include = {includes!r}: expected a file name or a list of file names")
    merged: dict = {}
    for inc in includes:
        _deep_merge(merged, _read_toml(path.parent / inc, seen + (path,)))
    _deep_merge(merged, data)
    return merged


def duplicate_key(text: str) -> str | None:
    """'key 'x' in [app] is set twice (lines 3 and 9)' when the text repeats a key in a table."""
    table, seen = "top level", {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.split("#", 1)[0].strip()
        if stripped.startswith("["):
            table = stripped.strip("[]").strip()
            continue
        if "=" in stripped:
            key = stripped.split("=", 1)[0].strip().strip('"')
            if (table, key) in seen:
                return f"key {key!r} in [{table}] is set twice (lines {seen[(table, key)]} and {number})"
            seen[(table, key)] = number
    return None


def _deep_merge(into: dict, other: dict) -> None:
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        else:
            into[key] = value


def parse_override(item: str) -> tuple[list[str], object]:
    """'section.key=value' -> (['section', 'key'], value as TOML literal, or the raw string)."""
    if "=" not in item:
        raise ConfigError(f"--set {item!r}: expected section.key=value")
    key, raw = item.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if len(parts) < 2:
        raise ConfigError(f"--set {item!r}: the key needs its section, e.g. ppo.learning_rate=3e-4")
    try:
        value = toml.loads(f"v = {raw.strip()}")["v"]
    except toml.TomlDecodeError:
        value = raw.strip()
    return parts, value


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    sections = {f.name: f.type for f in dataclasses.fields(AppConfig)}
    for item in overrides:
        parts, value = parse_override(item)
        if parts[0] not in sections:
            raise ConfigError(f"--set {item!r}: unknown section {parts[0]!r}{closest_key(parts[0], list(sections))}; "
                              f"allowed: {', '.join(sections)}")
        node = data
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r}: {p!r} is not a table")
        node[parts[-1]] = value
    return data


def _plain(value):
    """A TOML value as plain dicts and lists (toml's inline-table class does not pickle)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def config_tree(path: str | Path | None = None, overrides: list[str] | tuple[str, ...] | None = None,
                base: str | Path | None = None) -> dict:
    """The TOML tree a run reads, before validation: `base` (if given), the file over it with its
    includes merged, the --set overrides applied. Every reader of a config file (train.sh, the
    evaluation, export, bench and sweep tools) goes through here, so they all see the same
    values. Raises ConfigError naming the file or key."""
    data = _read_toml(Path(base)) if base else {}
    _deep_merge(data, _read_toml(Path(path) if path else DEFAULT_CONFIG))
    apply_overrides(data, list(overrides or []))
    return _plain(data)  # inline tables as plain dicts: the config crosses to spawned processes


@dataclass(frozen=True)
class ConfigSource:
    """A config file and the --set overrides over it: what a tool hands its worker processes so
    that each reads the config exactly as ./train.sh does (`config_tree`, `load_config`)."""

    path: Path
    overrides: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: "str | Path | ConfigSource | None", overrides=()) -> "ConfigSource | None":
        """`config` as a ConfigSource (None stays None unless overrides are given: they then
        apply to conf/configure_app.toml, as ./train.sh --set does)."""
        if isinstance(config, ConfigSource):
            return cls(config.path, config.overrides + tuple(overrides)) if overrides else config
        if config is None:
            return cls(DEFAULT_CONFIG, tuple(overrides)) if overrides else None
        return cls(Path(config), tuple(overrides))

    def tree(self) -> dict:
        return config_tree(self.path, self.overrides)

    def load(self) -> "AppConfig":
        return load_config(self.path, list(self.overrides))

    def __str__(self) -> str:
        return " ".join([str(self.path), *(f"--set {item}" for item in self.overrides)])


def package_own_keys(path: str | Path) -> list[str]:
    """The [app] keys of a Kaiwu code package's own configure_app.toml that neither this toolkit
    nor the platform reads (FrameworkConfig, PLATFORM_ONLY_KEYS): the package's code reads them,
    and the platform ignores what it does not know."""
    app = _read_toml(Path(path)).get("app", {})
    known = {f.name for f in dataclasses.fields(FrameworkConfig)} | set(PLATFORM_ONLY_KEYS)
    return [key for key in app if key not in known] if isinstance(app, dict) else []


def load_config(path: str | Path | None = None, overrides: list[str] | None = None,
                base: str | Path | None = None, own_keys: tuple[str, ...] | list[str] = ()) -> AppConfig:
    """Read `base` (if given) and the file over it, merge includes, apply --set overrides,
    validate. Platform-only [app] keys are set aside in `platform_keys`, and `own_keys` (a
    hosted package's own, package_own_keys) in `package_keys`; any other unknown key raises
    ConfigError naming it."""
    data = config_tree(path, overrides, base)
    app = data.get("app", {})
    platform = {key: _plain(app.pop(key)) for key in list(app) if key in PLATFORM_ONLY_KEYS} if isinstance(app, dict) else {}
    own = {key: app.pop(key) for key in list(app) if key in own_keys} if isinstance(app, dict) else {}
    cfg = build(AppConfig, data)
    cfg.platform_keys = platform
    cfg.package_keys = own
    return cfg


def save_effective_config(cfg: AppConfig, path: str | Path) -> Path:
    """Write the config a run actually used (after includes and overrides), for reproduction;
    the shared secret is never written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = cfg.to_dict()
    if data["app"].get("shared_secret"):
        data["app"]["shared_secret"] = "<set; not written>"
    path.write_text("# Effective configuration of this run (includes and --set overrides applied).\n" + toml.dumps(data))
    return path
