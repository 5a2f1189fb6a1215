"""The episode configuration `{"env_conf": {...}}` (train_env_conf.toml as parsed), checked
against the official keys and ranges (the guide's 环境配置 table) before an episode starts.

The platform marks a training task with a wrong value failed ("若配置错误，训练任务会变为失败状态");
here every mistake raises `VacuumUsrConfError` naming the key, the value and what is allowed.
Types are exact as in a parsed toml: a bool is not an int. Missing keys take the official
defaults; `None` or `{}` is the official default episode.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from realm.robot_vacuum.constants import (
    BATTERY_MAX_RANGE,
    CHARGER_COUNT_RANGE,
    DEFAULT_ENV_CONF,
    MAX_STEP_RANGE,
    OPEN_MAP_IDS,
    ROBOT_COUNT_RANGE,
)
from realm.robot_vacuum.errors import USR_CONF_SHAPE, USR_CONF_VALUE
from realm.back_to_the_realm.usr_conf import UsrConfError, did_you_mean

TOP_LEVEL_KEYS = ("env_conf",)
#: the integer keys and their inclusive ranges
RANGES = {
    "robot_count": ROBOT_COUNT_RANGE,
    "charger_count": CHARGER_COUNT_RANGE,
    "max_step": MAX_STEP_RANGE,
    "battery_max": BATTERY_MAX_RANGE,
}
ALLOWED = {
    "map": "a non-empty list of map ids (ints)",
    "map_random": "true or false (a bool)",
    **{key: f"an int in {lo}..{hi}" for key, (lo, hi) in RANGES.items()},
}


class VacuumUsrConfError(UsrConfError):
    """An invalid robot_vacuum usr_conf; the message names the key, the value and what is allowed.
    `result_code`: the platform's code for it in an error env_obs (realm.answered_errors)."""

    result_code = USR_CONF_SHAPE  # not {"env_conf": {...}}, or an unknown key


class VacuumUsrConfValueError(VacuumUsrConfError):
    """A usr_conf value of the wrong type or out of range."""

    result_code = USR_CONF_VALUE


@dataclass(frozen=True)
class EnvConf:
    """A checked env_conf."""

    map: tuple[int, ...]
    map_random: bool
    robot_count: int
    charger_count: int
    max_step: int
    battery_max: int


def default_usr_conf() -> dict:
    """The official package's train_env_conf.toml as parsed (a new dict)."""
    return {"env_conf": {k: (list(v) if isinstance(v, list) else v) for k, v in DEFAULT_ENV_CONF.items()}}


def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _fail(key: str, value, allowed: str, detail: str = "") -> VacuumUsrConfValueError:
    extra = f" ({detail})" if detail else ""
    return VacuumUsrConfValueError(f"usr_conf['env_conf'][{key!r}] = {value!r} is invalid{extra}: allowed {allowed}")


def _check_known(table: dict, allowed, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise VacuumUsrConfError(f"unknown key {key!r} in {where}; allowed keys: {', '.join(allowed)}"
                                     f"{did_you_mean(key, allowed)}")


def validate_usr_conf(usr_conf, map_ids=OPEN_MAP_IDS) -> EnvConf:
    """Check `usr_conf` and fill defaults. `map_ids`: the ids the env's maps answer to (the
    official 1..10 by default; a generated or folder source may allow others)."""
    if usr_conf is None:
        usr_conf = {}
    if not isinstance(usr_conf, dict):
        raise VacuumUsrConfError(f"usr_conf must be a dict like {{'env_conf': {{...}}}} or None, got "
                                 f"{type(usr_conf).__name__}")
    _check_known(usr_conf, TOP_LEVEL_KEYS, "usr_conf")
    table = usr_conf.get("env_conf") or {}
    if not isinstance(table, dict):
        raise VacuumUsrConfError(f"usr_conf['env_conf'] must be a dict of {', '.join(ALLOWED)}, got "
                                 f"{type(table).__name__}")
    _check_known(table, ALLOWED, "usr_conf['env_conf']")
    conf = {**DEFAULT_ENV_CONF, **table}

    maps = conf["map"]
    allowed_maps = f"a non-empty list of map ids in {ids_help(map_ids)}"
    if not isinstance(maps, (list, tuple)) or not maps:
        raise _fail("map", maps, allowed_maps)
    for m in maps:
        if not _is_int(m) or m not in map_ids:
            raise _fail("map", maps, allowed_maps, f"{m!r} is not a map id")
    if not isinstance(conf["map_random"], bool):
        raise _fail("map_random", conf["map_random"], ALLOWED["map_random"])
    values = {}
    for key, (lo, hi) in RANGES.items():
        value = conf[key]
        if not _is_int(value) or not lo <= value <= hi:
            raise _fail(key, value, ALLOWED[key])
        values[key] = int(value)
    return EnvConf(map=tuple(int(m) for m in maps), map_random=conf["map_random"], **values)


def ids_help(map_ids) -> str:
    """Map ids as a reader wants them in a message: "1..10", or the set."""
    if isinstance(map_ids, range):
        return f"{map_ids.start}..{map_ids.stop - 1}"
    ids = sorted(map_ids)
    if ids and ids == list(range(ids[0], ids[-1] + 1)):
        return f"{ids[0]}..{ids[-1]}"
    return "{" + ", ".join(str(i) for i in ids) + "}"
