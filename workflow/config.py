"""One TOML file -> one validated `AppConfig`, for the one agent a run trains.

Sections: the training system's own, [app] (Kaiwu's framework keys from configure_app.toml,
same names and meaning), [env] (the map keys every game has, and the run's game's own rule keys,
games.<game>'s `env_rules`) and [eval] (the run's evaluator); then the sections of the agent the
run trains (its algorithm's `Settings` in its config module, named by the game's
`project_agents`: [model] [ppo] [reward] [curriculum] for back_to_the_realm's ppo, [reward_gorge]
[curriculum_gorge] [features_gorge] beside [model] [ppo] for gorge_chase's, ...). Each section is
validated once, here, by the class that declares it; a section or [env] key of another game or
agent is refused naming whose it is (workflow.run_sections). A file may pull others in with
`include = ["ppo.toml", ...]` (paths relative to it; the including file wins).
Command-line overrides: `--set ppo.learning_rate=1e-4` (the value is read as a TOML literal,
so `--set env.map_file="maps/m.json"` and `--set model.channels=[16,32]` work).
"""
from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import toml

from workflow import platforms

from workflow.checkpoints import ckpt_files
from workflow.platforms.project import project_algorithm
from workflow.run_sections import (current_record, every_section, refused_env_key, refused_section, run_agent, run_game,
                                   run_sections)
from workflow.schema import ConfigError, build, closest_key, coerce, to_dict

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

#: The first line of a run's effective config (save_effective_config): a file that starts with it
#: is a run's record, read as this release writes it (workflow.run_sections.current_record).
RECORD_HEADER = "# Effective configuration of this run"

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
    """[env]: the maps the simulator plays (the keys every game has, fields here) and the rules of
    the run's game (`rules`: an instance of games.<game>'s `env_rules`, whose keys are written under
    [env] beside these, with the simulator's names). `for_game` reads a table for one game."""

    map_file: str | None = None  # official map json; unset = the generated map of map_seed
    positions_file: str | None = None  # the 2024 game: the position_pool.json that goes with map_file
    obstacles_file: str | None = None  # back_to_the_realm_v2: the map_data/<name>.json's obstacles json
    map_seed: int = 0
    # a folder of the game's official maps an episode's usr_conf picks from (back_to_the_realm_v2:
    # <map_name>.json by map_name; gorge_chase: map files by map id); unset: map_file or generated
    maps_dir: str | None = None
    rules: Any = None  # the game's env_rules: not a key of its own (its fields are [env]'s)

    @classmethod
    def map_keys(cls) -> tuple[str, ...]:
        """The [env] keys every game has (the fields but `rules`)."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "rules")

    @classmethod
    def for_game(cls, game, table: dict | None = None, path: str = "env") -> "EnvConfig":
        """`table` (an [env] section, {} for the defaults) for a run of `game`: the map keys and the
        game's rule keys, each checked; another game's rule, a renamed key or an unknown one is a
        ConfigError naming it (workflow.run_sections.refused_env_key)."""
        if not isinstance(table if table is not None else {}, dict):
            raise ConfigError(f"{path}: expected a table, got {table!r}")
        table = dict(table or {})
        shared, own = cls.map_keys(), tuple(f.name for f in dataclasses.fields(game.env_rules))
        for key in table:
            if key not in shared and key not in own:
                raise refused_env_key(key, game, shared, path)
        env = build(cls, {key: value for key, value in table.items() if key in shared}, path)
        env.rules = build(game.env_rules, {key: value for key, value in table.items() if key in own}, path)
        if env.maps_dir is not None:
            if not game.maps_dir_holds:
                raise ConfigError(f"{path}: maps_dir: {game.name} has no folder of maps (its official map: map_file "
                                  f"with {game.map_companion}); leave maps_dir unset")
            if not Path(env.maps_dir).is_dir():
                raise ConfigError(f"{path}: maps_dir: not a folder: {env.maps_dir} ({game.name}: a folder of "
                                  f"{game.maps_dir_holds})")
        return env

    def validate(self):
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

    def to_table(self) -> dict:
        """The [env] table: the map keys and the game's rule keys side by side (None dropped)."""
        table = {key: getattr(self, key) for key in self.map_keys() if getattr(self, key) is not None}
        return {**table, **(to_dict(self.rules) if self.rules is not None else {})}

    def make_kwargs(self, platform: platforms.PlatformVersion = platforms.PROJECT) -> dict:
        """Arguments for realm.make_env: the maps (maps_dir as its `maps_folder`), the game's rules
        (their `make_kwargs`), in the protocol of `platform` (the hosted package's version)."""
        if self.rules is None:
            raise ValueError("EnvConfig has no rules of its game: build it with EnvConfig.for_game(game, table)")
        kwargs = dict(map_file=self.map_file, positions_file=self.positions_file, map_seed=self.map_seed)
        if self.obstacles_file is not None:
            kwargs["obstacles_file"] = self.obstacles_file
        if self.maps_dir is not None:
            kwargs["maps_folder"] = self.maps_dir
        kwargs.update(self.rules.make_kwargs(platform))
        kwargs.update(platform.env_kwargs(self))
        return kwargs


