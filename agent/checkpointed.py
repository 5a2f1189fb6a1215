"""What the project's agents share around checkpoints: their counters, and the steps of
save_model / load_model over the files of agent.checkpoint_io. Each agent adds only what is its
own: its training state (`_train_state`, `_check_train_state`, `_apply_train_state`) and how its
model is named in an error (`_describe`).

Loading checks everything before anything is applied: a checkpoint that reads but would poison
training (non-finite values, another architecture, optimizer moments that do not fit, counters
that are not counters) raises CheckpointError and leaves the agent as it was. What is loaded
depends on what is there: the weights always; the counters from the progress record (an actor
picking a model from the pool gets these two); the training state when it is beside them. A
learner refuses a training state without the counters: it would train on with its schedules and
curriculum progress started again from 0. An agent that only acts (ACTING_TYPES: an aisrv, an
actor, an evaluation) neither checks nor applies a training state: it never trains, and building
an optimizer to try one costs a process torch's compiler stack (~1 CPU-second).

The progress record also names the model options a checkpoint was trained with beyond its
tensors' shapes (`_model_options`: the PPO package's core and action head), so loading it
into an agent built with other options is an error naming both, not weights read as another
network.
"""
from __future__ import annotations

import abc
from pathlib import Path

import torch

import agent.checkpoint_io as io
from agent.checkpoint_io import CheckpointError
from kaiwu_agent.agent.base_agent import BaseAgent

COUNTERS = ("train_step", "samples_learned", "model_version")
MODEL_OPTIONS = "model"  # the progress record's entry of the model options
#: The platform's agent types that act and never train (the default "player" may do either)
ACTING_TYPES = ("aisrv", "actor", "eval")


class CheckpointedAgent(BaseAgent, abc.ABC):
    """Base of the project's Agents: `self.model`, `self.device` and the COUNTERS are set by the subclass."""

    train_step: int
    samples_learned: int  # drives the schedules, epsilon and the curriculum's staged progress
    model_version: int  # bumped by every update or load
    _optimizer: torch.optim.Optimizer | None = None  # see `optimizer`

    # --- the subclass's own ---------------------------------------------------------------------------

    @abc.abstractmethod
    def _describe(self) -> str:
        """The model, as an error about a checkpoint that does not fit it names it."""

    @abc.abstractmethod
    def _train_state(self) -> dict:
        """What only training needs (the .train.pt file)."""

    @abc.abstractmethod
    def _check_train_state(self, train, file: Path) -> None:
        """CheckpointError unless `train` can be applied (agent.checkpoint_io.check_train_state)."""

    @abc.abstractmethod
    def _apply_train_state(self, train: dict | None, weights: dict) -> None:
        """After the weights are in: the training state (None when the checkpoint has none)."""

    @abc.abstractmethod
    def _new_optimizer(self) -> torch.optim.Optimizer:
        """A fresh optimizer over `self.model`'s parameters."""

    def _model_options(self) -> dict:
        """The model's options a checkpoint records and a load must match; none by default."""
        return {}

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        """Built on first use: acting processes (aisrv, evaluation) never need one, and the first
        optimizer a process builds imports torch's compiler stack (~1 CPU-second)."""
        if self._optimizer is None:
            self._optimizer = self._new_optimizer()
        return self._optimizer

    # --- shared ---------------------------------------------------------------------------------------

    def write_checkpoint(self, path, ckpt_id) -> Path:
        """Write checkpoint `ckpt_id` into `path` (weights, progress record, training state); returns the .pkl."""
        if path is None:
            raise CheckpointError("save_model(path=None): without the platform's framework, give a directory")
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        io.save_torch({k: v.detach().cpu() for k, v in self.model.state_dict().items()}, io.checkpoint_file(path, ckpt_id))
        progress = {name: int(getattr(self, name)) for name in COUNTERS}
        if self._model_options():
            progress[MODEL_OPTIONS] = self._model_options()
        io.save_json(progress, io.progress_file(path, ckpt_id))
        io.save_torch(io.on_cpu(self._train_state()), io.train_state_file(path, ckpt_id))
        io.sync_directory(path)
        return io.checkpoint_file(path, ckpt_id)

    def read_checkpoint(self, path, ckpt_id) -> None:
        """Load checkpoint `ckpt_id` ("latest": the newest) of `path`, checked first (module docstring)."""
        path, ckpt_id = resolve(path, ckpt_id)
        check_model_options(path, ckpt_id, self._model_options())
        file = io.checkpoint_file(path, ckpt_id)
        weights = io.read_torch(file, self.device)
        try:
            io.check_state_dict(self.model.state_dict(), weights, file)
        except CheckpointError as e:
            raise CheckpointError(f"{e} ({self._describe()})") from None
        train_file = io.train_state_file(path, ckpt_id)
        # on the CPU: the optimizer's load_state_dict moves its moments to each parameter's device
        train = io.read_torch(train_file, "cpu") if train_file.is_file() else None
        trains = self.agent_type not in ACTING_TYPES
        if train is not None and trains:
            self._check_train_state(train, train_file)
        counters = read_counters(path, ckpt_id, train)
        if counters is None and train is not None and self.agent_type == "learner":
            raise CheckpointError(f"{io.progress_file(path, ckpt_id)} is missing: beside its training state "
                                  f"{train_file.name} the agent's counters ({', '.join(COUNTERS)}) would start again "
                                  f"from 0, and its schedules and curriculum progress with them")
        self.model.load_state_dict(weights)
        self._apply_train_state(train if trains else None, weights)
        if counters is None:
            self.model_version += 1
            return
        for name in COUNTERS:
            setattr(self, name, counters[name])


