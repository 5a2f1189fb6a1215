"""What a sweep checks and takes before it starts anything: the study's one sweep process (a lock),
a results folder that belongs to its study, and a Ray address every run can join. Each refusal is
a SweepError that names what to do instead."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from tuning.sweep_space import SweepError
from workflow.supervision.ray_cluster import check_address

LOCK_FILE = "sweep.lock"


def hold(out: Path):
    """One sweep process per study: an flock on sweeps/<name>/sweep.lock (released however it ends)."""
    fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode().strip()
        os.close(fd)
        raise SweepError(f"sweep {out.name} is in use by another sweep process (pid {holder}); wait for it or "
                         f"stop it (kill -TERM {holder}), then run this again to resume") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def check_out(out: Path, report_only: bool) -> None:
    if report_only and not (out / "study.db").exists():
        raise SweepError(f"--report: no study at {out / 'study.db'}")
    if not (out / "study.db").exists() and (out / "runs").exists():
        raise SweepError(f"{out / 'runs'} exists without {out / 'study.db'}: remove {out} or choose another [sweep] name")


def check_ray(address: str) -> None:
    """A cluster every run can join: "local" would start one Ray instance per run (use --jobs)."""
    if address == "local":
        raise SweepError("--ray local would start a Ray instance per run: on one machine use --jobs; for a "
                         "cluster give auto or the head's HOST:PORT (ray start --head)")
    try:
        check_address(address)
    except ValueError as e:
        raise SweepError(str(e)) from None
