"""`read_usr_conf(path, logger)`, as a robot_vacuum train_workflow calls it before
`env.reset(usr_conf)`: the package's train_env_conf.toml read and checked once, so a bad file
stops the workflow with the key named. The rules are the simulator's
(realm.robot_vacuum.usr_conf.validate_usr_conf: the official keys, types and ranges)."""
from __future__ import annotations

from kaiwudrl.common.utils.env_conf_file import checked_usr_conf


def read_usr_conf(usr_conf_file, logger):
    """The file as parsed (`{"env_conf": {...}}`, what the env's reset takes), or None after
    logging which file or key is wrong."""
    from realm.robot_vacuum.usr_conf import validate_usr_conf

    return checked_usr_conf(usr_conf_file, validate_usr_conf, logger)
