"""Joining a Ray cluster, shared by the Ray launcher and Ray evaluation: "local" starts an
instance on this machine (with the slots the caller declares), "auto" joins the cluster this
host belongs to, HOST:PORT a given head. Ray's own logging stays at warnings; actors' output
goes to the run's files, not to the driver's terminal.

Ray starts its worker processes at niceness 15; a learner or aisrv would then yield to any other
process on the machine. A local instance starts them at 0; on a cluster, each actor lowers its
own niceness where it may (`ray start --system-config='{"worker_niceness": 0}'` does it for all).
"""
from __future__ import annotations

import importlib.util
import logging
import os
import re
import time

ADDRESS_HELP = "local (start Ray on this machine), auto (the cluster this host belongs to) or HOST:PORT (a head)"


def check_address(address: str) -> str:
    """The address, or ValueError saying what is allowed (or that Ray is not installed)."""
    if not (address in ("local", "auto") or re.fullmatch(r"[^:\s]+:\d+", address)):
        raise ValueError(f"--ray {address!r}: expected {ADDRESS_HELP}")
    if importlib.util.find_spec("ray") is None:
        raise ValueError("--ray: Ray is not installed in this environment; ./train.sh --ray installs "
                         "requirements-ray.txt into .venv (or: REALM_WITH_RAY=1 source tools/venv.sh)")
    return address


def join(address: str, local_resources: dict | None = None, env_vars: dict | None = None) -> float:
    """ray.init for `address`; returns the seconds it took."""
    import ray

    started = time.monotonic()
    env = {"TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"), **(env_vars or {})}
    options = dict(runtime_env={"env_vars": env}, logging_level=logging.WARNING, log_to_driver=False,
                   configure_logging=False)
    if address == "local":
        ray.init(address="local", include_dashboard=False, resources=local_resources or {},
                 _system_config={"worker_niceness": 0}, **options)
    else:
        ray.init(address=check_address(address), **options)
    return time.monotonic() - started


def normal_priority() -> None:
    """This process back at niceness 0 where it may (Ray's workers start at 15)."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except (PermissionError, OSError):
        pass
