"""Validate an episode's `usr_conf` (SPEC §3) and resolve its chest ids; the 2025 protocol's
`{"env_conf": {...}}` is validated here too and resolved through the same path.

The real server silently returned `None` on a bad config; here every mistake raises
`UsrConfError` naming the key and what it allows, so a typo in a curriculum fails at once.
"""
from __future__ import annotations

import difflib
from numbers import Integral

import numpy as np

from realm.back_to_the_realm.constants import DEFAULT_MAX_STEP, MAX_MAX_STEP, NUM_TREASURE_SLOTS, TALENT_TYPE_SUPER_FLASH
from realm.back_to_the_realm.protocol import EpisodeConfig

SLOT_IDS = range(1, NUM_TREASURE_SLOTS + 1)  # ids that may be start, end or chest
DEFAULTS = {
    "start": 2,
    "end": 1,
    "treasure_random": 1,
    "treasure_num": 8,
    "treasure_id": None,  # [] when not random and not given
    "max_step": DEFAULT_MAX_STEP,
    "talent_type": TALENT_TYPE_SUPER_FLASH,
}
ALLOWED = {
    "start": "an int in 1..15, different from end",
    "end": "an int in 1..15, different from start",
    "treasure_random": "0 or 1",
    "treasure_num": f"an int in 0..{NUM_TREASURE_SLOTS - 2}",
    "treasure_id": "a list of unique ints in 1..15 without the start and end ids ([] = no chests)",
    "max_step": f"an int in 1..{MAX_MAX_STEP} (the game's limit)",
    "talent_type": f"{TALENT_TYPE_SUPER_FLASH} (super flash)",
}
TOP_LEVEL_KEYS = ("diy",)


class UsrConfError(ValueError):
    """An invalid episode configuration; the message names the key and its allowed values."""


def _fail(key: str, value, detail: str = "") -> UsrConfError:
    extra = f" ({detail})" if detail else ""
    return UsrConfError(f"usr_conf['diy'][{key!r}] = {value!r} is invalid{extra}: allowed {ALLOWED[key]}")


