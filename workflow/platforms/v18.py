"""The 2025 course build (code package 18.0.2): the same game in the 2025 protocol.

Package: `agent_<algo>/agent.py`, `agent_<algo>/conf/conf.py`, `agent_<algo>/feature/definition.py`,
`agent_<algo>/workflow/train_workflow.py`, `agent_<algo>/conf/train_env_conf.toml`, the
algorithm registered in `conf/algo_conf_back_to_the_realm.toml`; kaiwu.json's version 18 or
later. The platform's root modules these import (`arena_proto`, `tools.*`) come from `kaiwu_platform/v18/`.
Env: `reset(usr_conf={"env_conf": ...})` returns `(obs, state)`; the aisrv's predict / exploit
return `(list of ActData, model_version)`; the learner hands NumpyData2SampleData float32 torch
tensors on its device; the package's workflow opens its train_env_conf.toml from the package's
directory. A blocked flash lands on the nearest passable cell (the 2025 guide's rule).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from workflow.platforms.agent_folders import AGENT_FOLDER_EXPORT, AgentFolderVersion
from workflow.platforms.base import REPO_ROOT, ConfigError, Layout, read_env_conf_file

ALGO_CONF = Path("conf") / "algo_conf_back_to_the_realm.toml"
#: The 2025 platform's root-level modules (arena_proto, tools.train_env_conf_validate, tools.metrics_utils).
PLATFORM_ROOT = REPO_ROOT / "kaiwu_platform" / "v18"
#: What the platform's 2025 workflows import from `agent_<algo>/feature/preprocessor.py`.
PREPROCESSOR_SHIM = ('"""The per-episode Preprocessor the platform\'s 2025 workflows import from here, handing it to\n'
                     '`agent.observation_process(obs, preprocessor, state)` (feature.back_to_the_realm.observation18)."""\n'
                     "from feature.back_to_the_realm.observation18 import Preprocessor  # noqa: F401\n")
#: [app] keys an export adds to configure_app.toml (the official 18.0.2 file's, all of them
#: platform bookkeeping that the toolkit's host accepts and ignores)
APP_KEYS = {
    "algo_conf": "conf/algo_conf_back_to_the_realm.toml",
    "selfplay_app_conf": "conf/app_conf_back_to_the_realm.toml",
    "noselfplay_app_conf": "conf/app_conf_back_to_the_realm.toml",
    "self_play": False,
    "set_name": "back_to_the_realm_set1000",
    "self_play_set_name": "back_to_the_realm_set1000",
    "framework_integration_patterns": "standard",
    "aisrv_framework": "kaiwu_env",
}


class Features18:
    """A 2025 package's features as the episode runner calls them, `(obs, env_info) -> ObsData`:
    its Agent's own `observation_process(obs, preprocessor, state)` with a fresh `Preprocessor`
    (`agent_<algo>/feature/preprocessor.py`, when the package has one) per episode, as the
    platform's eval workflow builds it; the reset's `(obs, state)` starts an episode."""

    def __init__(self, agent, preprocessor_class: type | None):
        self.agent = agent
        self.preprocessor_class = preprocessor_class
        self.preprocessor = None

    def __call__(self, obs, env_info=None):
        if isinstance(obs, tuple):  # a reset: (obs, state)
            obs, env_info = obs
            self.preprocessor = self.preprocessor_class() if self.preprocessor_class is not None else None
        result = self.agent.observation_process(obs, self.preprocessor, env_info)
        return result[0] if isinstance(result, tuple) else result  # the official ones return (ObsData, remain_info)


def env_conf_of(usr_conf: dict) -> dict:
    """A resolved 2024 usr_conf ({"diy": ...}, chests listed) as the 2025 protocol's env_conf."""
    diy = usr_conf["diy"]
    return {"env_conf": {"start": int(diy["start"]), "end": int(diy["end"]), "treasure_random": False,
                         "treasure_count": len(diy["treasure_id"]), "treasure_id": [int(i) for i in diy["treasure_id"]],
                         "talent_type": int(diy.get("talent_type", 1)), "max_step": int(diy["max_step"])}}




class Platform18(AgentFolderVersion):
    name = "18"
    title = "18.0.2 (2025 course)"
    env_protocol = "18"
    hosts_project_agents = False
    flash_rule = "nearest"
    platform_root = PLATFORM_ROOT
    runs_in_package_dir = True
    algo_conf = ALGO_CONF
    export = dataclasses.replace(
        AGENT_FOLDER_EXPORT,
        kaiwu_json_version="18.0.2",
        app_keys=APP_KEYS,
        protocol_line='KAIWU_VERSION = "18"',
        extra_sources={"feature": ("preprocessor.py", PREPROCESSOR_SHIM)},
    )

    def claims_manifest(self, major: int, project_code: str) -> bool:
        return major >= 18

    def check_env_conf_file(self, path: Path, env_config=None) -> None:
        """The file, as the package's workflow will hand it to env.reset (with the view_size the
        platform's read_usr_conf adds), passes the simulator's checks (on the platform a bad one
        only shows as a reset that times out)."""
        from realm.back_to_the_realm.usr_conf import UsrConfError, validate_env_conf

        env_conf = read_env_conf_file(path, "(start, end, treasure_random, treasure_count, treasure_id, "
                                            "talent_type, max_step)")["env_conf"]
        try:
            validate_env_conf({"env_conf": {**env_conf, "view_size": env_conf.get("view_size", 25)}})
        except UsrConfError as e:
            raise ConfigError(f"{path}: {e}") from None

    def preprocessor_module(self, layout: Layout) -> str | None:
        return layout.agent.split(".")[0] + ".feature.preprocessor"

    def env_kwargs(self, env_config) -> dict:
        """The 2025 protocol and its map window ([env] map_window, games.back_to_the_realm.RealmRules)."""
        return {"protocol": self.env_protocol, "map_window": env_config.rules.map_window}

    def predict_answer(self, result, model_version: int):
        return result, model_version  # as the platform's predictor answers

    def learn_rows(self, rows, device):
        import torch

        return torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32)).to(device)

    def eval_protocol(self, agent, package):
        return Features18(agent, package.preprocessor_class()), agent.action_process

    def eval_episode(self, env, usr_conf: dict, map_window: str):
        from realm.back_to_the_realm.env18 import RealmEnv18  # the same game, served in the 2025 protocol

        return RealmEnv18(env, map_window=map_window), env_conf_of(usr_conf)


PLATFORM = Platform18()
