"""Validate an episode's `usr_conf` (SPEC §3) and resolve its chest ids.

The real server silently returned `None` on a bad config; here every mistake raises
`UsrConfError` naming the key and what it allows, so a typo in a curriculum fails at once.
"""
from __future__ import annotations

import difflib
from numbers import Integral

import numpy as np

from realm.constants import DEFAULT_MAX_STEP, MAX_MAX_STEP, NUM_TREASURE_SLOTS, TALENT_TYPE_SUPER_FLASH
from realm.protocol import EpisodeConfig

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
