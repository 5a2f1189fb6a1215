"""`read_usr_conf(path, logger)`, as a gorge_chase train_workflow calls it before
`env.reset(usr_conf)`: the package's train_env_conf.toml read and checked once, so a bad file
stops the workflow with the key named. The rules are the simulator's
(realm.gorge_chase.usr_conf.validate_usr_conf: the official keys, types and ranges)."""
from __future__ import annotations

from kaiwudrl.common.utils.env_conf_file import logged_check, read_env_conf_file


def read_usr_conf(usr_conf_file, logger):
    """The file as parsed (`{"env_conf": {...}}`, what the env's reset takes), or None after
    logging which file or key is wrong."""
    usr_conf = read_env_conf_file(usr_conf_file, logger)
    if usr_conf is None:
        return None
    from realm.gorge_chase.usr_conf import validate_usr_conf

    return usr_conf if logged_check(validate_usr_conf, usr_conf, logger, f"usr_conf file {usr_conf_file}") else None
