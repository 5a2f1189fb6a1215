"""Where a run lives, and which run `--resume` continues.

A run is `<app.run_dir>/<name>/` holding `log/`, `ckpt/<app>_<algo>/`, `ckpt/user/`, `tb/`,
`metrics.csv` and `log/effective_config.toml` (`app.ckpt_dir` may move the checkpoints).
Names: `app.run_name` when set; otherwise a new run is named by its start time
(YYYYmmdd-HHMMSS) and `--resume` picks the run under run_dir whose newest checkpoint is the
most recent. A fresh start never reuses a run that already has checkpoints.

One launcher at a time holds a run (`hold_run`, `RunLock`): a second start or resume of a run in
use is refused before it touches anything, naming the holder.
"""
from __future__ import annotations

import dataclasses

import fcntl
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from workflow.checkpoints import ckpt_files
from workflow.checkpoints.run_state import RUN_STATE_FILE, RunStateError, read_run_state

LOCK_FILE = "launcher.lock"
HOLDER_READ_TRIES = 20  # a holder writes its pid just after taking the lock: re-read this often, 50 ms apart


class RunError(ValueError):
    """A run that cannot be started or resumed as asked."""


@dataclass(frozen=True)
class RunPaths:
    root: Path
    log: Path
    ckpt_root: Path
    tb: Path
    metrics_csv: Path
    replay_ckpt: Path  # reverb's own checkpoint directory (unused unless asked for; keeps /tmp clean)
    app: str
    algo: str

    @property
    def name(self) -> str:
        return self.root.name

    def absolute(self) -> "RunPaths":
        """The same paths, absolute (for a process that changes its working directory)."""
        return dataclasses.replace(self, **{f.name: getattr(self, f.name).absolute() for f in dataclasses.fields(self)
                                            if isinstance(getattr(self, f.name), Path)})

    @property
    def ckpt(self) -> Path:
        """Training checkpoints model.ckpt-N.pkl, Kaiwu's <app>_<algo> layout."""
        return self.ckpt_root / f"{self.app}_{self.algo}"

    @property
    def user_ckpt(self) -> Path:
        return self.ckpt_root / "user"

    @property
    def effective_config(self) -> Path:
        return self.log / "effective_config.toml"

    def make_dirs(self) -> None:
        for path in (self.root, self.log, self.ckpt, self.tb):
            path.mkdir(parents=True, exist_ok=True)

    def create(self) -> None:
        """Make the run's directories, or RunError naming the one that cannot be written; a
        fresh run's partial directories are removed again (nothing is left behind)."""
        fresh = [p for p in (self.root.parent, self.root, self.ckpt_root) if not p.exists()]
        try:
            self.make_dirs()
            for path in (self.log, self.ckpt, self.tb):
                probe = path / f".write-probe-{os.getpid()}"
                probe.write_text("")
                probe.unlink()
        except OSError as e:
            for path in fresh:
                shutil.rmtree(path, ignore_errors=True)
            raise unwritable(e) from e


def unwritable(e: OSError) -> RunError:
    return RunError(f"cannot write the run's files ({e.strerror or e}: {e.filename}); check app.run_dir / app.ckpt_dir")


class RunLock:
    """One launcher per run: an exclusive flock on `<run>/launcher.lock`, held by the launcher for
    the run's life. The OS releases it when the process ends, however it ends (SIGKILL too), so a
    lock never outlives its holder; the file holds the holder's pid for the refusal message."""

    def __init__(self, fd: int, created: list[Path]):
        self._fd: int | None = fd
        self.created = created  # directories made to hold the lock (removed again by discard)

    @classmethod
    def acquire(cls, root: Path) -> "RunLock":
        """Hold run `root` (made when missing), or RunError naming the launcher that holds it; a
        refused start creates and changes nothing in a held run."""
        created = [p for p in (root.parent, root) if not p.exists()]
        try:
            root.mkdir(parents=True, exist_ok=True)
            fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise unwritable(e) from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise RunError(f"run {root.name} ({root}) is in use by another launcher (pid {holder}); wait for it to "
                           f"end or stop it (kill -TERM {holder}), then --resume; or choose another app.run_name") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(fd, created)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def discard(self) -> None:
        """Remove the directories made for the lock (a start that failed leaves nothing), then release."""
        for path in self.created:
            shutil.rmtree(path, ignore_errors=True)
        self.release()

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _holder(fd: int) -> str:
    for _ in range(HOLDER_READ_TRIES):
        pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
        if pid:
            return pid
        time.sleep(0.05)
    return "unknown"


def paths_for(app_cfg, name: str) -> RunPaths:
    root = Path(app_cfg.run_dir) / name
    return RunPaths(
        root=root,
        log=root / "log",
        ckpt_root=Path(app_cfg.ckpt_dir) if app_cfg.ckpt_dir else root / "ckpt",
        tb=root / "tb",
        metrics_csv=root / "metrics.csv",
        replay_ckpt=root / "replay",
        app=app_cfg.app,
        algo=app_cfg.algo,
    )


