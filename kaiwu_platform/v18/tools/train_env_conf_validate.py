"""`read_usr_conf` and `check_usr_conf`, as a 2025 package's train_workflow calls them before
`env.reset(usr_conf=...)`: read the package's train_env_conf.toml, then check it once, so a
bad file stops the workflow with the key named instead of failing later inside the env."""
from __future__ import annotations

from kaiwudrl.common.utils.env_conf_file import logged_check, read_env_conf_file
from realm.back_to_the_realm.constants import VIEW_RADIUS

INT_KEYS = ("start", "end", "treasure_count", "talent_type", "max_step", "view_size")
BOOL_KEYS = ("treasure_random",)
LIST_KEYS = ("treasure_id",)


def _is_int(value) -> bool:
    return type(value) is int  # bool is an int subclass: true/false are not ids or counts


def _type_error(key: str, value) -> str | None:
    """What is wrong with the type of `value` for `key`, or None. Ranges and unknown keys are
    check_usr_conf's, whose message can list the allowed values and keys."""
    if key in BOOL_KEYS:
        return None if isinstance(value, bool) else "must be true or false"
    if key in LIST_KEYS:
        ok = isinstance(value, list) and all(_is_int(v) for v in value)
        return None if ok else "must be a list of integers"
    if key in INT_KEYS:
        return None if _is_int(value) else "must be an integer"
    return None


def read_usr_conf(usr_conf_file, logger):
    """The file's [env_conf] as {"env_conf": {...}} plus the env's view_size, or None after
    logging which file or key is wrong (missing, not TOML, no [env_conf], a value's type)."""
    loaded = read_env_conf_file(usr_conf_file, logger)
    if loaded is None:
        return None
    env_conf = loaded["env_conf"]
    for key, value in env_conf.items():
        problem = _type_error(key, value)
        if problem:
            logger.error(f"usr_conf file {usr_conf_file}: env_conf.{key} = {value!r} {problem}, please check")
            return None
    return {"env_conf": {**env_conf, "view_size": VIEW_RADIUS}}


def check_usr_conf(usr_conf, logger) -> bool:
    """True when the simulator accepts `usr_conf`; otherwise False after logging the key and
    what it allows."""
    from realm.back_to_the_realm.usr_conf import validate_env_conf

    return logged_check(validate_env_conf, usr_conf, logger)
