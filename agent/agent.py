"""Kaiwu's Agent (`<algo>/algorithm/agent.py`): predict / exploit / learn / save_model /
load_model around one ActorCritic, with the platform's constructor and decorators.

The same class serves every role. On the platform, and in this toolkit's training system, the
decorators route the calls (kaiwu_agent.agent.base_agent): an aisrv's `learn` sends the samples
to the replay buffer, the learner's `learn` runs the PPO update below, an aisrv's
`load_model(id="latest")` loads the model pool's newest checkpoint. Without a framework (a
tool, a test) every method runs as written.

A checkpoint is two files, both read with `torch.load(weights_only=True)` (tensors and plain
values only, never code), written atomically (temp file, fsync, rename):
- `model.ckpt-{id}.pkl`: `model.state_dict()`, which `model.load_state_dict(torch.load(f))`
  reads as the platform's own agents do (the value-normalisation statistics are buffers of the
  model, so they travel with it);
- `model.ckpt-{id}.train.pt`, beside it: optimizer, counters and the minibatch RNG, for an exact
  resume. `load_model` reads it when it is there; a package uploaded without it still acts.
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from agent.config import Settings, load_settings
from agent.model import ActorCritic
from agent.ppo import ppo_update
from feature.definition import SAMPLE_ROWS, ActData, ObsData, SampleData
from kaiwu_agent.agent.base_agent import (BaseAgent, exploit_wrapper, learn_wrapper, load_model_wrapper,
                                          predict_wrapper, save_model_wrapper)
from kaiwu_agent.utils.common_func import attached

CKPT_PATTERN = re.compile(r"^model\.ckpt-(\d+)\.pkl$")
TRAIN_STATE_SUFFIX = ".train.pt"
COUNTERS = ("train_step", "samples_learned", "model_version")
#: learn()'s statistics as metric names ("<group>/<name>"); the rest go under "ppo/"
METRIC_NAMES = {"policy_loss": "loss/policy", "value_loss": "loss/value"}


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, unreadable or made for another model."""


def checkpoint_file(path: str | Path, id: int | str) -> Path:
    return Path(path) / f"model.ckpt-{id}.pkl"


def train_state_file(path: str | Path, id: int | str) -> Path:
    return Path(path) / f"model.ckpt-{id}{TRAIN_STATE_SUFFIX}"


def latest_checkpoint_id(path: str | Path) -> int | None:
    ids = [int(m.group(1)) for p in Path(path).glob("model.ckpt-*.pkl") if (m := CKPT_PATTERN.match(p.name))]
    return max(ids) if ids else None


def _architecture_mismatch(expected: dict[str, torch.Tensor], got: dict) -> list[str]:
    """Human-readable differences between a model's state dict and a loaded one."""
    problems = [f"missing {k} {tuple(v.shape)}" for k, v in expected.items() if k not in got]
    problems += [f"unexpected {k} {tuple(np.shape(got[k]))}" for k in got if k not in expected]
    problems += [f"{k}: checkpoint {tuple(np.shape(got[k]))} vs model {tuple(v.shape)}"
                 for k, v in expected.items() if k in got and tuple(np.shape(got[k])) != tuple(v.shape)]
    return problems


def _save_atomically(payload, final: Path) -> None:
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            torch.save(payload, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)


def _read(file: Path, device) -> object:
    try:
        return torch.load(file, map_location=device, weights_only=True)
    except Exception as e:  # truncated, overwritten, or not a torch file at all
        raise CheckpointError(f"cannot read checkpoint {file}: {type(e).__name__}: {e}") from e