@dataclass
class EvalConfig:
    """[eval]: the run's evaluator (evaluation.evaluator): the greedy policy (the package's own
    `exploit`) of the run's checkpoints played on fixed episodes beside the route planner, the best
    checkpoint by that score kept, and an optional stop at a target. Off when both cadences are 0."""

    every_train_steps: int = 0  # evaluate the newest checkpoint once it is this many train steps past the last evaluated; 0 = not by steps
    every_minutes: float = 0.0  # ... or once this many minutes passed since the last evaluation began; 0 = not by time
    episodes: int = 10  # episodes per evaluation (the planner plays the same ones, once per setting)
    preset: str = ""  # a preset of the game the run's packages play (games: realm.back_to_the_realm.presets, realm.back_to_the_realm_v2.presets); empty: its platform version's
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


class AppConfig:
    """The run's config, each section validated once, where it is read (load_config): the training
    system's [app], [env] (the map keys and the game's rules) and [eval], and the sections of the one
    agent the run trains, held by that agent's `Settings` (`settings`, handed to its processes as
    they are; `cfg.ppo` reads its [ppo], and assigning one checks it). A Kaiwu code package's run
    (app.package) holds no agent sections: the package reads its own."""

    SYSTEM = ("app", "env", "eval", "settings", "platform_keys", "package_keys")

    def __init__(self, app: FrameworkConfig | None = None, env: EnvConfig | None = None,
                 eval: EvalConfig | None = None, settings=None):
        """The defaults of the run `app` names where a section is not given: its game's [env]
        rules, its agent's settings."""
        app = app if app is not None else FrameworkConfig()
        game, agent = run_game(app), run_agent(app)
        env = env if env is not None else EnvConfig()
        if env.rules is None:
            env = dataclasses.replace(env, rules=game.env_rules())
        elif not isinstance(env.rules, game.env_rules):
            raise ValueError(f"env.rules is a {type(env.rules).__name__}; a {game.name} run's are {game.env_rules.__name__}")
        if settings is None and agent is not None:
            settings = agent.settings_class()
        elif agent is None and settings is not None:
            raise ValueError(f"a package run (app.package = {app.package!r}) holds no agent settings")
        elif agent is not None and not isinstance(settings, agent.settings_class):
            raise ValueError(f"settings is a {type(settings).__name__}; {app.app}'s {app.algo} reads "
                             f"{agent.settings_class.__module__}.Settings")
        object.__setattr__(self, "app", app)
        object.__setattr__(self, "env", env)
        object.__setattr__(self, "eval", eval if eval is not None else EvalConfig())
        object.__setattr__(self, "settings", settings)
        object.__setattr__(self, "platform_keys", {})  # platform-only [app] keys as the file gave them
        object.__setattr__(self, "package_keys", {})  # a hosted package's own [app] keys (package_own_keys)

    @classmethod
    def from_tree(cls, data: dict) -> "AppConfig":
        """A config's merged TOML tree (config_tree), validated: [app] first (it names the game and
        the agent), then each section by the class that declares it; a section or [env] key the
        run does not read is a ConfigError naming whose it is (workflow.run_sections)."""
        app = coerce(data.get("app", {}), FrameworkConfig, "app")
        game, agent = run_game(app), run_agent(app)
        for name in data:
            if name not in run_sections(agent):
                raise refused_section(name, app, game, agent)
        env = EnvConfig.for_game(game, data.get("env", {}))
        evaluation = coerce(data.get("eval", {}), EvalConfig, "eval")
        settings = None
        if agent is not None:
            for name in agent.sections:
                if not isinstance(data.get(name, {}), dict):
                    raise ConfigError(f"{name}: expected a table, got {data[name]!r}")
            settings = build(agent.settings_class, {name: data[name] for name in agent.sections if name in data})
        return cls(app, env, evaluation, settings)

    def sections(self) -> dict[str, Any]:
        """The agent's sections by name ({} in a package run)."""
        if self.settings is None:
            return {}
        return {name: getattr(self.settings, name) for name in self.settings.sections()}

    def __getattr__(self, name: str):
        """An agent section by its name: `cfg.ppo` is `cfg.settings.ppo`."""
        if name.startswith("__") or name in self.SYSTEM:
            raise AttributeError(name)
        sections = self.sections()
        if name in sections:
            return sections[name]
        raise AttributeError(f"[{name}] is no section of this run's config (app = {self.app.app!r}, algo = "
                             f"{self.app.algo!r}): its sections are {', '.join(run_sections(run_agent(self.app)))}")

    def __setattr__(self, name: str, value) -> None:
        """A system section as given (`app` must name the same agent: its sections are built for
        it); an agent section checked (its validate, then the settings' rules across sections)."""
        if name == "app" and _agent_key(value) != _agent_key(self.app):
            raise ValueError(f"app names another agent ({value.app} {value.algo}, package {value.package!r}) than this "
                             "config's: build AppConfig(app=...) for it")
        if name in self.SYSTEM:
            object.__setattr__(self, name, value)
            return
        if name not in self.sections():
            self.__getattr__(name)  # AttributeError naming the run's sections
        getattr(value, "validate", lambda: None)()
        settings = dataclasses.replace(self.settings, **{name: value})
        settings.validate()
        object.__setattr__(self, "settings", settings)

    def replace(self, **sections) -> "AppConfig":
        """A copy with `sections` replaced by name, each as assigning it does."""
        new = copy.copy(self)
        for name, value in sections.items():
            setattr(new, name, value)
        return new

    def to_dict(self) -> dict:
        """The config as TOML tables: the system's sections first, then the agent's."""
        app = {**to_dict(self.app), **self.platform_keys, **self.package_keys}
        return {"app": app, "env": self.env.to_table(), "eval": to_dict(self.eval),
                **{name: to_dict(section) for name, section in self.sections().items()}}

    def __eq__(self, other) -> bool:
        if not isinstance(other, AppConfig):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.SYSTEM)

    def __repr__(self) -> str:
        return f"AppConfig({', '.join(f'{name}={getattr(self, name)!r}' for name in self.SYSTEM)})"


def _agent_key(app: FrameworkConfig) -> tuple:
    """What of [app] decides a run's game and agent (and so its [env] rules and sections)."""
    return app.package, app.app, app.algo, app.kaiwu_version


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
    if text.startswith(RECORD_HEADER):  # a run's record, maybe of an earlier release
        data = current_record(data, EnvConfig.map_keys())
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
    """--set lines into the tree; a section no run reads is refused here (one of another game is
    refused by load_config, naming its game)."""
    sections = every_section()
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
    cfg = AppConfig.from_tree(data)
    cfg.platform_keys = platform
    cfg.package_keys = own
    return cfg


def save_effective_config(cfg: AppConfig, path: str | Path) -> Path:
    """Write the config a run actually used (after includes and overrides), for reproduction:
    the system's sections and those of the agent it trained; the shared secret is never written.
    Read back (the file starts with RECORD_HEADER), it is the run's record: one an earlier
    release wrote loads too (workflow.run_sections.current_record)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = cfg.to_dict()
    if data["app"].get("shared_secret"):
        data["app"]["shared_secret"] = "<set; not written>"
    path.write_text(f"{RECORD_HEADER} (includes and --set overrides applied).\n" + toml.dumps(data))
    return path
