"""The sweep file that tools/sweep.py runs: what to train, what to search, what to optimise.

A sweep file is a TOML file of its own with one [sweep] table (a training config's schema has no
[sweep] section: the config a sweep trains is named by it and stays as it is):

    [sweep]
    name = "lr"                          # sweeps/<name>/ (default: the file's name without .toml)
    config = "../smoke.toml"             # the config every trial trains (relative to this file)
    package = ""                         # or a Kaiwu code package directory (./train.sh --package)
    set = ["eval.every_train_steps=20"]  # fixed --set overrides of every trial ([eval] on, or off with final_eval and no pruner)
    trials = 20                          # finished trials wanted (complete, pruned or failed)
    seeds = 3                            # runs per trial, app.seed 0..seeds-1
    seeds_at_once = 3                    # of them trained side by side (default: all; 1 on a small machine)
    budget_env_steps = 200000            # each run stops here (app.max_env_steps) ...
    budget_minutes = 0                   # ... or after this many minutes (app.max_minutes); one or both
    final_eval = true                    # play the final checkpoint too, so "last" is the value at the budget
    enqueue = [{ "ppo.learning_rate" = 3e-4 }]   # points tried first (partial: the rest is sampled)

    [sweep.objective]
    metric = "eval/ratio"                # eval/score | eval/ratio | eval/win | eval/chests | eval/steps
    direction = "maximize"               # or "minimize"
    reduce = "best"                      # per run: the best evaluation so far ("best") or the last ("last")

    [sweep.pruner]
    type = "median"                      # "median" | "successive_halving" | "none"
    step = "train_step"                  # what Optuna's step is: "train_step" | "env_steps" | "evaluation" (k-th)
    n_startup_trials = 5                 # median: complete trials before any pruning
    n_warmup_steps = 0                   # median: steps of a trial before it can be pruned
    interval_steps = 1                   # median
    min_resource = "auto"                # successive halving: the first rung's step (or "auto")
    reduction_factor = 4                 # successive halving
    min_early_stopping_rate = 0          # successive halving
    bootstrap_count = 0                  # successive halving

    [sweep.sampler]
    type = "tpe"                         # "tpe" | "random"
    seed = 0
    n_startup_trials = 10                # tpe: random trials first

    [sweep.params]
    "ppo.learning_rate" = { distribution = "log_uniform", low = 1e-5, high = 1e-3 }
    "reward.chest_pickup" = { distribution = "uniform", low = 0.5, high = 2.0 }     # step = 0.25 optional
    "ppo.update_epochs" = { distribution = "int", low = 1, high = 8 }               # step, log optional
    "model.channels" = { distribution = "categorical", choices = [[8, 8], [16, 16]] }

Every parameter is a dotted config key, checked against the real config schema by building the
trial's config with its bounds and choices before anything starts (SweepError naming it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import toml

VALUES = ("score", "ratio", "win", "chests", "steps")  # workflow.checkpoints.evaluations.VALUES
METRICS = tuple(f"eval/{v}" for v in VALUES)
DISTRIBUTIONS = ("log_uniform", "uniform", "int", "categorical")
#: Keys the sweep sets itself for every run: a parameter or a fixed --set of them would be overwritten.
RESERVED = ("app.seed", "app.run_dir", "app.run_name", "app.ckpt_dir", "app.max_env_steps", "app.max_train_steps",
            "app.max_minutes")
SWEEP_KEYS = ("name", "config", "package", "set", "trials", "seeds", "seeds_at_once", "budget_env_steps", "budget_minutes",
              "final_eval", "enqueue", "objective", "pruner", "sampler", "params")
OBJECTIVE_DEFAULTS = {"metric": "eval/ratio", "direction": "maximize", "reduce": "best"}
PRUNER_DEFAULTS = {"type": "median", "step": "train_step", "n_startup_trials": 5, "n_warmup_steps": 0,
                   "interval_steps": 1, "min_resource": "auto", "reduction_factor": 4, "min_early_stopping_rate": 0,
                   "bootstrap_count": 0}
SAMPLER_DEFAULTS = {"type": "tpe", "seed": 0, "n_startup_trials": 10}
PARAM_KEYS = ("distribution", "low", "high", "step", "log", "choices")


class SweepError(ValueError):
    """A sweep file the sweep cannot run; the message names the key."""


def toml_literal(value) -> str:
    """A value as the TOML literal `--set` reads."""
    return toml.dumps({"v": value}).split("=", 1)[1].strip()


@dataclass
class Param:
    """One searched config key and its distribution."""

    key: str
    distribution: str
    low: float | int | None = None
    high: float | int | None = None
    step: float | int | None = None
    log: bool = False
    choices: list = field(default_factory=list)

    @property
    def encoded(self) -> bool:
        """Choices Optuna cannot store (lists, tables) are searched as their TOML literals."""
        return any(isinstance(c, (list, dict)) for c in self.choices)

    def suggest(self, trial):
        """The trial's value of this key (an enqueued trial's own, else the sampler's)."""
        if self.distribution == "categorical":
            choices = [toml_literal(c) for c in self.choices] if self.encoded else list(self.choices)
            return trial.suggest_categorical(self.key, choices)
        if self.distribution == "int":
            return trial.suggest_int(self.key, self.low, self.high, step=self.step or 1, log=self.log)
        return trial.suggest_float(self.key, self.low, self.high, step=self.step,
                                   log=self.distribution == "log_uniform")

    def override(self, value) -> str:
        """The `--set key=value` of a suggested value."""
        return f"{self.key}={value if self.encoded else toml_literal(value)}"

    def samples(self) -> list:
        """Values the config schema must accept: both bounds, or every choice (as suggested)."""
        if self.distribution == "categorical":
            return [toml_literal(c) for c in self.choices] if self.encoded else list(self.choices)
        return [self.low, self.high]

    def contains(self, value) -> bool:
        if self.distribution == "categorical":
            return value in self.samples()
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return self.low <= value <= self.high and (self.distribution != "int" or float(value).is_integer())