def did_you_mean(key, allowed) -> str:
    """'; did you mean 'x'?' for the closest allowed key, or '' when none is close."""
    close = difflib.get_close_matches(str(key), list(allowed), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _unknown_key(key, allowed, where: str) -> UsrConfError:
    return UsrConfError(f"unknown key {key!r} in {where}; allowed keys: {', '.join(allowed)}{did_you_mean(key, allowed)}")


def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _int_in(key: str, value, allowed_values) -> int:
    if not _is_int(value) or int(value) not in allowed_values:
        raise _fail(key, value)
    return int(value)


def _treasure_ids(value) -> list[int]:
    if not isinstance(value, (list, tuple)):
        raise _fail("treasure_id", value, "not a list")
    ids = []
    for item in value:
        if not _is_int(item) or int(item) not in SLOT_IDS:
            raise _fail("treasure_id", value, f"{item!r} is not an id in 1..15")
        ids.append(int(item))
    if len(set(ids)) != len(ids):
        raise _fail("treasure_id", value, "ids repeat")
    return ids


def parse_usr_conf(usr_conf: dict | None, rng: np.random.Generator | None = None) -> EpisodeConfig:
    """`usr_conf` ({"diy": {...}} or None for the defaults) -> EpisodeConfig with chests drawn.

    Random chests are drawn from `rng` without repeats from ids 1..15 minus start and end and
    listed in ascending order. The resolved `treasure_num` is the episode's chest count.
    """
    if usr_conf is None:
        usr_conf = {}
    if not isinstance(usr_conf, dict):
        raise UsrConfError(f"usr_conf must be a dict like {{'diy': {{...}}}} or None, got {type(usr_conf).__name__}")
    for key in usr_conf:
        if key not in TOP_LEVEL_KEYS:
            raise _unknown_key(key, TOP_LEVEL_KEYS, "usr_conf")
    diy = usr_conf.get("diy", {})
    if diy is None:
        diy = {}
    if not isinstance(diy, dict):
        raise UsrConfError(f"usr_conf['diy'] must be a dict of {', '.join(DEFAULTS)}, got {type(diy).__name__}")
    for key in diy:
        if key not in DEFAULTS:
            raise _unknown_key(key, DEFAULTS, "usr_conf['diy']")
    conf = {**DEFAULTS, **diy}

    start = _int_in("start", conf["start"], SLOT_IDS)
    end = _int_in("end", conf["end"], SLOT_IDS)
    if start == end:
        raise _fail("end", end, f"equals start {start}")
    treasure_random = conf["treasure_random"]
    if isinstance(treasure_random, bool):
        treasure_random = int(treasure_random)
    treasure_random = _int_in("treasure_random", treasure_random, (0, 1))
    treasure_num = _int_in("treasure_num", conf["treasure_num"], range(NUM_TREASURE_SLOTS - 1))
    max_step = conf["max_step"]
    if not _is_int(max_step) or not 1 <= max_step <= MAX_MAX_STEP:
        raise _fail("max_step", max_step)
    talent_type = _int_in("talent_type", conf["talent_type"], (TALENT_TYPE_SUPER_FLASH,))
    given_ids = [] if conf["treasure_id"] is None else _treasure_ids(conf["treasure_id"])

    if treasure_random and conf["treasure_id"] is not None:
        raise _fail("treasure_id", conf["treasure_id"], "is for treasure_random = 0; with treasure_random = 1 the "
                    "chests are drawn (give treasure_num)")
    if not treasure_random and "treasure_num" in diy and diy["treasure_num"] != len(given_ids):
        raise _fail("treasure_num", diy["treasure_num"], f"treasure_random = 0 places the {len(given_ids)} chest(s) "
                    "of treasure_id; leave treasure_num out or make it match")
    if treasure_random:
        pool = np.array([i for i in SLOT_IDS if i not in (start, end)])
        rng = rng if rng is not None else np.random.default_rng()
        treasure_id = sorted(int(i) for i in rng.choice(pool, size=treasure_num, replace=False))
    else:
        for i in given_ids:
            if i in (start, end):
                raise _fail("treasure_id", conf["treasure_id"], f"{i} is the {'start' if i == start else 'end'} id")
        treasure_id = sorted(given_ids)
    return EpisodeConfig(
        start=start,
        end=end,
        treasure_random=treasure_random,
        treasure_num=len(treasure_id),
        treasure_id=treasure_id,
        max_step=int(max_step),
        talent_type=talent_type,
    )


# ---- The 2025 protocol (code package 18.0.2): usr_conf = {"env_conf": {...}} ---------------------
# The platform's tools/train_env_conf_validate.py (read_usr_conf + check_usr_conf) is the reference:
# every key is required and typed exactly (ints are `int`, treasure_random is `bool`), so a conf
# that passes here passes there. A valid env_conf then goes through `parse_usr_conf`, so both
# protocols share one EpisodeConfig and one set of rules.

ENV_CONF_ALLOWED = {
    "start": "an int in 1..15, different from end",
    "end": "an int in 1..15, different from start",
    "treasure_random": "true or false (a bool; 0 and 1 are not bools)",
    "treasure_count": f"an int in 0..{NUM_TREASURE_SLOTS - 2} (the chest count when treasure_random is true)",
    "treasure_id": "a list of unique ints in 1..15, without the start and end ids when treasure_random is false ([] = no chests)",
    "talent_type": f"{TALENT_TYPE_SUPER_FLASH} (super flash)",
    "max_step": f"an int in 1..{MAX_MAX_STEP}",
    "view_size": "an int >= 1 (optional: the platform's read_usr_conf adds it; the served window stays 51x51)",
}
ENV_CONF_REQUIRED = ("start", "end", "treasure_random", "treasure_count", "treasure_id", "talent_type", "max_step")
ENV_CONF_TOP_LEVEL_KEYS = ("env_conf",)
#: The official package's conf/train_env_conf.toml: what `RealmEnv18.reset()` plays without a usr_conf.
DEFAULT_ENV_CONF = {"start": 2, "end": 1, "treasure_random": True, "treasure_count": 8, "treasure_id": [],
                    "talent_type": TALENT_TYPE_SUPER_FLASH, "max_step": DEFAULT_MAX_STEP}


def _env_fail(key: str, value, detail: str = "") -> UsrConfError:
    extra = f" ({detail})" if detail else ""
    return UsrConfError(f"usr_conf['env_conf'][{key!r}] = {value!r} is invalid{extra}: allowed {ENV_CONF_ALLOWED[key]}")


def _exact_int(key: str, value, low: int, high: int | None = None) -> int:
    """`value` if it is an `int` (not a bool, float or numpy int, as the platform checks) in low..high."""
    if type(value) is not int:
        raise _env_fail(key, value, f"a {type(value).__name__}, not an int")
    if value < low or (high is not None and value > high):
        raise _env_fail(key, value)
    return value


def validate_env_conf(usr_conf) -> None:
    """Raise UsrConfError naming the key and what it allows unless `usr_conf` is a valid
    2025 `{"env_conf": {...}}`. `view_size` is accepted and ignored: the window is 51x51."""
    if not isinstance(usr_conf, dict):
        raise UsrConfError(f"usr_conf must be a dict like {{'env_conf': {{...}}}}, got {type(usr_conf).__name__}")
    for key in usr_conf:
        if key not in ENV_CONF_TOP_LEVEL_KEYS:
            hint = " ({'diy': ...} is the 2024 protocol's usr_conf)" if key == "diy" else ""
            raise UsrConfError(str(_unknown_key(key, ENV_CONF_TOP_LEVEL_KEYS, "usr_conf")) + hint)
    if "env_conf" not in usr_conf:
        raise UsrConfError(f"usr_conf needs the key 'env_conf' (a dict of {', '.join(ENV_CONF_REQUIRED)})")
    conf = usr_conf["env_conf"]
    if not isinstance(conf, dict):
        raise UsrConfError(f"usr_conf['env_conf'] must be a dict of {', '.join(ENV_CONF_REQUIRED)}, got {type(conf).__name__}")
    for key in conf:
        if key not in ENV_CONF_ALLOWED:
            raise _unknown_key(key, ENV_CONF_ALLOWED, "usr_conf['env_conf']")
    for key in ENV_CONF_REQUIRED:
        if key not in conf:
            raise UsrConfError(f"usr_conf['env_conf'] is missing {key!r} (every key but view_size is required): "
                               f"allowed {ENV_CONF_ALLOWED[key]}")

    start = _exact_int("start", conf["start"], 1, NUM_TREASURE_SLOTS)
    end = _exact_int("end", conf["end"], 1, NUM_TREASURE_SLOTS)
    if start == end:
        raise _env_fail("end", end, f"equals start {start}")
    treasure_random = conf["treasure_random"]
    if type(treasure_random) is not bool:
        raise _env_fail("treasure_random", treasure_random, f"a {type(treasure_random).__name__}, not a bool")
    _exact_int("treasure_count", conf["treasure_count"], 0, NUM_TREASURE_SLOTS - 2)
    ids = conf["treasure_id"]
    if type(ids) is not list:
        raise _env_fail("treasure_id", ids, f"a {type(ids).__name__}, not a list")
    for item in ids:
        if type(item) is not int or item not in SLOT_IDS:
            raise _env_fail("treasure_id", ids, f"{item!r} is not an int in 1..15")
    if len(set(ids)) != len(ids):
        raise _env_fail("treasure_id", ids, "ids repeat")
    if not treasure_random and (start in ids or end in ids):  # the platform ignores treasure_id when random
        raise _env_fail("treasure_id", ids, f"{start if start in ids else end} is the {'start' if start in ids else 'end'} id")
    _exact_int("talent_type", conf["talent_type"], TALENT_TYPE_SUPER_FLASH, TALENT_TYPE_SUPER_FLASH)
    _exact_int("max_step", conf["max_step"], 1, MAX_MAX_STEP)
    if "view_size" in conf:
        _exact_int("view_size", conf["view_size"], 1)


def env_conf_to_diy(usr_conf: dict) -> dict:
    """A valid 2025 usr_conf as the 2024 `{"diy": {...}}` of the same episode: random chests
    draw `treasure_count` ids, fixed chests are `treasure_id` (the other key is ignored, as on
    the platform)."""
    validate_env_conf(usr_conf)
    conf = usr_conf["env_conf"]
    diy = {"start": conf["start"], "end": conf["end"], "max_step": conf["max_step"], "talent_type": conf["talent_type"]}
    if conf["treasure_random"]:
        diy.update(treasure_random=1, treasure_num=conf["treasure_count"])
    else:
        diy.update(treasure_random=0, treasure_id=list(conf["treasure_id"]))
    return {"diy": diy}


def parse_env_conf(usr_conf: dict, rng: np.random.Generator | None = None) -> EpisodeConfig:
    """A 2025 usr_conf -> the EpisodeConfig that `parse_usr_conf` resolves for it (chests drawn)."""
    return parse_usr_conf(env_conf_to_diy(usr_conf), rng)
