"""How robot_vacuum's platform answers a failed reset or step (realm.answered_errors: an error
env_obs, `observation` None, `extra_info.result_code` < 0, `truncated` True; a 13.0.1 workflow
meets it with `handle_disaster_recovery(env_obs, logger)` and drops the episode).

RobotVacuumEnv(errors="env_obs") answers so; errors="raise" (the class default) raises. The codes
are gorge_chase's, the same platform wrapper's (whether 13.0.1's wrapper uses the same ones is
not public).
"""
from __future__ import annotations

from realm.answered_errors import (
    ERROR_MODES,
    STEP_AFTER_END,
    USR_CONF_SHAPE,
    USR_CONF_VALUE,
    check_error_mode,
    error_env_obs,
)
from realm.answered_errors import say as _say

__all__ = ["ERROR_MODES", "STEP_AFTER_END", "USR_CONF_SHAPE", "USR_CONF_VALUE", "check_error_mode", "error_env_obs",
           "say"]


def say(call: str, code: int, message: str) -> None:
    """An answered error on stderr (realm.answered_errors.say), named as robot_vacuum's."""
    _say("robot_vacuum", call, code, message)
