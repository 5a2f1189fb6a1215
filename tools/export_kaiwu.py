"""Export one of the project's agents (PPO, or the DQN package dqn_plus: the checkpoint's run
says which) and one of its checkpoints as a Kaiwu platform code package.

    python tools/export_kaiwu.py --ckpt runs/<run>/ckpt/back_to_the_realm_ppo/model.ckpt-1000.pkl --out out/kaiwu
    python tools/export_kaiwu.py --ckpt runs/<run> --best --out out/kaiwu    # the run's best by its evaluations

writes, in the 2024 platform's layout (`--kaiwu-version 2024`, the default):
    conf/configure_app.toml   the platform's [app] keys (training keys from the run; algo; eval_model_id)
    <algo>/config.py          Config (SAMPLE_DIM, ...) and the settings loader
    <algo>/settings.json      the run's [model] [ppo]|[dqn] [reward] [curriculum], as the checkpoint was trained
    <algo>/feature/           definition.py (data classes, protocol functions), layout, reward, curriculum, ...
    <algo>/algorithm/         agent.py (the Agent), ppo.py or dqn.py (the update), settings, checkpoint files
    <algo>/model/model.py     the network
    <algo>/train_workflow.py  workflow(envs, agents, logger, monitor), and runner.py and training.py beside it
    ckpt/model.ckpt-N.pkl     the checkpoint (and its training state, for training on from it)
    kaiwu.json
and with `--kaiwu-version 18`, in the 18.0.2 (2025) layout:
    agent_<algo>/agent.py, algorithm/, conf/conf.py (Config), conf/settings.json,
        conf/train_env_conf.toml (the curriculum's episodes as [env_conf]), feature/ (with
        preprocessor.py: the Preprocessor the platform's eval workflows import), model/model.py,
        workflow/train_workflow.py (the project's loop, its protocol set to 18.0.2's: usr_conf as
        env_conf, observations read through feature.observation18)
    conf/algo_conf_back_to_the_realm.toml, conf/app_conf_back_to_the_realm.toml,
    conf/configure_app.toml, kaiwu.json ({"version": "18.0.2"}), ckpt/
The platform's 2025 eval and exam workflows exist for dqn, target_dqn and diy only: upload an 18
export as `--algo diy` for the platform to score it.
The v2 agent (app = "back_to_the_realm_v2", algo = "ppo") exports with `--kaiwu-version v2-28` (or v2-24) in the
same layout: agent_<algo>/ with conf/train_env_conf.toml (the run's [curriculum_v2]),
conf/algo_conf_back_to_the_realm_v2.toml, conf/app_conf_back_to_the_realm_v2.toml and kaiwu.json
(28.1.1 or 24.0.1, project_code back_to_the_realm_v2). The platform scores the algorithms it
registers (28.1.1: dqn and diy; 24.0.1: dqn, target_dqn, ppo and diy): upload as `--algo diy`
(without --algo the package names the algorithm as the project does, ppo).
The code is the agent's four modules (its game's `project_agents`, games/<game>.py) and every package-code module they
import, with their imports moved under the algorithm's folder; the package
imports only the platform's modules (kaiwu_agent, kaiwudrl), numpy, torch and the standard
library, which this tool checks before it writes anything. `./train.sh --package DIR` trains it
and `tools/evaluate.py --package DIR` scores its checkpoint. An existing non-empty --out is
never overwritten. Bad input exits with code 2.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

import toml

from export_layouts import PROTOCOL_LINE, PROTOCOL_MODULE  # noqa: E402
from tool_args import (REPO_ROOT, InputError, add_best_arg, add_config_args, best_checkpoint_file, config_source,  # noqa: E402
                       config_tree_of, run_tool)
import games  # noqa: E402
from workflow import platforms  # noqa: E402
from workflow.platforms import ExportLayout as Target  # noqa: E402

PROJECT_TARGET = platforms.PROJECT.export

MODEL_SOURCE = "agent/model.py"  # the network: the platform's model/model.py
OTHER_FOLDERS = ("realm", "workflow", "tools")  # the project's Python beside the package code: never exported
ALLOWED_TOP_LEVEL = {"numpy", "torch", "kaiwu_agent", "kaiwudrl"}  # beside the standard library and {algo}
#: The platform's [app] keys the export writes; the training ones take the run's values.
RUN_KEYS = ("algorithm_on_policy_or_off_policy", "learner_train_by_while_true", "learner_train_sleep_seconds",
            "replay_buffer_capacity", "preload_ratio", "train_batch_size", "production_consume_ratio",
            "reverb_remover", "reverb_sampler", "dump_model_freq", "torch_num_threads", "user_save_mode_max_count")
ALGO_RE = re.compile(r"^[a-z_][a-z0-9_]*$")


def file_map(project, target: Target = PROJECT_TARGET) -> dict[str, str]:
    """Project file -> exported path ({algo} not yet filled in) for one of the project's agents
    (workflow.platforms.project.ProjectAlgorithm): its four modules and every package-code module
    they import, directly or not (nothing else)."""
    from agent.algorithms import PACKAGE_FOLDERS

    layout = project.layout
    own = {layout.file(part, project.algo): target.modules[part] for part in ("config", "definition", "agent", "workflow")}
    files: dict[str, str] = {}
    pending = list(own)
    while pending:
        relative = pending.pop()
        if relative in files:
            continue
        folder, name = relative.split("/", 1)
        place = own.get(relative) or (target.model_file if relative == MODEL_SOURCE else target.folders[folder] + name)
        if relative not in own and place in own.values():  # e.g. the PPO package's definition under a v2 one's
            place = target.folders[folder] + "base_" + name
        files[relative] = place
        for module in imported_modules((REPO_ROOT / relative).read_text()):
            if module.split(".")[0] in PACKAGE_FOLDERS and (REPO_ROOT / (module.replace(".", "/") + ".py")).is_file():
                pending.append(module.replace(".", "/") + ".py")
    return files


def imported_modules(text: str) -> list[str]:
    """The dotted modules a file imports (absolute imports)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def module_map(project, algo: str, target: Target = PROJECT_TARGET) -> dict[str, str]:
    """Dotted project module -> dotted module in the exported package."""
    return {path.removesuffix(".py").replace("/", "."): place.format(algo=algo).removesuffix(".py").replace("/", ".")
            for path, place in file_map(project, target).items()}


