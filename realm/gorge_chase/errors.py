"""How the platform answers a failed reset or step instead of raising (SPEC §3.1, §3.3; the env
wrapper's error codes): an error env_obs, `observation` None, `extra_info.result_code` < 0 with
`result_message`, `terminated` False, `truncated` True. A 15.0.1 workflow meets it with
`handle_disaster_recovery(env_obs, logger)` and drops the episode.

GorgeChaseEnv(errors="env_obs") answers so (a run's `[env] gorge_errors`, the default for hosted
packages); errors="raise" (the class default) raises the error instead. Either way the message
names the usr_conf key and what it allows; answered errors are also put on stderr (`say`).
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

__all__ = ["ERROR_MODES", "check_error_mode", "error_env_obs", "say", "USR_CONF_SHAPE", "USR_CONF_VALUE",
           "STEP_AFTER_END"]


def say(call: str, code: int, message: str) -> None:
    """An answered error on stderr (realm.answered_errors.say), named as gorge_chase's."""
    _say("gorge_chase", call, code, message)
