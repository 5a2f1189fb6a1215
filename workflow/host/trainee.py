"""What the learner trains: a Kaiwu package's Agent (the project's own agent is one).

Replay rows become SampleData with the package's registered `NumpyData2SampleData` and go to
its `Agent.learn(list)`. Checkpoints are the files the package's own `save_model(path, id)`
writes; they, or a save into a staging directory every `model_pool_publish_freq` train steps,
are what the model pool publishes (as files, as on the platform). The run's counters go beside
the checkpoints in `run_state.json` and its copy (workflow.checkpoints.run_state).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import torch
from loguru import logger

from agent.checkpoint_io import CheckpointError, WriteFailed, check_counters, is_training_state
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.manager import CheckpointManager, prune_user_saves
from workflow.host.kaiwu_package import KaiwuPackage, PackageError, numeric_values
from workflow.metrics_keys import learner_key
from workflow.precision import Precision, autocast
from workflow.checkpoints.run_state import (INCOMPLETE, RUN_STATE_FILE, RunStateError, read_run_state, resume_problem,
                                write_run_state)
POOL_STAGING_DIR = "learner"  # <run>/pool/learner: saves made only to be published (aisrv unpack theirs beside it)


class NonFiniteWeights(RuntimeError):
    """The agent's weights hold NaN or inf: they are neither checkpointed nor published."""


def non_finite_weights(agent) -> list[str]:
    """Names of the agent's weights that hold NaN or inf: the floating-point tensors in the
    state of every torch module the agent holds as an attribute (its model, a target network).
    Checked after every train step, so it must be cheap: numpy's check on CPU is ~100x torch's."""
    return [f"{attr}.{name}" for attr, module in vars(agent).items() if isinstance(module, torch.nn.Module)
            for name, value in _state(module) if _checkable(value) and not _finite(value)]


def _state(module: torch.nn.Module):
    """The module's state as it holds it (keep_vars: no detach of what is not yet initialised);
    none when the package's own state_dict fails, which its save_model then reports as its own."""
    try:
        return module.state_dict(keep_vars=True).items()
    except Exception:
        return ()


def _checkable(value) -> bool:
    """Whether a state entry holds numbers to check: a dense floating-point or complex tensor with
    storage. A lazy module's parameters before its first forward, a meta or sparse tensor, integer
    counters and a module's extra state (any object) are passed over: the package owns them."""
    return (isinstance(value, torch.Tensor) and not torch.nn.parameter.is_lazy(value)
            and (value.is_floating_point() or value.is_complex()) and value.layout == torch.strided
            and value.device.type != "meta")


def _finite(tensor: torch.Tensor) -> bool:
    """A tensor torch cannot read back (quantized, a subclass of its own) counts as finite."""
    try:
        if tensor.device.type == "cpu" and tensor.dtype in (torch.float16, torch.float32, torch.float64):
            return bool(np.isfinite(tensor.detach().numpy()).all())
        return bool(torch.isfinite(tensor).all())
    except (RuntimeError, TypeError, ValueError, NotImplementedError):
        return True


class LearnerHandler:
    """The framework behind a learner agent's five methods: the package's own code runs; a
    `save_model` without a path (the package's own call, or an aisrv's request) is a user save
    into `<user_ckpt_dir>/<app>_<algo>/` with the current train step as id; `learn` runs in the
    run's precision (workflow.precision)."""

    def __init__(self, user_dir: Path, user_keep: int, train_step, precision: Precision, device: str):
        self.user_dir = Path(user_dir)
        self.user_keep = user_keep
        self._train_step = train_step
        self.precision = precision
        self.device = device

    def predict(self, agent, method, *args, **kwargs):
        return method(agent, *args, **kwargs)

    exploit = load_model = predict

    def learn(self, agent, method, *args, **kwargs):
        with autocast(self.precision, self.device):
            return method(agent, *args, **kwargs)

    def save_model(self, agent, method, path=None, id=None, *args, **kwargs):
        if path is not None:
            return method(agent, path, "1" if id is None else id, *args, **kwargs)
        self.user_dir.mkdir(parents=True, exist_ok=True)
        result = method(agent, str(self.user_dir), self._train_step(), *args, **kwargs)
        prune_user_saves(self.user_dir, self.user_keep)
        return result


