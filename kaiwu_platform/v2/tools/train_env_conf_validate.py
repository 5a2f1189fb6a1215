"""`read_usr_conf` and `check_usr_conf`, as a back_to_the_realm_v2 train_workflow calls them
before `env.reset(usr_conf=...)`: read the package's train_env_conf.toml and check it once, so a
bad file stops the workflow with the key named instead of failing later inside the env. The
rules are the simulator's (realm.back_to_the_realm_v2.usr_conf.validate_usr_conf: the official keys and ranges)."""
from __future__ import annotations

from kaiwudrl.common.utils.env_conf_file import logged_check, read_env_conf_file


def read_usr_conf(usr_conf_file, logger):
    """The file as parsed (`{"env_conf": {"map_name": ..., <map_name>: {...}}}`), the form the v2
    env's reset takes, or None after logging which file or key is wrong."""
    usr_conf = read_env_conf_file(usr_conf_file, logger)
    if usr_conf is None:
        return None
    if not check_usr_conf(usr_conf, logger, usr_conf_file):
        return None
    return usr_conf


def check_usr_conf(usr_conf, logger, where: str = "usr_conf") -> bool:
    """True when the simulator accepts `usr_conf`; otherwise False after logging the key and
    what it allows."""
    from realm.back_to_the_realm_v2.usr_conf import validate_usr_conf

    return logged_check(validate_usr_conf, usr_conf, logger, where)
