"""Checkpoint files of the project's agents (PPO and DQN), and the checks that run before a
loaded checkpoint touches an agent.

A checkpoint is two files, both read with `torch.load(weights_only=True)` (tensors and plain
values only, never code) and written atomically (temp file, fsync, rename):
- `model.ckpt-{id}.pkl`: the model's `state_dict()`, which `model.load_state_dict(torch.load(f))`
  reads as the platform's own agents do;
- `model.ckpt-{id}.train.pt`, beside it: what an exact resume needs besides the weights
  (optimizer, counters, RNG states, a DQN's target network). A package uploaded without it still acts.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import torch

CKPT_PATTERN = re.compile(r"^model\.ckpt-(\d+)\.pkl$")
TRAIN_STATE_SUFFIX = ".train.pt"


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, unreadable or made for another model."""


def checkpoint_file(path: str | Path, id: int | str) -> Path:
    return Path(path) / f"model.ckpt-{id}.pkl"


def train_state_file(path: str | Path, id: int | str) -> Path:
    return Path(path) / f"model.ckpt-{id}{TRAIN_STATE_SUFFIX}"


def latest_checkpoint_id(path: str | Path) -> int | None:
    ids = [int(m.group(1)) for p in Path(path).glob("model.ckpt-*.pkl") if (m := CKPT_PATTERN.match(p.name))]
    return max(ids) if ids else None


def resolve(path, id) -> tuple[Path, int | str]:
    """(directory, id) of a load_model call; "latest" is the newest checkpoint there."""
    if path is None:
        raise CheckpointError("load_model(path=None): without the platform's framework, give a directory")
    path = Path(path)
    if id == "latest":
        id = latest_checkpoint_id(path)
        if id is None:
            raise CheckpointError(f"no checkpoint model.ckpt-*.pkl in {path}")
    if not checkpoint_file(path, id).is_file():
        raise CheckpointError(f"checkpoint not found: {checkpoint_file(path, id)}")
    return path, id


def save_atomically(payload, final: Path) -> None:
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            torch.save(payload, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)


def save_pair(path, id, model: torch.nn.Module, train_state: dict) -> Path:
    """Write the model's state dict and the training state for checkpoint `id`; returns the .pkl."""
    if path is None:
        raise CheckpointError("save_model(path=None): without the platform's framework, give a directory")
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    save_atomically({k: v.detach().cpu() for k, v in model.state_dict().items()}, checkpoint_file(path, id))
    save_atomically(train_state, train_state_file(path, id))
    dir_fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # make the renames themselves durable
    finally:
        os.close(dir_fd)
    return checkpoint_file(path, id)


def read(file: Path, device) -> object:
    try:
        return torch.load(file, map_location=device, weights_only=True)
    except Exception as e:  # truncated, overwritten, or not a torch file at all
        raise CheckpointError(f"cannot read checkpoint {file}: {type(e).__name__}: {e}") from e


def read_checked(path, id, model: torch.nn.Module, device, description: str) -> tuple[dict, object | None, Path]:
    """(model state, training state or None, its file) of checkpoint `id` ("latest": the newest)
    in `path`; the model state already checked against `model` (`description` names the model
    in the error)."""
    path, id = resolve(path, id)
    file = checkpoint_file(path, id)
    state = read(file, device)
    try:
        check_state_dict(model.state_dict(), state, file)
    except CheckpointError as e:
        raise CheckpointError(f"{e} ({description})") from None
    train_file = train_state_file(path, id)
    return state, read(train_file, device) if train_file.is_file() else None, train_file


def check_state_dict(expected: dict[str, torch.Tensor], state, file: Path, what: str = "model") -> None:
    """`state` fits `expected` (a module's state_dict) key for key and shape for shape, all finite."""
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


def check_train_state(train, file: Path, required: Iterable[str], counters: Iterable[str],
                      params: list[torch.nn.Parameter], make_optimizer: Callable[[], torch.optim.Optimizer],
                      generators: Iterable[str] = ()) -> None:
    """The training state has the keys, non-negative integer counters, generator states and an
    optimizer state that fits `params`; the optimizer and generator states are tried on
    throwaway copies, so what fails here fails before the agent changes."""
    def bad(why: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {file}: {why}")

    counters, generators = tuple(counters), tuple(generators)
    needed = ("optimizer", *required, *counters, *generators)
    if not isinstance(train, dict) or not all(k in train for k in needed):
        raise bad(f"not this agent's training state ({', '.join(needed)})")
    for key in counters:
        value = train[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise bad(f"{key} = {value!r} is not a non-negative integer")
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