@dataclass
class Sweep:
    file: Path
    name: str
    config: Path | None
    package: Path | None
    fixed: list[str]
    trials: int
    seeds: int
    seeds_at_once: int  # runs of a trial training at a time (the rest wait for one to end)
    budget_env_steps: int
    budget_minutes: float
    final_eval: bool
    enqueue: list[dict]
    objective: dict
    pruner: dict
    sampler: dict
    params: list[Param]

    @property
    def maximize(self) -> bool:
        return self.objective["direction"] == "maximize"

    def budget_overrides(self) -> list[str]:
        """What stops each run: the budget alone (the config's own limits are lifted)."""
        return [f"app.max_env_steps={self.budget_env_steps}", f"app.max_minutes={float(self.budget_minutes)}",
                "app.max_train_steps=0"]

    def launcher_argv(self, overrides: list[str]) -> list[str]:
        """`python -m workflow.launcher` arguments (what ./train.sh passes on) for these overrides."""
        argv = (["--config", str(self.config)] if self.config else []) + \
               (["--package", str(self.package)] if self.package else [])
        for item in self.fixed + overrides + self.budget_overrides():
            argv += ["--set", item]
        return argv

    def describe(self) -> str:
        budget = " / ".join(b for b in (f"{self.budget_env_steps} env steps" if self.budget_env_steps else "",
                                         f"{self.budget_minutes:g} minutes" if self.budget_minutes else "") if b)
        at_once = f" ({self.seeds_at_once} at a time)" if self.seeds_at_once < self.seeds else ""
        return (f"sweep {self.name}: {self.trials} trials x {self.seeds} seeds{at_once}, {budget} per run; "
                f"{self.objective['direction']} the {self.objective['reduce']} {self.objective['metric']} "
                f"(median over seeds); pruner {self.pruner['type']}, sampler {self.sampler['type']} "
                f"seed {self.sampler['seed']}; params {', '.join(p.key for p in self.params)}")


# --- reading --------------------------------------------------------------------------------------

def _table(raw: dict, key: str, defaults: dict) -> dict:
    given = raw.get(key, {})
    if not isinstance(given, dict):
        raise SweepError(f"[sweep.{key}]: expected a table, got {given!r}")
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise SweepError(f"[sweep.{key}] {unknown[0]}: unknown key; allowed: {', '.join(defaults)}")
    return {**defaults, **given}


