"""A package written: one of the project's agents and a checkpoint of it in the layout of a
platform version of its game (workflow.platforms.ExportLayout), with conf/configure_app.toml (the
platform's [app] keys, the training ones from the run), the run's settings as settings.json, what
a registering version has beside the code (games.Game.registration_files), kaiwu.json and the
checkpoint. Nothing is written until every check has passed; an existing non-empty folder is
never overwritten."""
from __future__ import annotations

import importlib
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import toml

import games
from agent.checkpoint_io import CheckpointError
from evaluation.episodes import load_agent, project_algo, project_settings, run_config_file
from evaluation.inputs import InputError, config_tree_of
from export.code import PROJECT_TARGET, package_texts
from workflow import platforms
from workflow.checkpoints.ckpt_files import checkpoint_files, parse_ckpt_id
from workflow.config import REPO_ROOT
from workflow.platforms import ExportLayout as Target
from workflow.platforms.project import find_project_algorithm

#: The platform's [app] keys the export writes; the training ones take the run's values.
RUN_KEYS = ("algorithm_on_policy_or_off_policy", "learner_train_by_while_true", "learner_train_sleep_seconds",
            "replay_buffer_capacity", "preload_ratio", "train_batch_size", "production_consume_ratio",
            "reverb_remover", "reverb_sampler", "dump_model_freq", "torch_num_threads", "user_save_mode_max_count")
ALGO_RE = re.compile(r"^[a-z_][a-z0-9_]*$")


def platform_app(run_app: dict, algo: str, ckpt_id: int, sample_dim: int, target: Target = PROJECT_TARGET) -> dict:
    """conf/configure_app.toml's [app]: the platform's keys, the training ones from the run."""
    app = {key: run_app[key] for key in RUN_KEYS if key in run_app}
    sync = run_app.get("model_file_sync_per_minutes") or 0
    game = target.app_keys.get("app", "back_to_the_realm")
    app.update({
        "app": game,
        "algo": algo,
        "run_mode": "train",
        "sample_dim": sample_dim,
        "model_file_sync_per_minutes": max(1, int(round(sync))),  # the platform's unit: whole minutes, >= 1
        "preload_model": False,
        "preload_model_dir": f"/data/ckpt/{game}_{algo}/",
        "preload_model_id": ckpt_id,
        "eval_model_dir": f"/data/ckpt/{game}_{algo}/",
        "eval_model_id": ckpt_id,
        "use_which_deep_learning_framework": "pytorch",
        "predict_local_or_remote": "local",
        "wrapper_type": "remote",
        "copy_dir": f"conf,{target.folder.format(algo=algo)}",
        "modelpool_max_save_model_count": 1,
    })
    app.update(target.app_keys)
    return app


@dataclass(frozen=True)
class Exported:
    files: list[Path]  # every file written
    #: what the agent reads of the information the platform may withhold (games.Game.information_needed),
    #: None when it plays from what every observation holds; also the head of its configure_app.toml
    information: str | None


def export(ckpt: Path, out: Path, algo: str | None, config, kaiwu_version: str = platforms.PROJECT.name) -> Exported:
    """Write the package for the platform version named `kaiwu_version` (workflow.platforms.NAMES);
    `algo` names its algorithm (default: the project algorithm's name); `config` (a file or a
    workflow.config.ConfigSource) is the run's, else the checkpoint's run's effective config."""
    try:
        project = find_project_algorithm(*project_algo(ckpt, config))
    except CheckpointError as e:
        raise InputError(f"--ckpt {ckpt}: {e}") from e
    algo = algo or project.algo
    try:
        platform = platforms.get(kaiwu_version)
    except ValueError as e:
        raise InputError(f"--{e}") from None
    target = platform.export
    if platform.game != project.game:
        raise InputError(f"--kaiwu-version {kaiwu_version}: a {platform.game} package; the checkpoint is of "
                         f"the project's {project.game} {project.algo}")
    if not ALGO_RE.match(algo):
        raise InputError(f"--algo {algo!r}: a lower-case Python identifier, e.g. ppo")
    ckpt_id = parse_ckpt_id(ckpt)
    if ckpt_id is None or not ckpt.is_file() or not ckpt.name.endswith(".pkl"):
        raise InputError(f"--ckpt: not a checkpoint file (model.ckpt-N.pkl): {ckpt}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"--out {out}: exists and is not empty; give a new directory")
    try:
        load_agent(ckpt, config, agent_type="learner")  # it must load, training state too, into the agent exported
        config_module = importlib.import_module(project.layout.config)
        settings = config_module.Settings.from_dict(project_settings(ckpt, config))
    except (CheckpointError, ValueError) as e:
        raise InputError(f"--ckpt {ckpt}: {e}") from e
    run_config = config or run_config_file(ckpt)
    run_app = config_tree_of(run_config).get("app", {}) if run_config else {}

    texts = package_texts(project, algo, target)
    folder = target.folder.format(algo=algo)
    config_place = target.modules["config"].format(algo=algo)

    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out.parent if out.parent.exists() else None))
    try:
        for directory in target.dirs:
            (staging / directory.format(algo=algo)).mkdir(parents=True, exist_ok=True)
            (staging / directory.format(algo=algo) / "__init__.py").write_text("")
        for place, text in texts.items():
            for folder_path in reversed((staging / place).relative_to(staging).parents[:-1]):  # a game's subfolder
                if not (staging / folder_path).is_dir():
                    (staging / folder_path).mkdir()
                    (staging / folder_path / "__init__.py").write_text("")
            (staging / place).write_text(text)
        (staging / config_place).with_name("settings.json").write_text(
            json.dumps(settings.to_dict(), indent=1, sort_keys=True) + "\n")
        (staging / "conf").mkdir()
        (staging / "conf" / "__init__.py").write_text("")
        header = "# Exported by tools/export_kaiwu.py from " + ckpt.name + "\n"
        information = games.of_platform(platform).information_needed(settings)
        app_header = header + (f"# The agent {information}.\n" if information else "")
        (staging / "conf" / "configure_app.toml").write_text(
            app_header + toml.dumps({"app": platform_app(run_app, algo, ckpt_id, config_module.Config.SAMPLE_DIM, target)}))
        version = target.kaiwu_json_version or toolkit_version()
        if target.registers_algorithm:
            write_registration_files(staging, algo, folder, settings, header, games.of_platform(platform))
        (staging / "kaiwu.json").write_text(json.dumps({"version": version, "project_code": platform.game},
                                                       indent=1) + "\n")
        (staging / "ckpt").mkdir()
        for file in checkpoint_files(ckpt.parent, ckpt_id):  # the weights, the progress record, the training state
            shutil.copy2(file, staging / "ckpt" / file.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            out.rmdir()  # empty, checked above
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return Exported(sorted(p for p in out.rglob("*") if p.is_file()), information)


def write_registration_files(staging: Path, algo: str, folder: str, settings, header: str, game) -> None:
    """What a package that registers its algorithm has (18.0.2, v2): train_env_conf.toml (valid for
    the simulator and the platform's check_usr_conf) and the algorithm's registration, as its game
    writes them (games.Game.registration_files)."""
    try:
        files = game.registration_files(settings, algo, folder)
    except ValueError as e:
        raise InputError(str(e)) from e
    for place, (comment, tree) in files.items():
        (staging / place).write_text(header + comment + toml.dumps(tree))


def toolkit_version() -> str:
    project = toml.loads((REPO_ROOT / "pyproject.toml").read_text()).get("project", {})
    return str(project.get("version", "0"))
