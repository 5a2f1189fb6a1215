"""The 2026 game `gorge_chase` (峡谷追猎), code package 15.0.1: a version of the 2026 engine
(workflow/platforms/engine2026.py: the layout, the env API, the sample rows, the evaluation).
Its settings file's keys are gorge_chase's; a bad usr_conf or a step after the end is answered
with the platform's error env_obs (`[env] gorge_errors`, realm/gorge_chase/errors.py).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from workflow.platforms.agent_folders import AGENT_FOLDER_EXPORT
from workflow.platforms.base import REPO_ROOT
from workflow.platforms.engine2026 import EngineVersion

PROJECT_CODE = "gorge_chase"
ALGO_CONF = Path("conf") / "algo_conf_gorge_chase.toml"
APP_CONF = Path("conf") / "app_conf_gorge_chase.toml"
#: The platform's root-level modules a 15.0.1 package imports.
PLATFORM_ROOT = REPO_ROOT / "kaiwu_platform" / "v15"


class Platform15(EngineVersion):
    """gorge_chase, a 15.0.1 package."""

    name = "15"
    title = "15.0.1 (gorge_chase, 2026)"
    env_protocol = "gorge"
    hosts_project_agents = True  # games.gorge_chase's project_agents
    platform_root = PLATFORM_ROOT
    game = PROJECT_CODE
    algo_conf, app_conf = ALGO_CONF, APP_CONF
    eval_preset = "gorge-open"  # the official open maps 1-10: needs [env] maps_dir (their files)
    export = dataclasses.replace(AGENT_FOLDER_EXPORT, kaiwu_json_version="15.0.1-comp-normal-lite.26comp",
                                 app_keys={"app": PROJECT_CODE})
    majors = (15, 10**6)
    usr_conf_keys = ("map, map_random, treasure_count, buff_count, buff_cooldown, talent_cooldown, monster_interval, "
                     "monster_speedup, max_step")

    def validate_usr_conf(self, usr_conf: dict) -> None:
        from realm.gorge_chase.usr_conf import validate_usr_conf

        validate_usr_conf(usr_conf)


PLATFORM = Platform15()
