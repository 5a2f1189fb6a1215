"""The episode configuration `{"env_conf": {...}}` (train_env_conf.toml as parsed), checked
against the official ranges (SPEC §5) before an episode starts.

The platform marks a task with an out-of-range value failed and the game script clamps; here
every mistake raises `GorgeUsrConfError` naming the key, the value and what is allowed, so a
typo in a curriculum fails at once. Types are exact as in a parsed toml: a bool is not an int.
Missing keys take the official defaults; `None` or `{}` is the official default episode.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from realm.gorge_chase.constants import (
    BUFF_COOLDOWN_RANGE,
    BUFF_COUNT_RANGE,
    DEFAULT_ENV_CONF,
    MAX_STEP_RANGE,
    MONSTER_INTERVAL_RANGE,
    MONSTER_SPEEDUP_RANGE,
    NO_SECOND_MONSTER,
    OPEN_MAP_IDS,
    RANDOM_VALUE,
    TALENT_COOLDOWN_RANGE,
    TREASURE_COUNT_RANGE,
)
from realm.gorge_chase.errors import USR_CONF_SHAPE, USR_CONF_VALUE
from realm.back_to_the_realm.usr_conf import UsrConfError, did_you_mean

TOP_LEVEL_KEYS = ("env_conf",)


def _span(r) -> str:
    return f"{r[0]}..{r[1]}"


ALLOWED = {
    "map": "a non-empty list of map ids (ints)",
    "map_random": "true or false (a bool)",
    "treasure_count": f"an int in {_span(TREASURE_COUNT_RANGE)}",
    "buff_count": f"an int in {_span(BUFF_COUNT_RANGE)}",
    "buff_cooldown": f"an int in {_span(BUFF_COOLDOWN_RANGE)}",
    "talent_cooldown": f"an int in {_span(TALENT_COOLDOWN_RANGE)}",
    "monster_interval": f"-1 (random in {_span(MONSTER_INTERVAL_RANGE)}), an int in {_span(MONSTER_INTERVAL_RANGE)}, "
                        f"or -2 (no second monster; the game script's extension, outside the official range)",
    "monster_speedup": f"-1 (random in {_span(MONSTER_SPEEDUP_RANGE)}) or an int in {_span(MONSTER_SPEEDUP_RANGE)}",
    "max_step": f"an int in {_span(MAX_STEP_RANGE)}",
}
RANGES = {
    "treasure_count": TREASURE_COUNT_RANGE,
    "buff_count": BUFF_COUNT_RANGE,
    "buff_cooldown": BUFF_COOLDOWN_RANGE,
    "talent_cooldown": TALENT_COOLDOWN_RANGE,
    "max_step": MAX_STEP_RANGE,
}


class GorgeUsrConfError(UsrConfError):
    """An invalid gorge_chase usr_conf; the message names the key, the value and what is allowed.
    `result_code`: the platform's code for it in an error env_obs (realm.gorge_chase.errors)."""

    result_code = USR_CONF_SHAPE  # not {"env_conf": {...}}, or an unknown key


class GorgeUsrConfValueError(GorgeUsrConfError):
    """A usr_conf value of the wrong type or out of range."""

    result_code = USR_CONF_VALUE


@dataclass(frozen=True)
class EnvConf:
    """A checked env_conf. monster_interval / monster_speedup keep -1 (drawn at reset) and -2."""

    map: tuple[int, ...]
    map_random: bool
    treasure_count: int
    buff_count: int
    buff_cooldown: int
    talent_cooldown: int
    monster_interval: int
    monster_speedup: int
    max_step: int


def default_usr_conf() -> dict:
    """The official package's train_env_conf.toml as parsed (a new dict)."""
    return {"env_conf": {k: (list(v) if isinstance(v, list) else v) for k, v in DEFAULT_ENV_CONF.items()}}


def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _fail(key: str, value, detail: str = "", allowed: str | None = None) -> GorgeUsrConfValueError:
    extra = f" ({detail})" if detail else ""
    return GorgeUsrConfValueError(f"usr_conf['env_conf'][{key!r}] = {value!r} is invalid{extra}: allowed "
                                  f"{allowed or ALLOWED[key]}")


def _check_known(table: dict, allowed, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise GorgeUsrConfError(f"unknown key {key!r} in {where}; allowed keys: {', '.join(allowed)}"
                                    f"{did_you_mean(key, allowed)}")


def validate_usr_conf(usr_conf, map_ids=OPEN_MAP_IDS) -> EnvConf:
    """Check `usr_conf` and fill defaults. `map_ids`: the ids the env's maps answer to (the
    official 1..10 by default; a generated or folder source may allow others)."""
    if usr_conf is None:
        usr_conf = {}
    if not isinstance(usr_conf, dict):
        raise GorgeUsrConfError(f"usr_conf must be a dict like {{'env_conf': {{...}}}} or None, got "
                                f"{type(usr_conf).__name__}")
    _check_known(usr_conf, TOP_LEVEL_KEYS, "usr_conf")
    table = usr_conf.get("env_conf") or {}
    if not isinstance(table, dict):
        raise GorgeUsrConfError(f"usr_conf['env_conf'] must be a dict of {', '.join(ALLOWED)}, got "
                                f"{type(table).__name__}")
    _check_known(table, ALLOWED, "usr_conf['env_conf']")
    conf = {**DEFAULT_ENV_CONF, **table}

    maps = conf["map"]
    id_help = _ids_help(map_ids)
    if not isinstance(maps, (list, tuple)) or not maps:
        raise _fail("map", maps, allowed=f"a non-empty list of map ids in {id_help}")
    for m in maps:
        if not _is_int(m) or m not in map_ids:
            raise _fail("map", maps, f"{m!r} is not a map id", allowed=f"a non-empty list of map ids in {id_help}")
    if not isinstance(conf["map_random"], bool):
        raise _fail("map_random", conf["map_random"])
    values = {}
    for key, (lo, hi) in RANGES.items():
        value = conf[key]
        if not _is_int(value) or not lo <= value <= hi:
            raise _fail(key, value)
        values[key] = int(value)
    interval = conf["monster_interval"]
    if not _is_int(interval) or not (interval in (RANDOM_VALUE, NO_SECOND_MONSTER)
                                     or MONSTER_INTERVAL_RANGE[0] <= interval <= MONSTER_INTERVAL_RANGE[1]):
        raise _fail("monster_interval", interval)
    speedup = conf["monster_speedup"]
    if not _is_int(speedup) or not (speedup == RANDOM_VALUE
                                    or MONSTER_SPEEDUP_RANGE[0] <= speedup <= MONSTER_SPEEDUP_RANGE[1]):
        raise _fail("monster_speedup", speedup)
    return EnvConf(map=tuple(int(m) for m in maps), map_random=conf["map_random"], monster_interval=int(interval),
                   monster_speedup=int(speedup), **values)


def _ids_help(map_ids) -> str:
    if isinstance(map_ids, range):
        return f"{map_ids.start}..{map_ids.stop - 1}"
    ids = sorted(map_ids)
    if ids and ids == list(range(ids[0], ids[-1] + 1)):
        return f"{ids[0]}..{ids[-1]}"
    return "{" + ", ".join(str(i) for i in ids) + "}"
