"""Reading a package's train_env_conf.toml, as every version's `tools.train_env_conf_validate`
does, and checking it by its game's rules (the simulator's validator, so they cannot drift
apart): the file as parsed, or None / False after logging why."""
from __future__ import annotations

import os

import toml


def read_env_conf_file(usr_conf_file, logger):
    """The TOML file as parsed when it exists, parses and holds an [env_conf] table; else None after
    logging which file and what is wrong."""
    if not usr_conf_file or not os.path.isfile(usr_conf_file):
        logger.error(f"usr_conf file {usr_conf_file!r} not found, please check")
        return None
    try:
        with open(usr_conf_file, "r", encoding="utf-8") as file:
            loaded = toml.load(file)
    except Exception as e:  # toml 0.10 raises assorted errors (not only TomlDecodeError) on broken files
        logger.error(f"usr_conf file {usr_conf_file} could not be read as TOML: {e}")
        return None
    if not isinstance(loaded.get("env_conf"), dict):
        logger.error(f"usr_conf file {usr_conf_file} has no [env_conf] table, please check")
        return None
    return loaded


def logged_check(validate, usr_conf, logger, where: str = "usr_conf") -> bool:
    """True when `validate(usr_conf)` (a game's realm validator) accepts it; otherwise False after
    logging `where` and the key with what it allows (its realm.back_to_the_realm.usr_conf.UsrConfError)."""
    from realm.back_to_the_realm.usr_conf import UsrConfError

    if not usr_conf:
        logger.error(f"{where} is None, please check")
        return False
    try:
        validate(usr_conf)
    except UsrConfError as e:
        logger.error(f"{where} is invalid: {e}")
        return False
    return True


def checked_usr_conf(usr_conf_file, validate, logger):
    """The file as parsed when `validate` (its game's realm validator) accepts it, else None after
    logging which file or key is wrong: what the 2026 engine's read_usr_conf does."""
    usr_conf = read_env_conf_file(usr_conf_file, logger)
    if usr_conf is None:
        return None
    return usr_conf if logged_check(validate, usr_conf, logger, f"usr_conf file {usr_conf_file}") else None
