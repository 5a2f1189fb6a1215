"""Checkpoint files: the one home of their names, their error, how they are written and the
checks that run before a loaded checkpoint touches anything. The project's agents
(agent.checkpointed) and the training system (workflow.checkpoints.ckpt_files, the learner's run state,
the model pool) both use it; it ships in exported packages.

A checkpoint is the files named `model.ckpt-{id}...` (the platform's rule; id = the learner's
train step). The project's agents write three, all read without running code (tensors, plain
values, JSON) and written atomically (temp file, fsync, rename, then the directory synced):
- `model.ckpt-{id}.pkl`: the model's `state_dict()`, which `model.load_state_dict(torch.load(f))`
  reads as the platform's own agents do;
- `model.ckpt-{id}.progress.json`: the agent's counters (train step, samples learned, model
  version): what an actor needs besides the weights (the curriculum's and epsilon's progress);
- `model.ckpt-{id}.train.pt`: what only training needs (optimizer, RNG states, a DQN's target
  network). The model pool never carries it; a package uploaded without it still acts.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterable

import numpy as np

if TYPE_CHECKING:  # torch is imported where a file is read or written: the launcher only names files
    import torch

#: Any file of a checkpoint, never a temp file mid-write (those start with a dot).
CKPT_FILE_RE = re.compile(r"^model\.ckpt-(\d+)(?:\.(?!tmp\b)[\w-]+)*$")
WEIGHTS_SUFFIX = ".pkl"
PROGRESS_SUFFIX = ".progress.json"
TRAIN_STATE_SUFFIX = ".train.pt"


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, unreadable, made for another model, or whose values would
    poison training (the message names the file and what is wrong)."""


class WriteFailed(OSError):
    """Writing a checkpoint file failed (a full disk, a file-size limit, a device gone), whatever
    raised it: torch's serializer reports a write cut off part-way as a RuntimeError. The message
    names the file and the error."""


# --- names ---------------------------------------------------------------------------------------

def ckpt_name(ckpt_id: int | str) -> str:
    return f"model.ckpt-{ckpt_id}{WEIGHTS_SUFFIX}"


def checkpoint_file(path: str | Path, ckpt_id: int | str) -> Path:
    return Path(path) / ckpt_name(ckpt_id)


def progress_file(path: str | Path, ckpt_id: int | str) -> Path:
    return Path(path) / f"model.ckpt-{ckpt_id}{PROGRESS_SUFFIX}"


def train_state_file(path: str | Path, ckpt_id: int | str) -> Path:
    return Path(path) / f"model.ckpt-{ckpt_id}{TRAIN_STATE_SUFFIX}"


def parse_ckpt_id(path: str | Path) -> int | None:
    """The id in a checkpoint file's name, or None when the name is not a checkpoint file's."""
    match = CKPT_FILE_RE.match(Path(path).name)
    return int(match.group(1)) if match else None


def is_training_state(path: str | Path) -> bool:
    """A file only training needs (an actor acts without it)."""
    return Path(path).name.endswith(TRAIN_STATE_SUFFIX) and parse_ckpt_id(path) is not None


def latest_checkpoint_id(path: str | Path) -> int | None:
    ids = [i for p in Path(path).glob(f"model.ckpt-*{WEIGHTS_SUFFIX}")
           if (i := parse_ckpt_id(p)) is not None and p.name == ckpt_name(i)]
    return max(ids) if ids else None


# --- atomic writes ----------------------------------------------------------------------------------

def write_atomically(final: Path, write: Callable[[BinaryIO], None]) -> None:
    """`write(f)` into a temp file beside `final`, fsync it, rename it over `final`: a reader sees
    the old file or the whole new one, never a torn one. `sync_directory` makes the rename durable.
    Any failure is a WriteFailed naming `final`, and leaves no temp file."""
    final = Path(final)
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except Exception as e:
        raise WriteFailed(f"cannot write {final} ({type(e).__name__}: {e})") from e
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # the directory itself failing: the write's own error is the one to tell
            pass


def save_torch(payload, final: Path) -> None:
    import torch

    write_atomically(final, lambda f: torch.save(payload, f))


