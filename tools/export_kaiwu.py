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
        env_conf, observations read through feature.back_to_the_realm.observation18)
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
library, which the export checks before it writes anything (export/: export.code, export.package;
this tool is its command line). `./train.sh --package DIR` trains it and `tools/evaluate.py
--package DIR` scores its checkpoint. An existing non-empty --out is never overwritten. Bad input
exits with code 2. An agent whose features read what the platform may withhold (gorge_chase's and
robot_vacuum's `global_info`: env_obs's extra_info.frame_state) says so on the terminal
("information: ...") and at the head of conf/configure_app.toml.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.flags import add_best_arg, add_config_args
from cli.run import run_tool
from evaluation.episodes import run_config_file
from evaluation.inputs import best_checkpoint, config_source
from export.package import export
from workflow import platforms


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
        ckpt = args.ckpt
        if args.best:
            ckpt, described = best_checkpoint(ckpt)
            print(f"best by the run's evaluations: {described}")
        config = config_source(args.config, args.overrides, run_config_file(ckpt) if ckpt.is_file() else None)
        exported = export(ckpt, args.out, args.algo, config, args.kaiwu_version)
        print(f"wrote {len(exported.files)} files to {args.out}")
        if exported.information:
            print(f"information: the agent {exported.information}")
        print(f"train it:  ./train.sh --package {args.out}")
        print(f"score it:  python tools/evaluate.py --package {args.out}")
        return 0
    return run_tool(action, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