def source_files(project, algo: str, target: Target = PROJECT_TARGET) -> dict[str, Path]:
    """Exported relative path -> project file."""
    return {place.format(algo=algo): REPO_ROOT / path for path, place in file_map(project, target).items()}


def rewrite_imports(text: str, modules: dict[str, str], where: str) -> str:
    """Move `from X import ...` / `import X` of the project's modules under the package."""
    def replace(match: re.Match) -> str:
        name = match.group("module")
        if name not in modules:
            raise InputError(f"{where}: imports {name}, which is not part of the exported package")
        return f"{match.group('lead')}{modules[name]}"

    from agent.algorithms import PACKAGE_FOLDERS

    project = "|".join(PACKAGE_FOLDERS + OTHER_FOLDERS)
    pattern = re.compile(rf"^(?P<lead>\s*(?:from|import)\s+)(?P<module>(?:{project})(?:\.\w+)*)", re.MULTILINE)
    return pattern.sub(replace, text)


def foreign_imports(text: str, folder: str) -> list[str]:
    """Top-level modules a file imports that the platform would not have (`folder`: the package's own)."""
    allowed = ALLOWED_TOP_LEVEL | set(sys.stdlib_module_names) | {folder, "__future__"}
    return [name for name in imported_modules(text) if name.split(".")[0] not in allowed]


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