@attached
class Agent(BaseAgent):
    def __init__(self, agent_type="player", device=None, logger=None, monitor=None, *,
                 settings: Settings | None = None, seed: int | None = None):
        """The platform builds it with its four arguments; the settings then come from
        `load_settings()`. Tools and tests may pass `settings` and a `seed`; without a seed the
        process's torch RNG (seeded by whoever started the process) decides the initial weights
        and the agent's own generators."""
        super().__init__(agent_type, device, logger, monitor)
        self.settings = settings or load_settings()
        self.model_cfg, self.ppo_cfg = self.settings.model, self.settings.ppo
        self.device = torch.device(device if device is not None else "cpu")
        with torch.random.fork_rng(devices=[], enabled=seed is not None):  # a seed never moves the caller's RNG
            if seed is not None:
                torch.manual_seed(seed)
            self.model = ActorCritic(self.model_cfg).to(self.device)
            generator_seeds = torch.randint(0, 2**62, (2,)).tolist()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.ppo_cfg.learning_rate,
                                          eps=self.ppo_cfg.adam_eps)
        self.sample_generator = torch.Generator(device=self.device)  # action sampling (this process's own)
        self.sample_generator.manual_seed(generator_seeds[0])
        self.shuffle_generator = torch.Generator()  # minibatch order (saved for an exact resume)
        self.shuffle_generator.manual_seed(generator_seeds[1])
        self.train_step = 0  # learn() calls
        self.samples_learned = 0  # drives the PPO schedules
        self.model_version = 0  # bumped by every update or load

    # --- acting ---------------------------------------------------------------------------------

    def _obs_tensors(self, list_obs_data: Sequence[ObsData]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        def stack(name):
            return torch.from_numpy(np.stack([getattr(o, name) for o in list_obs_data])).to(self.device)
        return stack("map"), stack("state"), stack("legal")

    @predict_wrapper
    def predict(self, list_obs_data: Sequence[ObsData]) -> list[ActData]:
        """Sample one action per observation (training), with its log-probability and value."""
        return self._act(list_obs_data, greedy=False)

    @exploit_wrapper
    def exploit(self, list_obs_data: Sequence[ObsData]) -> list[ActData]:
        """The most probable legal action per observation (evaluation)."""
        return self._act(list_obs_data, greedy=True)

    @torch.no_grad()
    def _act(self, list_obs_data: Sequence[ObsData], greedy: bool) -> list[ActData]:
        if not list_obs_data:
            return []
        self.model.eval()
        logits, value = self.model(*self._obs_tensors(list_obs_data))
        log_probs = torch.log_softmax(logits, dim=-1)
        if greedy:
            actions = log_probs.argmax(dim=-1, keepdim=True)
        else:
            actions = torch.multinomial(log_probs.exp(), 1, generator=self.sample_generator)
        chosen = log_probs.gather(1, actions).squeeze(1)
        value = self.model.value_norm.denormalize(value)  # identity until value normalisation learns
        return [ActData(action=int(a), log_prob=float(lp), value=float(v))
                for a, lp, v in zip(actions.squeeze(1).tolist(), chosen.tolist(), value.tolist())]

    # --- learning ---------------------------------------------------------------------------------

    @learn_wrapper
    def learn(self, list_sample_data: Sequence[SampleData] | np.ndarray) -> dict[str, float]:
        """One PPO update on a batch: a list of SampleData or the (N, SAMPLE_DIM) rows they pack to.
        Returns its statistics named as metrics ("loss/policy", "ppo/approx_kl", ...)."""
        if len(list_sample_data) == 0:
            raise ValueError("learn() got an empty batch")
        if isinstance(list_sample_data, np.ndarray):
            fields = {k: np.ascontiguousarray(v) for k, v in SAMPLE_ROWS.to_batch(list_sample_data).items()}
        else:  # one copy per field, straight from the samples
            fields = SAMPLE_ROWS.stack(list_sample_data)
        rows = fields["action"]
        batch = {k: torch.from_numpy(v).to(self.device) for k, v in fields.items()}
        batch["action"] = batch["action"].long()
        progress = self.samples_learned / self.ppo_cfg.schedule_samples
        self.model.train()
        value_norm = self.model.value_norm if self.ppo_cfg.value_norm else None
        metrics = ppo_update(self.model, self.optimizer, batch, self.ppo_cfg, progress, value_norm,
                             self.shuffle_generator)
        self.train_step += 1
        self.samples_learned += len(rows)
        self.model_version += 1
        metrics.update(batch_size=float(len(rows)))
        return {METRIC_NAMES.get(name, "ppo/" + name): value for name, value in metrics.items()}

    # --- checkpoints --------------------------------------------------------------------------------

    @save_model_wrapper
    def save_model(self, path=None, id="1") -> Path:
        """Write `path/model.ckpt-{id}.pkl` (the model's state dict) and, beside it, the training
        state; both atomically. Returns the .pkl path."""
        if path is None:
            raise CheckpointError("save_model(path=None): without the platform's framework, give a directory")
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        _save_atomically({k: v.detach().cpu() for k, v in self.model.state_dict().items()}, checkpoint_file(path, id))
        _save_atomically({
            "format": 2,
            "model_config": dataclasses.asdict(self.model_cfg),
            "optimizer": self.optimizer.state_dict(),
            "shuffle_rng": self.shuffle_generator.get_state(),
            **{name: int(getattr(self, name)) for name in COUNTERS},
        }, train_state_file(path, id))
        dir_fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # make the renames themselves durable
        finally:
            os.close(dir_fd)
        return checkpoint_file(path, id)

    @load_model_wrapper
    def load_model(self, path=None, id="1") -> None:
        """Load `path/model.ckpt-{id}.pkl` ("latest": the newest there) and, when it is beside it,
        the training state. Everything is checked before anything is applied: a checkpoint that
        reads but would poison training (non-finite values, another architecture, optimizer
        moments that do not fit) raises CheckpointError and leaves the agent as it was."""
        if path is None:
            raise CheckpointError("load_model(path=None): without the platform's framework, give a directory")
        path = Path(path)
        if id == "latest":
            id = latest_checkpoint_id(path)
            if id is None:
                raise CheckpointError(f"no checkpoint model.ckpt-*.pkl in {path}")
        file = checkpoint_file(path, id)
        if not file.is_file():
            raise CheckpointError(f"checkpoint not found: {file}")
        state = _read(file, self.device)
        self._check_model_state(state, file)
        train_file = train_state_file(path, id)
        train = _read(train_file, self.device) if train_file.is_file() else None
        if train is not None:
            self._check_train_state(train, train_file)
            self._try_train_state(train, train_file)
        self.model.load_state_dict(state)
        if train is None:
            self.model_version += 1
            return
        self.optimizer.load_state_dict(train["optimizer"])
        self.shuffle_generator.set_state(train["shuffle_rng"].cpu())
        for name in COUNTERS:
            setattr(self, name, int(train[name]))

    def _try_train_state(self, train: dict, file: Path) -> None:
        """Load the optimizer and RNG states into throwaway copies: what fails there fails before
        the agent changes."""
        try:
            torch.Generator().set_state(train["shuffle_rng"].cpu())
        except RuntimeError as e:
            raise CheckpointError(f"checkpoint {file}: shuffle_rng is not a generator state: {e}") from e
        probe = torch.optim.Adam(self.model.parameters(), lr=self.ppo_cfg.learning_rate, eps=self.ppo_cfg.adam_eps)
        try:
            probe.load_state_dict(train["optimizer"])
        except (ValueError, KeyError, TypeError, RuntimeError, IndexError) as e:
            raise CheckpointError(f"checkpoint {file}: optimizer state does not fit this model: {e}") from e

    def _check_model_state(self, state, file: Path) -> None:
        if not isinstance(state, dict):
            raise CheckpointError(f"{file} is not a model state dict (it holds a {type(state).__name__})")
        problems = _architecture_mismatch(self.model.state_dict(), state)
        if problems:
            raise CheckpointError(f"checkpoint {file} does not fit this model (model config "
                                  f"{dataclasses.asdict(self.model_cfg)}): " + "; ".join(problems))
        for key, value in state.items():
            if not isinstance(value, torch.Tensor):
                raise CheckpointError(f"checkpoint {file}: {key} is a {type(value).__name__}, not a tensor")
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                raise CheckpointError(f"checkpoint {file}: {key} holds NaN or infinite values")

    def _check_train_state(self, train, file: Path) -> None:
        def bad(why: str) -> CheckpointError:
            return CheckpointError(f"checkpoint {file}: {why}")

        if not isinstance(train, dict) or not all(k in train for k in ("optimizer", "shuffle_rng", *COUNTERS)):
            raise bad("not this agent's training state (optimizer, shuffle_rng, counters)")
        for key in COUNTERS:
            value = train[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise bad(f"{key} = {value!r} is not a non-negative integer")
        if not isinstance(train["shuffle_rng"], torch.Tensor) or train["shuffle_rng"].dtype != torch.uint8:
            raise bad("shuffle_rng is not a generator state")
        optimizer = train["optimizer"]
        if not isinstance(optimizer, dict) or not isinstance(optimizer.get("state"), dict):
            raise bad("optimizer is not an optimizer state dict")
        params = list(self.model.parameters())
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
