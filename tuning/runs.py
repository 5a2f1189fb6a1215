"""One run of a trial (one seed): the launcher started in its own process group, tied to the sweep's
life, stopped cleanly on demand, and its evaluations read, its final checkpoint's too.

A sweep's trial is real training runs: each is `python -m workflow.launcher` as ./train.sh starts
it, so a run here is what a run anywhere is, its directory under sweeps/<name>/runs/."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from evaluation.worker import PLANNER
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.evaluations import read_evaluations
from workflow.config import REPO_ROOT, load_config
from workflow.supervision.supervisor import PARENT_GONE_SIGNAL

STOP_WAIT_S = 180  # a run stopped by SIGTERM writes its final checkpoint; beyond this it is killed


def _die_with_parent() -> None:
    """In the launcher's child: have the kernel signal it when the sweep dies, however (SIGKILL
    too), with the signal the launcher reads as a clean stop however often it comes: no orphan
    run goes on training once its sweep is gone, and none is killed before its final checkpoint."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, PARENT_GONE_SIGNAL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclass
class Run:
    seed: int
    root: Path
    log: Path
    proc: subprocess.Popen | None = None
    code: int | None = None
    stopped: bool = False
    final: dict | None = None  # the final checkpoint's evaluation (final_eval)

    def start(self, argv: list[str]) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("w") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "workflow.launcher", *argv], cwd=REPO_ROOT,
                                         stdout=out, stderr=subprocess.STDOUT, process_group=0,
                                         preexec_fn=_die_with_parent)

    def poll(self) -> bool:
        """True once the launcher has ended."""
        if self.code is None and self.proc is not None:
            self.code = self.proc.poll()
        return self.code is not None

    def stop(self) -> None:
        """SIGTERM the launcher's process group once: the run stops cleanly, as Ctrl-C does (a
        run that never started is only marked stopped)."""
        if self.proc is None:
            self.stopped = True
        elif not self.poll() and not self.stopped:
            self.stopped = True
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def wait(self) -> None:
        if self.proc is None:
            return
        try:
            self.code = self.proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.code = self.proc.wait()

    def ckpt_dir(self) -> Path | None:
        dirs = [d for d in (self.root / "ckpt").glob("*") if d.is_dir() and d.name != "user"]
        return dirs[0] if dirs else None

    def evaluations(self):
        ckpt_dir = self.ckpt_dir()
        return read_evaluations(ckpt_dir) if ckpt_dir is not None else None

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def evaluate_final(run: Run) -> dict | None:
    """Play the run's final checkpoint on the episodes its evaluator played (its [eval]) when the
    evaluator did not get to it: the entry evaluations.json would hold, with its train step."""
    from evaluation.evaluator import EvalWorker, Setting, summary  # here: it brings torch

    ckpt_dir, found = run.ckpt_dir(), run.evaluations()
    newest = ckpt_files.latest_checkpoint(ckpt_dir) if ckpt_dir is not None else None
    if newest is None or (found is not None and newest.id in found.checkpoints):
        return None
    config = run.root / "log" / "effective_config.toml"
    setting = Setting(load_config(config), config)
    worker = EvalWorker(setting.env_kwargs, setting.config_file, "greedy", setting.package_dir)
    entry = summary([worker.play(str(newest.path), e) for e in setting.episodes])
    planner = (found.planner or {}).get("score") if found is not None and found.settings == setting.description else None
    if planner is None:
        planner = summary([worker.play(PLANNER, e) for e in setting.episodes])["score"]
    entry.update(ratio=entry["score"] / planner if planner > 0 else None, train_step=newest.id, final=True)
    return entry
