"""How the Kaiwu platform answers a failed reset or step instead of raising (the env wrapper of
the 2026 games' packages, gorge_chase 15.0.1 and robot_vacuum 13.0.1, whose workflows meet it
with `handle_disaster_recovery(env_obs, logger)` and drop the episode): an error env_obs,
`observation` None, `extra_info.result_code` < 0 with `result_message`, `terminated` False,
`truncated` True.

An env with errors="env_obs" answers so; errors="raise" raises the error instead. Answered errors
are also put on stderr (`say`, under the game's name).
"""
from __future__ import annotations

import sys

ERROR_MODES = ("raise", "env_obs")

# The wrapper's codes (gorge_chase's SPEC §3.3, second-hand): which of them a case gets is this
# simulator's reading.
USR_CONF_SHAPE = -100  # reset: the usr_conf is not {"env_conf": {...}} or names an unknown key
USR_CONF_VALUE = -101  # reset: a value of the wrong type or out of range
STEP_AFTER_END = -201  # step before the first reset, after the episode ended, or after a failed reset


def check_error_mode(value) -> str:
    if value not in ERROR_MODES:
        raise ValueError(f"errors = {value!r} is invalid: allowed 'raise' (raise the error) | 'env_obs' (answer "
                         "with the platform's error env_obs: observation None, extra_info.result_code < 0, "
                         "truncated True)")
    return value


def error_env_obs(env_id: str, frame_no: int, map_id: int, code: int, message: str) -> dict:
    """The error env_obs: the keys of every env_obs, nothing observed (frame_state None too)."""
    return {
        "env_id": env_id,
        "frame_no": frame_no,
        "observation": None,
        "extra_info": {"frame_state": None, "map_id": map_id, "result_code": code, "result_message": message},
        "terminated": False,
        "truncated": True,
    }


_SAID: dict[str, int] = {}  # message -> answers so far, in this process


def say(game: str, call: str, code: int, message: str) -> None:
    """An answered error on stderr: the first time, then at the 10th, 100th, ... answer of the same
    message (the official workflows reset again after every failed reset, so a bad usr_conf
    repeats for ever)."""
    key = f"{game} {call} {code} {message}"
    count = _SAID[key] = _SAID.get(key, 0) + 1
    if count == 1 or _power_of_ten(count):
        again = f" ({count} times so far)" if count > 1 else ""
        print(f"{game} env: {call} answered result_code {code} (an error env_obs){again}: {message}",
              file=sys.stderr, flush=True)


def _power_of_ten(n: int) -> bool:
    while n % 10 == 0:
        n //= 10
    return n == 1