def export(ckpt: Path, out: Path, algo: str | None, config, kaiwu_version: str = platforms.PROJECT.name) -> list[Path]:
    """Write the package for the platform version named `kaiwu_version` (workflow.platforms.NAMES);
    `algo` names its algorithm (default: the project algorithm's name)."""
    import importlib

    from workflow.checkpoints.ckpt_files import checkpoint_files, parse_ckpt_id
    from agent.checkpoint_io import CheckpointError
    from evaluation.episodes import load_agent, project_algo, project_settings, run_config_file
    from workflow.platforms.project import find_project_algorithm

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
        load_agent(ckpt, config)  # the checkpoint must load into the agent it is exported with
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
        (staging / "conf" / "configure_app.toml").write_text(
            header + toml.dumps({"app": platform_app(run_app, algo, ckpt_id, config_module.Config.SAMPLE_DIM, target)}))
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
    return sorted(p for p in out.rglob("*") if p.is_file())


def package_texts(project, algo: str, target: Target) -> dict[str, str]:
    """Exported path -> the file's text, imports moved under the algorithm's folder; the loops
    set to the target's protocol and its extra files added (a 2025 export's
    feature/preprocessor.py). Every text is checked to import only what the platform has."""
    modules = module_map(project, algo, target)
    folder = target.folder.format(algo=algo)
    sources = {place: (source.read_text(), str(source.relative_to(REPO_ROOT)))
               for place, source in source_files(project, algo, target).items()}
    if target.protocol_line is not None:
        protocol_place = target.folders["episodes"].format(algo=algo) + Path(PROTOCOL_MODULE).name
        text, where = sources[protocol_place]
        if text.count(PROTOCOL_LINE) != 1:
            raise InputError(f"{where}: expected one line {PROTOCOL_LINE!r} to set the package's protocol")
        sources[protocol_place] = (text.replace(PROTOCOL_LINE, target.protocol_line), where)
    for folder_key, (name, text) in target.extra_sources.items():
        sources[target.folders[folder_key].format(algo=algo) + name] = (text, name)
    texts = {}
    for place, (text, where) in sources.items():
        text = rewrite_imports(text, modules, where)
        foreign = foreign_imports(text, folder)
        if foreign:
            raise InputError(f"{where} imports {', '.join(foreign)}: the platform has only its own modules, numpy and "
                             "torch")
        texts[place] = text
    return texts


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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", type=Path, required=True,
                        help="the project agent's checkpoint (model.ckpt-N.pkl); with --best a run or checkpoint directory")
    add_best_arg(parser)
    parser.add_argument("--out", type=Path, required=True, help="the package directory to write (new or empty)")
    parser.add_argument("--algo", default=None,
                        help="the algorithm folder's name (default: the run's algorithm, ppo or dqn_plus)")
    add_config_args(parser, "the run's config, read as ./train.sh reads it (includes, --set) "
                            "(default: the checkpoint's run, log/effective_config.toml)")
    parser.add_argument("--kaiwu-version", default=platforms.PROJECT.name, choices=platforms.NAMES,
                        help="the platform's layout and protocol: " + ", ".join(
                            f"{name} ({platforms.get(name).title})" for name in platforms.NAMES)
                        + f"; default {platforms.PROJECT.name}. A 2025 package: upload as --algo diy to be scored")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    def action(args: argparse.Namespace) -> int:
        if args.best:
            args.ckpt = best_checkpoint_file(args.ckpt)
        from evaluation.episodes import run_config_file

        args.config = config_source(args, run_config_file(args.ckpt) if args.ckpt.is_file() else None)
        files = export(args.ckpt, args.out, args.algo, args.config, args.kaiwu_version)
        print(f"wrote {len(files)} files to {args.out}")
        print(f"train it:  ./train.sh --package {args.out}")
        print(f"score it:  python tools/evaluate.py --package {args.out}")
        return 0
    return run_tool(action, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
