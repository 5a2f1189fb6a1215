"""`read_usr_conf` and `check_usr_conf`, as a back_to_the_realm_v2 train_workflow calls them
before `env.reset(usr_conf=...)`: read the package's train_env_conf.toml and check it once, so a
bad file stops the workflow with the key named instead of failing later inside the env. The
rules are the simulator's (realm.v2.usr_conf.validate_usr_conf: the official keys and ranges)."""
from __future__ import annotations

import os

import toml


def read_usr_conf(usr_conf_file, logger):
    """The file as parsed (`{"env_conf": {"map_name": ..., <map_name>: {...}}}`), the form the v2
    env's reset takes, or None after logging which file or key is wrong."""
    if not usr_conf_file or not os.path.isfile(usr_conf_file):
        logger.error(f"usr_conf file {usr_conf_file!r} not found, please check")
        return None
    try:
        with open(usr_conf_file, "r", encoding="utf-8") as file:
            usr_conf = toml.load(file)
    except Exception as e:  # toml 0.10 raises assorted errors (not only TomlDecodeError) on broken files
        logger.error(f"usr_conf file {usr_conf_file} could not be read as TOML: {e}")
        return None
    if not isinstance(usr_conf.get("env_conf"), dict):
        logger.error(f"usr_conf file {usr_conf_file} has no [env_conf] table, please check")
        return None
    if not check_usr_conf(usr_conf, logger, usr_conf_file):
        return None
    return usr_conf


def check_usr_conf(usr_conf, logger, where: str = "usr_conf") -> bool:
    """True when the simulator accepts `usr_conf`; otherwise False after logging the key and
    what it allows."""
    if not usr_conf:
        logger.error("usr_conf is None, please check")
        return False
    from realm.v2.usr_conf import UsrConfV2Error, validate_usr_conf

    try:
        validate_usr_conf(usr_conf)
    except UsrConfV2Error as e:
        logger.error(f"{where} is invalid: {e}")
        return False
    return True