def on_cpu(tree):
    """`tree` (dicts, lists, tuples) with every tensor on the CPU: a checkpoint written by a learner
    on a GPU loads with a plain torch.load where there is none."""
    import torch

    if isinstance(tree, torch.Tensor):
        return tree.detach().cpu()
    if isinstance(tree, dict):
        return {key: on_cpu(value) for key, value in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(on_cpu(value) for value in tree)
    return tree


def save_json(data, final: Path) -> None:
    write_atomically(final, lambda f: f.write((json.dumps(data, indent=1, sort_keys=True) + "\n").encode()))


def sync_directory(path: str | Path) -> None:
    """fsync a directory, so the renames made in it survive a crash."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- reading and the checks before applying -------------------------------------------------------

def read_torch(file: Path, device) -> object:
    import torch

    try:
        return torch.load(file, map_location=device, weights_only=True)
    except Exception as e:  # truncated, overwritten, or not a torch file at all
        raise CheckpointError(f"cannot read checkpoint {file}: {type(e).__name__}: {e}") from e


def read_json(file: Path) -> object:
    try:
        return json.loads(Path(file).read_text())
    except (OSError, ValueError) as e:
        raise CheckpointError(f"cannot read checkpoint {file}: {type(e).__name__}: {e}") from e


def check_counters(counters, where: str, names: Iterable[str] | None = None) -> None:
    """`counters` is a table of non-negative integers (holding at least `names`, when given)."""
    if not isinstance(counters, dict):
        raise CheckpointError(f"{where}: its counters are a {type(counters).__name__}, not a table")
    missing = [name for name in names or () if name not in counters]
    if missing:
        raise CheckpointError(f"{where}: counters {', '.join(missing)} missing")
    for key, value in counters.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CheckpointError(f"{where}: counter {key} = {value!r} is not a non-negative integer")


def check_state_dict(expected: dict[str, torch.Tensor], state, file: Path, what: str = "model") -> None:
    """`state` fits `expected` (a module's state_dict) key for key and shape for shape, all finite."""
    import torch

    if not isinstance(state, dict):
        raise CheckpointError(f"{file} is not a {what} state dict (it holds a {type(state).__name__})")
    problems = [f"missing {k} {tuple(v.shape)}" for k, v in expected.items() if k not in state]
    problems += [f"unexpected {k} {tuple(np.shape(state[k]))}" for k in state if k not in expected]
    problems += [f"{k}: checkpoint {tuple(np.shape(state[k]))} vs {what} {tuple(v.shape)}"
                 for k, v in expected.items() if k in state and tuple(np.shape(state[k])) != tuple(v.shape)]
    if problems:
        raise CheckpointError(f"checkpoint {file} does not fit this {what}: " + "; ".join(problems))
    for key, value in state.items():
        if not isinstance(value, torch.Tensor):
            raise CheckpointError(f"checkpoint {file}: {key} is a {type(value).__name__}, not a tensor")
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise CheckpointError(f"checkpoint {file}: {key} holds NaN or infinite values")


def check_train_state(train, file: Path, required: Iterable[str], params: list[torch.nn.Parameter],
                      make_optimizer: Callable[[], torch.optim.Optimizer], generators: Iterable[str] = ()) -> None:
    """The training state has the keys, generator states and an optimizer state that fits
    `params`; the optimizer and generator states are tried on throwaway copies, so what fails
    here fails before the agent changes."""
    import torch

    def bad(why: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {file}: {why}")

    generators = tuple(generators)
    needed = ("optimizer", *required, *generators)
    if not isinstance(train, dict) or not all(k in train for k in needed):
        raise bad(f"not this agent's training state ({', '.join(needed)})")
    for key in generators:
        if not isinstance(train[key], torch.Tensor) or train[key].dtype != torch.uint8:
            raise bad(f"{key} is not a generator state")
        try:
            torch.Generator().set_state(train[key].cpu())
        except RuntimeError as e:
            raise bad(f"{key} is not a generator state: {e}") from e
    optimizer = train["optimizer"]
    if not isinstance(optimizer, dict) or not isinstance(optimizer.get("state"), dict):
        raise bad("optimizer is not an optimizer state dict")
    for index, moments in optimizer["state"].items():
        if not isinstance(index, int) or not 0 <= index < len(params) or not isinstance(moments, dict):
            raise bad(f"optimizer state for parameter {index!r} does not belong to this model")
        for name, value in moments.items():
            if not isinstance(value, torch.Tensor):
                raise bad(f"optimizer state {index}.{name} is not a tensor")
            if name != "step" and tuple(value.shape) != tuple(params[index].shape):
                raise bad(f"optimizer state {index}.{name} has shape {tuple(value.shape)}, "
                          f"parameter {tuple(params[index].shape)}")
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                raise bad(f"optimizer state {index}.{name} holds NaN or infinite values")
    try:
        make_optimizer().load_state_dict(optimizer)
    except (ValueError, KeyError, TypeError, RuntimeError, IndexError) as e:
        raise bad(f"optimizer state does not fit this model: {e}") from e
