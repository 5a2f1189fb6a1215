"""`read_usr_conf(path, logger)`, as a gorge_chase train_workflow calls it before
`env.reset(usr_conf)`: the package's train_env_conf.toml read and checked once, so a bad file
stops the workflow with the key named. The rules are the simulator's
(realm.gorge_chase.usr_conf.validate_usr_conf: the official keys, types and ranges)."""
from __future__ import annotations

import os

import toml


def read_usr_conf(usr_conf_file, logger):
    """The file as parsed (`{"env_conf": {...}}`, what the env's reset takes), or None after
    logging which file or key is wrong."""
    if not usr_conf_file or not os.path.isfile(usr_conf_file):
        logger.error(f"usr_conf file {usr_conf_file!r} not found, please check")
        return None
    try:
        with open(usr_conf_file, "r", encoding="utf-8") as file:
            usr_conf = toml.load(file)
    except Exception as e:  # toml 0.10 raises assorted errors on broken files
        logger.error(f"usr_conf file {usr_conf_file} could not be read as TOML: {e}")
        return None
    if not isinstance(usr_conf.get("env_conf"), dict):
        logger.error(f"usr_conf file {usr_conf_file} has no [env_conf] table, please check")
        return None
    from realm.gorge_chase.usr_conf import GorgeUsrConfError, validate_usr_conf

    try:
        validate_usr_conf(usr_conf)
    except GorgeUsrConfError as e:
        logger.error(f"usr_conf file {usr_conf_file} is invalid: {e}")
        return None
    return usr_conf
