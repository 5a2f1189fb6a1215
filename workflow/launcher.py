"""`python -m workflow.launcher` (what ./train.sh runs): validate the config, then start and
supervise the learner (which hosts the replay server) and the aisrv processes.

    ./train.sh [--config F] [--set section.key=value ...] [--resume]
               [--role all|learner|aisrv] [--learner HOST:PORT] [--ray local|auto|HOST:PORT]
    ./train.sh --package DIR [--train-test] [--set app.algo="dqn" ...]   # a Kaiwu code package

--role all      (default) learner + app.aisrv_num aisrv on this machine
--role learner  learner only; prints the address aisrv on other machines join
--role aisrv    app.aisrv_num aisrv that join the learner at --learner HOST:PORT
--ray ADDRESS   the learner and the aisrv as actors of a Ray cluster (workflow.supervision.ray_supervisor)

--package DIR   train the Kaiwu code package at DIR (its conf/configure_app.toml over the
                platform's defaults, conf/kaiwu_package.toml; app.algo picks the algorithm folder)
--train-test    the platform's train_test.py check: small replay, stop after the first train step

Supervision (workflow.supervision.supervisor): an aisrv that crashes or stops beating its heartbeat is restarted with a doubling
back-off, at most app.aisrv_restart_max times per slot. A learner that dies ends the run with
the command that resumes it. Ctrl-C or SIGTERM stops every process cleanly, the learner
writing a final checkpoint; a second Ctrl-C kills at once.
One launcher at a time holds a run (workflow.checkpoints.runs.RunLock): a second start or --resume of a run
in use exits 2 naming the holder's pid.
Exit codes: 0 finished or stopped cleanly, 1 a process failed, 2 bad config or arguments, or the
run is in use or its counters are lost (nothing started).
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from pathlib import Path

import psutil
from loguru import logger
from tqdm import tqdm

from workflow.config import (PACKAGE_DEFAULTS, PLATFORM_ONLY_KEYS, AppConfig, ConfigError, load_config, package_own_keys,
                             save_effective_config)
from workflow.supervision.ray_cluster import check_address
from workflow.checkpoints.runs import RunError, RunPaths, hold_run, locate_run, resume_counters
from workflow.transport.signing import SECRET_ENV
from workflow.supervision.supervisor import EXIT_BAD_CONFIG, EXIT_FAILED, EXIT_OK, Supervisor, console



def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="./train.sh", description="Train one of the project's agents or a Kaiwu code package (learner + aisrv processes).")
    parser.add_argument("--config", default=None, help="TOML config (default conf/configure_app.toml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config value (TOML literal), repeatable")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run named by app.run_name (default: the newest run) from its newest checkpoint")
    parser.add_argument("--role", choices=("all", "learner", "aisrv"), default="all")
    parser.add_argument("--learner", default=None, metavar="HOST:PORT", help="replay server to join (--role aisrv)")
    parser.add_argument("--ray", default=None, metavar="local|auto|HOST:PORT",
                        help="run the learner and the aisrv as Ray actors: 'local' starts Ray on this machine, 'auto' "
                             "joins the cluster this host belongs to, HOST:PORT a given head (workflow.supervision.ray_supervisor)")
    parser.add_argument("--package", default=None, metavar="DIR",
                        help="train a Kaiwu code package (default config: DIR/conf/configure_app.toml)")
    parser.add_argument("--train-test", action="store_true",
                        help="with --package: the platform's train_test check (train once with a tiny replay, then stop)")
    return parser.parse_args(argv)


#: The platform's train_test.py settings: a tiny replay so the learner trains at once, one train step.
TRAIN_TEST_OVERRIDES = ("app.replay_buffer_capacity=10", "app.preload_ratio=10", "app.train_batch_size=2",
                        "app.aisrv_num=1", "app.aisrv_restart_max=0", "app.max_train_steps=1", "app.max_minutes=10",
                        "app.dump_model_freq=1")
#: What the platform's train_test.py waits for: the checkpoint of the first train step.
TRAIN_TEST_CHECKPOINT = "model.ckpt-1.pkl"


def load_run_config(args: argparse.Namespace, forked_check: bool = False) -> AppConfig:
    """The run's config: the file (or the package's own) with --set applied; a package is checked
    by importing it (`forked_check`: in a child, check_package_code), so a broken one fails here
    naming its file and line."""
    if not args.package:
        if args.train_test:
            raise ConfigError("--train-test checks a Kaiwu code package: add --package DIR")
        return load_config(args.config, args.overrides)
    from workflow import platforms
    from workflow.host.kaiwu_package import config_file, package_layout

    root = Path(args.package).resolve()
    if not root.is_dir():
        raise ConfigError(f"--package {args.package}: not a directory")
    overrides = [f"app.package={json.dumps(str(root))}"]
    overrides += list(TRAIN_TEST_OVERRIDES) if args.train_test else []
    config = Path(args.config or config_file(root))
    own = package_own_keys(config) if config.resolve().is_relative_to(root) else ()  # a --config elsewhere: strict
    cfg = load_config(config, overrides + list(args.overrides), base=PACKAGE_DEFAULTS, own_keys=own)
    platform = platforms.of_package(root, cfg.app.kaiwu_version)
    stated = package_stated_keys(platform.app_defaults(root), config, args.overrides)
    if stated:
        cfg = load_config(config, overrides + stated + list(args.overrides), base=PACKAGE_DEFAULTS, own_keys=own)
    root, layout = package_layout(root, cfg.app.algo, platform)
    check_preload(cfg, root, layout)
    env_conf = platform.env_conf_file(root, layout)
    if env_conf is not None:  # on the platform a bad one only shows as a reset that times out
        platform.check_env_conf_file(env_conf, cfg.env)
    check_package_code(cfg, locate_run(cfg.app, args.resume), in_fork=forked_check)
    return cfg


def check_package_code(cfg: AppConfig, paths: RunPaths, in_fork: bool) -> None:
    """Import the run's package as its processes will, so that a broken one stops the run before
    anything starts, naming its file and line. `in_fork`: in a child of the fork server the run's
    processes come from, which has imported torch; the launcher itself imports none of it."""
    from workflow.host.kaiwu_package import PackageError, check_imports
    from workflow.supervision.processes import ForkedCallError, call_in_fork

    try:
        if in_fork:
            call_in_fork(check_imports, cfg, paths)
        else:
            check_imports(cfg, paths)
    except PackageError as e:
        raise ConfigError(str(e)) from e
    except ForkedCallError as e:
        raise ConfigError(f"importing package {cfg.app.package} ({cfg.app.algo}): {e}") from e


def check_preload(cfg: AppConfig, root: Path, layout) -> None:
    """preload_model's checkpoint is where the learner will look: inside the package
    (workflow.host.kaiwu_package.preload_dir)."""
    from workflow.checkpoints import ckpt_files
    from workflow.host.kaiwu_package import preload_dir

    if not cfg.app.preload_model:
        return
    where = preload_dir(cfg.app, root, layout)
    try:
        ckpt_files.find_checkpoint(where, cfg.app.preload_model_id)
    except (FileNotFoundError, ValueError) as e:
        raise ConfigError(f"app: preload_model_dir = {cfg.app.preload_model_dir!r} (read inside the package: {where}) / "
                          f"preload_model_id = {cfg.app.preload_model_id!r}: {e}") from None


def package_stated_keys(defaults: dict, config: Path, given: list[str]) -> list[str]:
    """--set lines for the [app] values a package states elsewhere (PlatformVersion.app_defaults)
    that its config file and the command line leave out."""
    import toml

    if not defaults:
        return []
    try:
        in_file = toml.loads(Path(config).read_text(encoding="utf-8")).get("app", {})
    except (OSError, UnicodeDecodeError, toml.TomlDecodeError):
        in_file = {}  # load_config has read it already: it reports what is wrong with it
    named = {line.split("=", 1)[0].strip() for line in given}
    return [f"app.{key}={json.dumps(value)}" for key, value in defaults.items()
            if key not in in_file and f"app.{key}" not in named]


# --- checks before anything starts ----------------------------------------------------------------

def check_episode_settings(cfg: AppConfig) -> None:
    """Build the env and reset it with the usr_confs the project package's episode loop may use
    (its settings' `usr_confs_to_check`: the curriculum at each stage), so a map or curriculum the
    simulator rejects fails here, not in every aisrv. Says which maps the run plays (the game's
    maps_line: for gorge_chase the generated maps of map_seed and their ids, or the folder's files)."""
    import games
    from realm import make_env
    from realm.episode import checked_reset
    from workflow.platforms.project import run_platform

    platform = run_platform(cfg.app)
    try:
        env = make_env(**cfg.env.make_kwargs(platform))
    except (ValueError, OSError, TypeError) as e:
        raise ConfigError(f"[env]: the simulator rejects it: {e}") from e
    checked = []
    if cfg.settings is not None:  # a platform package's episode settings are its own code's
        for section, when, usr_conf in cfg.settings.usr_confs_to_check(cfg.app.seed):
            try:
                checked_reset(env, usr_conf=usr_conf)
            except ValueError as e:  # realm.UsrConfError is a ValueError
                raise ConfigError(f"{section} produces a usr_conf the simulator rejects ({when}): {e}; "
                                  f"usr_conf = {usr_conf}") from e
            checked.append(usr_conf)
    maps = games.of_platform(platform).maps_line(env, checked)
    if maps:
        print(maps, flush=True)


def check_evaluation(cfg: AppConfig) -> None:
    """[eval]'s episodes: its preset is one of the platform version's, and the simulator accepts
    its usr_conf on the run's map (the evaluator builds the same ones when it starts)."""
    import games
    from realm import make_env
    from realm.episode import checked_reset
    from workflow.platforms.project import run_platform

    platform = run_platform(cfg.app)
    try:
        label, usr_conf = cfg.eval.episode_usr_conf(platform)
        env_kwargs = cfg.eval.env_kwargs(cfg.env, platform)
        if not cfg.eval.usr_conf:  # a preset: some need map files (games.Game.check_preset_env)
            games.of_platform(platform).check_preset_env(label, env_kwargs)
        checked_reset(make_env(**env_kwargs), usr_conf=usr_conf, seed=cfg.eval.seed)
    except (ValueError, TypeError) as e:  # realm.UsrConfError is a ValueError
        raise ConfigError(f"[eval]: {e}") from e


def check_replay_memory(cfg: AppConfig) -> None:
    """The sample table when full (replay_buffer_capacity rows of the package's SAMPLE_DIM float32
    values) fits in this machine's memory: a learner whose replay outgrows it dies, or swaps, long
    after the start."""
    from workflow.host.kaiwu_package import KaiwuPackage, PackageError

    try:
        sample_dim = KaiwuPackage.row_width(cfg)
    except PackageError as e:
        raise ConfigError(str(e)) from e
    capacity, row_bytes, memory = cfg.app.replay_buffer_capacity, 4 * sample_dim, psutil.virtual_memory().total
    if capacity * row_bytes > memory:
        raise ConfigError(f"app.replay_buffer_capacity = {capacity}: that many samples of {sample_dim} float32 values "
                          f"need {capacity * row_bytes / 2**30:,.1f} GiB, more than this machine's "
                          f"{memory / 2**30:,.1f} GiB of memory; at most {memory // row_bytes}")


def check_arguments(args: argparse.Namespace) -> None:
    if args.role == "aisrv" and not args.learner:
        raise ConfigError("--role aisrv needs --learner HOST:PORT (printed by the learner at start)")
    if args.learner and args.role != "aisrv":
        raise ConfigError("--learner HOST:PORT is for --role aisrv")
    if args.learner and (":" not in args.learner or not args.learner.rsplit(":", 1)[1].isdigit()):
        raise ConfigError(f"--learner {args.learner!r}: expected HOST:PORT")
    if args.ray is not None and (args.role != "all" or args.learner):
        raise ConfigError("--ray places the learner and the aisrv itself: leave out --role and --learner")
    if args.ray is not None:
        try:
            check_address(args.ray)
        except ValueError as e:
            raise ConfigError(str(e)) from None
    if args.resume and args.role == "aisrv":
        raise ConfigError("--resume is for the learner (--role all or learner); aisrv hold no state")


def run_secret(cfg: AppConfig, role: str) -> str | None:
    """The key that signs what crosses the replay server: the configured one, else (one machine)
    a fresh one per run; across machines without one, items go unsigned, with a warning."""
    if not cfg.app.sign_replay:
        return None
    secret = cfg.app.shared_secret or os.environ.get(SECRET_ENV, "")
    if secret:
        return secret
    if role == "all":
        return secrets.token_hex(32)
    logger.warning(f"--role {role} without app.shared_secret or {SECRET_ENV}: weights, replay items and telemetry "
                   "go unsigned; anyone who reaches the port can write them. Set the same secret on every machine.")
    return None


def setup_launcher_logging(paths: RunPaths, level: str) -> None:
    """launcher.log gets everything; the terminal also gets warnings and errors (restarts, crashes)."""
    from workflow.metrics import setup_logging

    setup_logging("launcher", paths.log, level, console=lambda line: tqdm.write(line.rstrip("\n"), file=sys.stderr))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    lock = None
    try:
        check_arguments(args)
        cfg = load_run_config(args, forked_check=args.ray is None)  # on Ray no process forks from here
        if cfg.app.aisrv_num == "auto" and args.ray is None:
            raise ConfigError('app.aisrv_num = "auto" fills the realm_aisrv slots of a Ray cluster: add --ray '
                              'local|auto|HOST:PORT, or give a number')
        if args.role in ("all", "aisrv"):
            check_episode_settings(cfg)
        if args.role in ("all", "learner"):
            check_replay_memory(cfg)
            if cfg.eval.enabled:
                check_evaluation(cfg)
        paths, lock = hold_run(cfg.app, resume=args.resume)
        recovered = resume_counters(paths) if args.resume else None
        paths.create()
    except (ConfigError, RunError) as e:
        if lock is not None:
            lock.discard()
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    with lock:  # held until the run ends: no second launcher writes into it meanwhile
        return train(args, cfg, paths, recovered)


def train(args: argparse.Namespace, cfg: AppConfig, paths: RunPaths, recovered: str | None) -> int:
    """Run the held run's processes until they end; returns the exit code."""
    effective = paths.effective_config
    session = len(list(paths.log.glob(f"{effective.stem}-resume-*{effective.suffix}"))) + (1 if args.resume else 0)
    if args.resume and effective.exists():  # keep the config the run started with; add this session's
        effective = effective.with_name(f"{effective.stem}-resume-{time.strftime('%Y%m%d-%H%M%S')}{effective.suffix}")
    save_effective_config(cfg, effective)
    setup_launcher_logging(paths, cfg.app.log_level)
    what = {"all": f"learner + {cfg.app.aisrv_num} aisrv × {cfg.app.envs_per_aisrv} envs",
            "learner": "learner", "aisrv": f"{cfg.app.aisrv_num} aisrv joining {args.learner}"}[args.role]
    if cfg.app.package:
        what += f"; package {cfg.app.package}, algorithm {cfg.app.algo}"
    console(f"{'resuming' if args.resume else 'starting'} run {paths.name} ({what}); logs in {paths.log}")
    if recovered:
        logger.warning(recovered)  # the terminal and launcher.log
    if cfg.platform_keys:
        console(f"platform-only [app] keys, accepted and unused here (reasons in launcher.log): "
                f"{', '.join(sorted(cfg.platform_keys))}")
        logger.info("; ".join(f"{key}: {PLATFORM_ONLY_KEYS[key]}" for key in sorted(cfg.platform_keys)))
    if cfg.package_keys:
        from workflow.host.kaiwu_package import config_file

        file = Path(args.config or config_file(cfg.app.package)).resolve()
        console(f"notice: {file} sets [app] keys the platform does not read: {', '.join(cfg.package_keys)}; "
                "accepted as the package's own (its code reads them from CONFIG)")
    if args.ray is not None:
        from workflow.supervision.ray_supervisor import run_on_ray  # Ray is an optional extra

        supervisor, code = run_on_ray(args, cfg, paths, session, run_secret(cfg, args.role))
    else:
        supervisor = Supervisor(cfg, paths, args, session, run_secret(cfg, args.role))
        code = supervisor.run()
    if args.train_test:
        steps = int((supervisor.learner_done or {}).get("train_step") or 0)
        written = (paths.ckpt / TRAIN_TEST_CHECKPOINT).is_file()
        trained = code == EXIT_OK and steps > 0 and written
        console(f"train test {'passed' if trained else 'FAILED'}: the learner trained {steps} step(s), "
                f"{paths.ckpt / TRAIN_TEST_CHECKPOINT} {'written' if written else 'missing'}. Logs: {paths.log}",
                error=not trained)
        code = code if not trained else EXIT_OK
        code = EXIT_FAILED if not trained and code == EXIT_OK else code
    return code


if __name__ == "__main__":
    sys.exit(main())