def _has_checkpoints(paths: RunPaths) -> bool:
    """Any checkpoint files, whole or cut off: a fresh start never writes over them."""
    return bool(ckpt_files.all_checkpoint_files(paths.ckpt))


def _other_checkpoint_folders(paths: RunPaths) -> str:
    """For a refused resume: the run's checkpoint folders of another app and algo, with what to do
    (a config of an earlier release named the v2 agent "ppo_v2": its folder keeps that name)."""
    others = sorted(d.name for d in paths.ckpt_root.iterdir() if d.is_dir() and d != paths.ckpt
                    and ckpt_files.all_checkpoint_files(d)) if paths.ckpt_root.is_dir() else []
    if not others:
        return ""
    return (f"; it has checkpoints in {', '.join(f'ckpt/{name}' for name in others)} (a folder is named <app>_<algo> "
            f"after the [app] that trained it): resume with that app and algo, or rename the folder to "
            f"ckpt/{paths.ckpt.name} when it holds this agent's checkpoints")


def _newest_checkpoint_mtime(paths: RunPaths) -> float:
    found = ckpt_files.all_checkpoint_files(paths.ckpt)
    return max(c.path.stat().st_mtime for c in found) if found else 0.0


def resolve_run(app_cfg, resume: bool, now: float | None = None) -> RunPaths:
    """The run to start (fresh) or continue (`resume`); RunError says why not."""
    paths = locate_run(app_cfg, resume, now)
    check_run(paths, resume)
    return paths


def hold_run(app_cfg, resume: bool) -> tuple[RunPaths, RunLock]:
    """resolve_run, with the run held by this process (RunLock). The lock is taken before the run's
    checkpoints are looked at, so a run in use is refused naming its holder, and two launchers
    never both pass the checks."""
    paths = locate_run(app_cfg, resume)
    lock = RunLock.acquire(paths.root)
    try:
        check_run(paths, resume)
    except RunError:
        lock.discard()
        raise
    return paths, lock


def check_run(paths: RunPaths, resume: bool) -> None:
    """A resume needs a checkpoint; a fresh start must not have one."""
    if resume and not _has_checkpoints(paths):
        raise RunError(f"--resume: run {paths.root} has no checkpoint in {paths.ckpt}{_other_checkpoint_folders(paths)}")
    if not resume and _has_checkpoints(paths):
        raise RunError(f"run {paths.root} already has checkpoints; add --resume to continue it, "
                       f"or choose another app.run_name")


def resume_counters(paths: RunPaths) -> str | None:
    """Check that a resume gets the run's counters back (workflow.checkpoints.run_state): None when
    run_state.json is fine, a line saying what was recovered from its copy, or RunError saying
    what is damaged and how to go on (never a resume with the counters silently at 0)."""
    state_file = paths.ckpt / RUN_STATE_FILE
    try:
        found = read_run_state(paths.ckpt)
        if found is None:
            raise RunStateError(f"{state_file} is missing")
    except RunStateError as e:
        raise RunError(f"--resume: the counters of run {paths.name} (env steps, episodes) are lost: {e}. Restore "
                       f"{state_file} from a backup, or, to resume with the counters at 0, write an empty table "
                       f"into it: echo '{{}}' > {state_file}") from None
    if not found.recovered:
        return None
    newest = ckpt_files.latest_checkpoint(paths.ckpt)
    entry = found.entries.get(str(newest.id)) if newest else None
    counters = entry.get("counters") if isinstance(entry, dict) else entry
    return (f"{found.recovered}; the run's counters are recovered from the copy "
            f"(checkpoint {newest.id if newest else '-'}: {counters})")


def locate_run(app_cfg, resume: bool, now: float | None = None) -> RunPaths:
    """Which run: the named one, the newest with checkpoints (`resume`), or a new one named by the
    time; looks at nothing inside a named run."""
    run_dir = Path(app_cfg.run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise RunError(f"app.run_dir = {str(run_dir)!r} is a file, not a directory")
    if app_cfg.run_name:
        return paths_for(app_cfg, app_cfg.run_name)
    if resume:
        candidates = [paths_for(app_cfg, d.name) for d in sorted(run_dir.iterdir())] if run_dir.is_dir() else []
        candidates = [p for p in candidates if _has_checkpoints(p)]
        if not candidates:
            raise RunError(f"--resume: no run with checkpoints under {run_dir}/ (set app.run_name to pick one)")
        return max(candidates, key=_newest_checkpoint_mtime)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    name, n = stamp, 1
    while (run_dir / name).exists():
        n += 1
        name = f"{stamp}-{n}"
    return paths_for(app_cfg, name)