def resolve(path, ckpt_id) -> tuple[Path, int | str]:
    """(directory, id) of a load_model call; "latest" is the newest checkpoint there."""
    if path is None:
        raise CheckpointError("load_model(path=None): without the platform's framework, give a directory")
    path = Path(path)
    if ckpt_id == "latest":
        ckpt_id = io.latest_checkpoint_id(path)
        if ckpt_id is None:
            raise CheckpointError(f"no checkpoint model.ckpt-*.pkl in {path}")
    if not io.checkpoint_file(path, ckpt_id).is_file():
        raise CheckpointError(f"checkpoint not found: {io.checkpoint_file(path, ckpt_id)}")
    return path, ckpt_id


def check_model_options(path: Path, ckpt_id, options: dict) -> None:
    """CheckpointError when the checkpoint's progress record names other model options than
    `options` (a record without them predates them: the weights' check decides)."""
    file = io.progress_file(path, ckpt_id)
    if not options or not file.is_file():
        return
    record = io.read_json(file)
    recorded = record.get(MODEL_OPTIONS) if isinstance(record, dict) else None
    if recorded is not None and recorded != options:
        def listed(table):
            return ", ".join(f"{key} = {table[key]!r}" for key in sorted(table)) if isinstance(table, dict) else repr(table)
        raise CheckpointError(f"checkpoint {file} was trained with [model] {listed(recorded)}; this agent is built "
                              f"with [model] {listed(options)}: load it with the options it was trained with")


def read_counters(path: Path, ckpt_id, train) -> dict[str, int] | None:
    """The agent's counters: from the progress record, else from a training state that holds them
    (checkpoints written before the progress record had its own file), else None."""
    file = io.progress_file(path, ckpt_id)
    if file.is_file():
        counters = io.read_json(file)
        if isinstance(counters, dict):
            counters = {key: value for key, value in counters.items() if key != MODEL_OPTIONS}
        io.check_counters(counters, f"checkpoint {file}", COUNTERS)
    elif isinstance(train, dict) and all(name in train for name in COUNTERS):
        counters = {name: train[name] for name in COUNTERS}
        io.check_counters(counters, f"checkpoint {io.train_state_file(path, ckpt_id)}")
    else:
        return None
    return {name: counters[name] for name in COUNTERS}
