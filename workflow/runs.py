"""Where a run lives, and which run `--resume` continues.

A run is `<app.run_dir>/<name>/` holding `log/`, `ckpt/<app>_<algo>/`, `ckpt/user/`, `tb/`,
`metrics.csv` and `log/effective_config.toml` (`app.ckpt_dir` may move the checkpoints).
Names: `app.run_name` when set; otherwise a new run is named by its start time
(YYYYmmdd-HHMMSS) and `--resume` picks the run under run_dir whose newest checkpoint is the
most recent. A fresh start never reuses a run that already has checkpoints.
"""
from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from workflow import ckpt_files


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
            raise RunError(f"cannot write the run's files ({e.strerror or e}: {e.filename}); check app.run_dir / "
                           "app.ckpt_dir") from e


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
    return bool(ckpt_files.list_checkpoints(paths.ckpt))


def _newest_checkpoint_mtime(paths: RunPaths) -> float:
    found = ckpt_files.list_checkpoints(paths.ckpt)
    return max(c.path.stat().st_mtime for c in found) if found else 0.0


def resolve_run(app_cfg, resume: bool, now: float | None = None) -> RunPaths:
    """The run to start (fresh) or continue (`resume`); RunError says why not."""
    run_dir = Path(app_cfg.run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise RunError(f"app.run_dir = {str(run_dir)!r} is a file, not a directory")
    if app_cfg.run_name:
        paths = paths_for(app_cfg, app_cfg.run_name)
        if resume and not _has_checkpoints(paths):
            raise RunError(f"--resume: run {paths.root} has no checkpoint in {paths.ckpt}")
        if not resume and _has_checkpoints(paths):
            raise RunError(f"run {paths.root} already has checkpoints; add --resume to continue it, "
                           f"or choose another app.run_name")
        return paths
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