class WriterMonitor:
    """Kaiwu's monitor on the learner: `put_data({pid: {key: number}})` -> metrics as monitor/<key>."""

    def __init__(self, write):
        self._write = write

    def put_data(self, data: dict) -> bool:
        values = numeric_values(data)
        if values:
            self._write({f"monitor/{k}": v for k, v in values.items()})
        return bool(values)


class Trainee:
    """The learner's side of a package: learn, checkpoint, publish, resume, preload."""

    def __init__(self, package: KaiwuPackage, agent, ckpts: CheckpointManager, publish_freq: int, staging_dir: Path,
                 device: str = "cpu"):
        self.package = package
        self.device = device  # where a 2025 package's sample tensors go (the platform's learner device)
        self.agent = agent
        self.ckpts = ckpts
        self.publish_freq = publish_freq  # 0: the pool gets the checkpoints only (the platform's way)
        self.staging_dir = Path(staging_dir)
        self.train_step = 0
        self.model_version = 0  # the train step of the newest model written (what the pool gets next)
        self.sample_dim = package.sample_dim
        self._from_numpy = package.protocol("NumpyData2SampleData")
        self._pool_files: list[Path] = []  # the files of model_version
        self._left_behind: set[int] = set()  # checkpoints whose failed write left files (flagged incomplete)
        self.resume_notes: list[str] = []  # what restore_newest passed over or reset, for the terminal

    def learn(self, rows: np.ndarray, is_weights: np.ndarray | None = None) -> tuple[dict[str, float], np.ndarray | None]:
        """Rows -> SampleData -> Agent.learn. With prioritized replay each sample carries its
        importance-sampling weight as `is_weight`. Returns (statistics as metrics, the new
        priorities when learn returned {"priority": [one per sample]}, else None)."""
        if rows.ndim != 2 or rows.shape[1] != self.package.sample_dim:
            raise PackageError(f"replay rows of shape {rows.shape}; {self.package.row_width_named}")
        samples = [self._from_numpy(row) for row in self._rows_as_platform_hands_them(rows)]
        if is_weights is not None:
            for sample, weight in zip(samples, is_weights):
                sample.is_weight = float(weight)
        result = self.agent.learn(samples)
        self.train_step += 1
        if not isinstance(result, dict):
            return {}, None
        priorities = self._priorities(result.get("priority"), len(samples))
        stats = numeric_values(result, finite_only=False)  # NaN and inf too: the learner counts them
        return {learner_key(key): value for key, value in stats.items()}, priorities

    def _rows_as_platform_hands_them(self, rows: np.ndarray):
        """What the package's platform version's learner hands NumpyData2SampleData (2024: numpy
        rows; 2025: float32 torch tensors on its device)."""
        return self.package.platform.learn_rows(rows, self.device)

    def non_finite_weights(self) -> list[str]:
        return non_finite_weights(self.agent)

    def _check_finite(self, what: str) -> None:
        bad = self.non_finite_weights()
        if bad:
            raise NonFiniteWeights(f"{what}: the weights hold NaN or infinite values ({', '.join(bad[:4])}"
                                   + (f" and {len(bad) - 4} more)" if len(bad) > 4 else ")"))

    def _priorities(self, value, count: int) -> np.ndarray | None:
        if value is None:
            return None
        try:
            priorities = np.abs(np.asarray(value, dtype=np.float64).reshape(-1))
        except (TypeError, ValueError) as e:
            raise PackageError(f"{self.package.algo} Agent.learn returned priority {value!r}: not numbers") from e
        if priorities.shape != (count,) or not np.isfinite(priorities).all():
            raise PackageError(f"{self.package.algo} Agent.learn returned {priorities.size} priorities for {count} "
                               "samples (one finite number per sample, in the order given)")
        return priorities

    def publish_due(self, step: int) -> bool:
        """A checkpoint was just written at this step, or a publication is due by the step count
        (then the package saves into the staging directory for it; weights that are not finite
        are not published: the pool keeps the last sound model)."""
        if self.model_version == step and self._pool_files:
            return True
        if self.publish_freq and step % self.publish_freq == 0 and not self.non_finite_weights():
            self._stage(step)
            return True
        return False

    def _stage(self, step: int) -> None:
        self._check_finite(f"model pool publication at train step {step}")
        if self.staging_dir.exists():
            shutil.rmtree(self.staging_dir)
        self.staging_dir.mkdir(parents=True)
        self._save(self.staging_dir, step)
        self._pool_files = self._written(self.staging_dir, step)
        self.model_version = step

    def _save(self, directory: Path, step: int) -> None:
        """The package's save_model(directory, step). Whatever it raises is a failure to write
        the files (an OSError: a full disk shows as anything from a serializer), said with where
        it was raised; a stop or a kill (not an Exception) goes through as it is."""
        try:
            self.agent.save_model(path=str(directory), id=step)
        except OSError:
            raise
        except Exception as e:
            where = self.package.where(e)
            raise WriteFailed(f"cannot write model.ckpt-{step} into {directory} ({type(e).__name__}: {e}"
                              + (f", raised at {where}" if where else "") + ")") from e

    def _written(self, directory: Path, step: int) -> list[Path]:
        """The files save_model wrote; none is the package's fault, unless the directory itself was
        taken away or replaced meanwhile (a disk's fault: retried as a failed write)."""
        files = ckpt_files.checkpoint_files(directory, step)
        if not files and not directory.is_dir():
            raise WriteFailed(f"cannot write model.ckpt-{step}: {directory} is no longer a directory "
                              "(removed or replaced while the checkpoint was written)")
        if not files:
            raise PackageError(f"{self.package.algo} Agent.save_model(path={str(directory)!r}, id={step}) wrote no "
                               f"file named model.ckpt-{step}... (the platform's rule for checkpoint files)")
        return files

    def pool_item(self) -> dict[str, np.ndarray]:
        """The files of the newest model an actor loads: all but the training state (optimizer,
        target network), which only the learner needs."""
        if not self._pool_files:  # nothing written by this process yet (a resume): publish what it loaded
            self._stage(self.train_step)
        return {path.name: np.frombuffer(path.read_bytes(), dtype=np.uint8) for path in self._pool_files
                if not is_training_state(path)}

    def checkpoint(self, extra: dict, recent_score: float | None) -> Path:
        """Checkpoint `train_step`: its run-state entry flagged incomplete, the package's files,
        then the entry whole with the run's counters (workflow.checkpoints.run_state); only a complete
        checkpoint becomes the pool's model and lets older ones be pruned. A write that fails
        (OSError; whatever the package's save_model raises is one, `_save`) takes the files it made
        away again, so it never shadows nor costs a good checkpoint; what it could not take away
        (or a rewrite of an existing checkpoint, its files now a mix) stays flagged and goes with the
        next whole checkpoint. NonFiniteWeights, and nothing written, when the weights are
        not finite."""
        step, directory = self.train_step, self.ckpts.ckpt_dir
        self._check_finite(f"checkpoint {step}")
        existed = bool(ckpt_files.checkpoint_files(directory, step))
        before = self._state_for_writing()
        saving = False
        try:
            directory.mkdir(parents=True, exist_ok=True)
            write_run_state(directory, {**before, str(step): {**extra, INCOMPLETE: True}})  # until the files are
            saving = True
            self._save(directory, step)
            files = self._written(directory, step)
            state = {**before, str(step): extra}
            write_run_state(directory, state)
        except BaseException as e:
            if not saving:  # no file touched: the table goes back to what it was
                self._put_back(before)
            elif isinstance(e, OSError):
                self._left_behind.add(step)
                if not existed:  # a rewrite keeps its flag: its files may be a mix
                    self._discard(step, before)
            raise
        self._pool_files, self.model_version = files, step
        self._left_behind.discard(step)
        gone = {str(ckpt_id) for ckpt_id in self.ckpts.saved(step, recent_score)} | self._remove_left_behind()
        if gone:
            write_run_state(directory, {key: value for key, value in state.items() if key not in gone})
        return files[0]

    def _remove_left_behind(self) -> set[str]:
        """After a whole checkpoint: the files that failed writes of this session left (flagged
        incomplete, so nothing loads them) go, and their entries with them; returns their ids."""
        removed = set()
        for ckpt_id in sorted(self._left_behind):
            if self._remove_files(ckpt_id, f"what the failed write of checkpoint {ckpt_id} left"):
                removed.add(ckpt_id)
        self._left_behind -= removed
        return {str(ckpt_id) for ckpt_id in removed}

    def _discard(self, step: int, state: dict) -> None:
        """Remove what a failed write of checkpoint `step` left, files and entry, as far as the disk
        lets us (files left behind stay flagged: nothing loads, counts or prunes them)."""
        if self._remove_files(step, f"the partial checkpoint {step}", " until the next whole checkpoint"):
            self._put_back(state)

    def _remove_files(self, ckpt_id: int, what: str, until: str = "") -> bool:
        """Remove checkpoint `ckpt_id`'s files; False, after a warning naming `what`, where the disk
        refused (what is left stays flagged incomplete: nothing loads, counts or prunes it)."""
        try:
            for path in ckpt_files.checkpoint_files(self.ckpts.ckpt_dir, ckpt_id):
                path.unlink(missing_ok=True)
        except OSError as e:
            logger.warning(f"could not remove {what} ({type(e).__name__}: {e}); it stays flagged incomplete in "
                           f"{RUN_STATE_FILE}{until}")
            return False
        return True

    def _put_back(self, state: dict) -> None:
        """Write the run state as it was before a failed checkpoint; an empty one is left as the
        disk has it (writing `{}` would read as a reset of the counters made on purpose)."""
        if not state:
            return
        try:
            write_run_state(self.ckpts.ckpt_dir, state)
        except OSError as e:
            logger.warning(f"could not put {RUN_STATE_FILE} back after a failed checkpoint ({type(e).__name__}: {e})")

    def save_user(self) -> Path:
        self.agent.save_model()
        return self.agent.framework_handler.user_dir

    def restore_newest(self) -> tuple[int, dict]:
        """Load the newest checkpoint that loads; returns (its id, its entry in the run state). The
        run state must be readable (from run_state.json or its copy): resuming with counters
        silently at zero is refused. What was passed over, and counters that start at 0, are
        logged and kept in `resume_notes` (the learner tells the terminal)."""
        try:
            found = read_run_state(self.ckpts.ckpt_dir)
        except RunStateError as e:
            raise CheckpointError(f"the run's counters are lost: {e}") from e
        if found is None:
            raise CheckpointError(f"the run's counters are lost: no {RUN_STATE_FILE} in {self.ckpts.ckpt_dir}")
        if found.recovered:  # the launcher says so on the terminal
            logger.warning(f"run counters recovered from the copy: {found.recovered}")
        state = found.entries
        whole = [ckpt.id for ckpt in ckpt_files.list_checkpoints(self.ckpts.ckpt_dir)]
        self.resume_notes = []

        def warn(message: str) -> None:
            logger.warning(message)
            self.resume_notes.append(message)

        def load(ckpt_id: int) -> dict:
            problem = resume_problem(state, ckpt_id, whole)
            if problem:
                raise CheckpointError(problem)
            if str(ckpt_id) not in state:
                warn(f"{RUN_STATE_FILE} has no entry for checkpoint {ckpt_id}: the run's counters "
                     f"(env steps, episodes) start at 0")
            extra = state.get(str(ckpt_id), {})
            check_counters(extra.get("counters", {}) if isinstance(extra, dict) else extra, f"run counters of {ckpt_id}")
            self.agent.load_model(path=str(self.ckpts.ckpt_dir), id=ckpt_id)
            self._check_finite(f"checkpoint {ckpt_id}")  # the package's load_model may not check: skip it
            return extra

        ckpt_id, extra = self.ckpts.load_newest(load, (Exception,), warn)
        self.train_step = self.model_version = ckpt_id
        return ckpt_id, extra

    def preload(self, model_dir: str | Path, model_id) -> int:
        found = ckpt_files.find_checkpoint(model_dir, model_id)
        self.agent.load_model(path=str(model_dir), id=found.id)
        self._check_finite(f"preload_model_dir {model_dir}, checkpoint {found.id}")
        return found.id

    def _state_for_writing(self) -> dict:
        """The run state the next checkpoint's entry joins (its copy when run_state.json is damaged)."""
        try:
            found = read_run_state(self.ckpts.ckpt_dir)
        except RunStateError as e:
            logger.warning(f"{e}; counters of older checkpoints are lost")
            return {}
        if found is not None and found.recovered:
            logger.warning(f"run counters taken from the copy: {found.recovered}")
        return dict(found.entries) if found is not None else {}