def _choice(table: str, key: str, value, allowed: tuple) -> None:
    if value not in allowed:
        raise SweepError(f"[{table}] {key} = {value!r}: allowed {', '.join(repr(a) for a in allowed)}")


def _count(table: str, key: str, value, least: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise SweepError(f"[{table}] {key} = {value!r}: expected an integer >= {least}")
    return value


def _number(where: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SweepError(f"{where}: expected a number, got {value!r}")
    return value


def read_param(key: str, raw) -> Param:
    """One [sweep.params] entry, its range checked (low <= high, log needs low > 0, ints for int)."""
    where = f'[sweep.params] "{key}"'
    if not isinstance(raw, dict):
        raise SweepError(f"{where}: expected a table such as {{ distribution = \"uniform\", low = 0, high = 1 }}")
    unknown = sorted(set(raw) - set(PARAM_KEYS))
    if unknown:
        raise SweepError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(PARAM_KEYS)}")
    dist = raw.get("distribution")
    if dist not in DISTRIBUTIONS:
        raise SweepError(f"{where}: distribution = {dist!r}; allowed: {', '.join(DISTRIBUTIONS)}")
    if key in RESERVED or len(key.split(".")) < 2:
        raise SweepError(f"{where}: not a key a sweep can search (a dotted config key such as ppo.learning_rate; "
                         f"the sweep sets {', '.join(RESERVED)} itself)")
    if dist == "categorical":
        return _categorical(where, key, raw)
    return _numeric(where, key, dist, raw)


def _categorical(where: str, key: str, raw: dict) -> Param:
    extra = sorted(set(raw) - {"distribution", "choices"})
    if extra:
        raise SweepError(f"{where}: {extra[0]} is not for a categorical (it takes choices = [...])")
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices:
        raise SweepError(f"{where}: choices must be a non-empty list, got {choices!r}")
    param = Param(key, "categorical", choices=choices)
    if len(set(param.samples())) != len(choices):
        raise SweepError(f"{where}: choices repeat a value: {choices!r}")
    return param


def _numeric(where: str, key: str, dist: str, raw: dict) -> Param:
    if "choices" in raw:
        raise SweepError(f"{where}: choices are for distribution = \"categorical\"")
    if "low" not in raw or "high" not in raw:
        raise SweepError(f"{where}: {dist} needs low and high")
    low, high = _number(f"{where} low", raw["low"]), _number(f"{where} high", raw["high"])
    step = raw.get("step")
    log = raw.get("log", False)
    if not isinstance(log, bool) or (log and dist != "int"):
        raise SweepError(f"{where}: log = {log!r}: only for distribution = \"int\" (true/false); "
                         "a float on a log scale is distribution = \"log_uniform\"")
    if dist == "int" and not all(isinstance(v, int) for v in (low, high) + ((step,) if step is not None else ())):
        raise SweepError(f"{where}: an int distribution needs integer low, high and step, got {low!r}, {high!r}, {step!r}")
    if low > high:
        raise SweepError(f"{where}: low = {low!r} > high = {high!r}")
    if (dist == "log_uniform" or log) and low <= 0:
        raise SweepError(f"{where}: a log scale needs low > 0, got low = {low!r}")
    if step is not None:
        if _number(f"{where} step", step) <= 0:
            raise SweepError(f"{where}: step must be > 0, got {step!r}")
        if dist == "log_uniform" or log:
            raise SweepError(f"{where}: step and a log scale do not go together (Optuna samples one or the other)")
    return Param(key, dist, low=low, high=high, step=step, log=log)


def _path(sweep_file: Path, raw: dict, key: str) -> Path | None:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise SweepError(f"[sweep] {key} = {value!r}: expected a path")
    if not value:
        return None
    path = (sweep_file.parent / value).resolve()
    if not path.exists():
        raise SweepError(f"[sweep] {key} = {value!r}: {path} not found (paths are relative to the sweep file)")
    return path


def read_sweep(path: Path, trials: int | None = None) -> Sweep:
    """The sweep file's [sweep], every key checked; SweepError names the first bad one."""
    path = Path(path)
    try:
        data = toml.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise SweepError(f"{path}: cannot read it ({e})") from None
    except toml.TomlDecodeError as e:
        raise SweepError(f"{path}: not valid TOML: {e}") from None
    raw = data.get("sweep")
    if not isinstance(raw, dict) or set(data) != {"sweep"}:
        raise SweepError(f"{path}: a sweep file holds one [sweep] table (the config it trains is [sweep] config); "
                         f"found {', '.join(sorted(data)) or 'nothing'}")
    unknown = sorted(set(raw) - set(SWEEP_KEYS))
    if unknown:
        raise SweepError(f"[sweep] {unknown[0]}: unknown key; allowed: {', '.join(SWEEP_KEYS)}")
    sweep = Sweep(file=Path(path).resolve(), name=raw.get("name", Path(path).stem), config=_path(path, raw, "config"),
                  package=_path(path, raw, "package"), fixed=raw.get("set", []),
                  trials=trials if trials is not None else raw.get("trials", 20), seeds=raw.get("seeds", 1),
                  seeds_at_once=raw.get("seeds_at_once", raw.get("seeds", 1)),
                  budget_env_steps=raw.get("budget_env_steps", 0), budget_minutes=raw.get("budget_minutes", 0),
                  final_eval=raw.get("final_eval", True), enqueue=raw.get("enqueue", []),
                  objective=_table(raw, "objective", OBJECTIVE_DEFAULTS), pruner=_table(raw, "pruner", PRUNER_DEFAULTS),
                  sampler=_table(raw, "sampler", SAMPLER_DEFAULTS), params=[])
    params = raw.get("params", {})
    if not isinstance(params, dict) or not params:
        raise SweepError('[sweep.params]: at least one, e.g. "ppo.learning_rate" = '
                         '{ distribution = "log_uniform", low = 1e-5, high = 1e-3 }')
    sweep.params = [read_param(key, value) for key, value in params.items()]
    check_settings(sweep)
    return sweep


def check_settings(sweep: Sweep) -> None:
    """The [sweep] scalars and tables, each in its allowed values."""
    if not isinstance(sweep.name, str) or not sweep.name or Path(sweep.name).name != sweep.name or sweep.name in (".", ".."):
        raise SweepError(f"[sweep] name = {sweep.name!r}: a plain directory name")
    if not isinstance(sweep.fixed, list) or not all(isinstance(s, str) and "=" in s for s in sweep.fixed):
        raise SweepError(f"[sweep] set = {sweep.fixed!r}: a list of \"section.key=value\" strings")
    for item in sweep.fixed:
        if item.split("=", 1)[0].strip() in RESERVED:
            raise SweepError(f"[sweep] set: {item!r}: the sweep sets {item.split('=', 1)[0].strip()} itself "
                             "(budget_env_steps / budget_minutes for the budget)")
    _count("sweep", "trials", sweep.trials, 1)
    _count("sweep", "seeds", sweep.seeds, 1)
    _count("sweep", "seeds_at_once", sweep.seeds_at_once, 1)
    if sweep.seeds_at_once > sweep.seeds:
        raise SweepError(f"[sweep] seeds_at_once = {sweep.seeds_at_once}: at most seeds = {sweep.seeds}")
    _count("sweep", "budget_env_steps", sweep.budget_env_steps)
    if _number("[sweep] budget_minutes", sweep.budget_minutes) < 0:
        raise SweepError(f"[sweep] budget_minutes = {sweep.budget_minutes!r}: expected >= 0")
    if not sweep.budget_env_steps and not sweep.budget_minutes:
        raise SweepError("[sweep] budget_env_steps or budget_minutes: a budget is needed (each run stops there; "
                         "env steps transfer between machines, minutes do not)")
    if not isinstance(sweep.final_eval, bool):
        raise SweepError(f"[sweep] final_eval = {sweep.final_eval!r}: true or false")
    objective, pruner, sampler = sweep.objective, sweep.pruner, sweep.sampler
    _choice("sweep.objective", "metric", objective["metric"], METRICS)
    _choice("sweep.objective", "direction", objective["direction"], ("maximize", "minimize"))
    _choice("sweep.objective", "reduce", objective["reduce"], ("best", "last"))
    _choice("sweep.pruner", "type", pruner["type"], ("median", "successive_halving", "none"))
    _choice("sweep.pruner", "step", pruner["step"], ("train_step", "env_steps", "evaluation"))
    for key in ("n_startup_trials", "n_warmup_steps", "min_early_stopping_rate", "bootstrap_count"):
        _count("sweep.pruner", key, pruner[key])
    _count("sweep.pruner", "interval_steps", pruner["interval_steps"], 1)
    _count("sweep.pruner", "reduction_factor", pruner["reduction_factor"], 2)
    if pruner["min_resource"] != "auto":
        _count("sweep.pruner", "min_resource", pruner["min_resource"], 1)
    if pruner["type"] == "median" and pruner["step"] == "env_steps":
        raise SweepError('[sweep.pruner] step = "env_steps" with type = "median": the median pruner compares trials '
                         "at equal steps, and runs evaluate at different env steps; use step = \"train_step\" or "
                         "\"evaluation\", or type = \"successive_halving\"")
    _choice("sweep.sampler", "type", sampler["type"], ("tpe", "random"))
    _count("sweep.sampler", "seed", sampler["seed"])
    _count("sweep.sampler", "n_startup_trials", sampler["n_startup_trials"])
    check_enqueue(sweep)


def check_enqueue(sweep: Sweep) -> None:
    params = {p.key: p for p in sweep.params}
    if not isinstance(sweep.enqueue, list) or not all(isinstance(e, dict) for e in sweep.enqueue):
        raise SweepError(f"[sweep] enqueue = {sweep.enqueue!r}: a list of tables of parameter values")
    for i, point in enumerate(sweep.enqueue):
        for key, value in point.items():
            if key not in params:
                raise SweepError(f"[sweep] enqueue[{i}] \"{key}\": not a parameter of [sweep.params]")
            encoded = toml_literal(value) if params[key].encoded else value
            if not params[key].contains(encoded):
                raise SweepError(f"[sweep] enqueue[{i}] \"{key}\" = {value!r}: outside its distribution")
            point[key] = encoded


# --- the trial config, built as the launcher builds it ----------------------------------------------

def build_config(sweep: Sweep, overrides: list[str]):
    """The config a trial with these overrides trains (workflow.launcher.load_run_config);
    ConfigError names what the schema refuses."""
    from workflow import launcher

    args = launcher.parse_args(sweep.launcher_argv(overrides + ["app.seed=0", 'app.run_name="sweep-check"']))
    return launcher.load_run_config(args)


def final_only(sweep: Sweep) -> bool:
    """Whether the final checkpoint's evaluation alone can give the objective: with no pruner, a
    run needs no evaluator beside it (on a small machine its CPU would come out of a minutes budget)."""
    return sweep.final_eval and sweep.pruner["type"] == "none"


def check_against_config(sweep: Sweep) -> None:
    """Every parameter's bounds and choices make a config the launcher accepts, with [eval] on (or
    off where only the final checkpoint is scored) and its episodes and the training episodes
    valid; SweepError naming the parameter otherwise."""
    from workflow import launcher
    from workflow.schema import ConfigError

    first = [p.override(p.samples()[0]) for p in sweep.params]
    for overrides in ([], first):  # [eval] off is said before what a parameter's value makes of it
        try:
            cfg = build_config(sweep, overrides)
        except ConfigError as e:
            raise SweepError(f"the trials' config ({sweep.config or sweep.package} with [sweep] set): {e}") from None
        if not cfg.eval.enabled and not final_only(sweep):
            raise SweepError("[eval] is off in the trials' config: the objective comes from its evaluations; add "
                             "\"eval.every_train_steps=N\" or \"eval.every_minutes=M\" to [sweep] set, or score "
                             "the final checkpoint alone (final_eval = true, [sweep.pruner] type = \"none\")")
    for i, param in enumerate(sweep.params):
        for value in param.samples():
            trial = first[:i] + [param.override(value)] + first[i + 1:]
            try:
                cfg = build_config(sweep, trial)
                launcher.check_episode_settings(cfg)
                launcher.check_evaluation(cfg)
            except ConfigError as e:
                raise SweepError(f'[sweep.params] "{param.key}" = {value!r}: the config refuses it: {e}') from None


def load(path: Path, trials: int | None = None) -> Sweep:
    """Read and check a sweep file against the real config; SweepError before anything starts."""
    sweep = read_sweep(path, trials)
    check_against_config(sweep)
    return sweep
