"""The 2026 game `robot_vacuum` (清扫大作战), code package 13.0.1: a version of the 2026 engine
(workflow/platforms/engine2026.py: the layout, the env API, the sample rows, the evaluation).
Its settings file's keys are robot_vacuum's (../shared/kaiwu_vacuum/SPEC_DRAFT.md); a bad
usr_conf or a step after the end is answered with the platform's error env_obs
(realm/robot_vacuum/errors.py). Its packages import the platform's root modules from
kaiwu_platform/v13/.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from workflow.platforms.agent_folders import AGENT_FOLDER_EXPORT
from workflow.platforms.base import REPO_ROOT
from workflow.platforms.engine2026 import EngineVersion

PROJECT_CODE = "robot_vacuum"
ALGO_CONF = Path("conf") / "algo_conf_robot_vacuum.toml"
APP_CONF = Path("conf") / "app_conf_robot_vacuum.toml"
#: The platform's root-level modules a 13.0.1 package imports.
PLATFORM_ROOT = REPO_ROOT / "kaiwu_platform" / "v13"


class Platform13(EngineVersion):
    """robot_vacuum, a 13.0.1 package."""

    name = "13"
    title = "13.0.1 (robot_vacuum, 2026)"
    env_protocol = "vacuum"
    hosts_project_agents = True  # games.robot_vacuum's project_agents
    platform_root = PLATFORM_ROOT
    game = PROJECT_CODE
    algo_conf, app_conf = ALGO_CONF, APP_CONF
    eval_preset = "vacuum-generated-heldout"  # the official maps are not public: held-out generated maps
    export = dataclasses.replace(AGENT_FOLDER_EXPORT, kaiwu_json_version="13.0.1-comp-normal-lite.26comp",
                                 app_keys={"app": PROJECT_CODE})
    majors = (13, 14)
    usr_conf_keys = "map, map_random, robot_count, charger_count, max_step, battery_max"

    def validate_usr_conf(self, usr_conf: dict) -> None:
        from realm.robot_vacuum.usr_conf import validate_usr_conf

        validate_usr_conf(usr_conf)


PLATFORM = Platform13()
