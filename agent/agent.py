"""Kaiwu's Agent: predict / exploit / learn / save_model / load_model around one ActorCritic.

The same class serves every role: an env worker calls `predict` (sampling) or `exploit`
(greedy, evaluation), the learner calls `learn`, and weights travel between them with
`get_weights` / `set_weights` (plain numpy, for the model pool). `model_version` counts updates
so a worker can tell which policy produced its samples.

Checkpoints are `model.ckpt-{id}.pkl`, written atomically (temp file, fsync, rename) and read
with `torch.load(weights_only=True)`: tensors and plain Python values only, never code.
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from agent.model import ActorCritic, ModelConfig
from agent.ppo import PPOConfig, ValueNorm, ppo_update
from feature.definition import ActData, ObsData, SampleData, numpy_to_batch, samples_to_numpy

CKPT_PATTERN = re.compile(r"^model\.ckpt-(\d+)\.pkl$")
VALUE_NORM_PREFIX = "value_norm."


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, unreadable or made for another model."""


def checkpoint_file(path: str | Path, id: int | str) -> Path:
    return Path(path) / f"model.ckpt-{id}.pkl"


def latest_checkpoint_id(path: str | Path) -> int | None:
    ids = [int(m.group(1)) for p in Path(path).glob("model.ckpt-*.pkl") if (m := CKPT_PATTERN.match(p.name))]
    return max(ids) if ids else None


def _check_plain(value, where: str = "extra") -> None:
    """Refuse what `torch.load(weights_only=True)` could not read back (numpy arrays, objects)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, (str, int)):
                raise TypeError(f"{where}: key {k!r} must be a str or int")
            _check_plain(v, f"{where}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_plain(v, f"{where}[{i}]")
    elif not (value is None or isinstance(value, (bool, int, float, str, torch.Tensor))):
        raise TypeError(f"{where}: {type(value).__name__} cannot be stored in a checkpoint; use tensors, "
                        "numbers, strings, lists and dicts (e.g. torch.from_numpy for arrays)")


def _architecture_mismatch(expected: dict[str, torch.Tensor], got: dict) -> list[str]:
    """Human-readable differences between a model's state dict and a loaded one."""
    problems = [f"missing {k} {tuple(v.shape)}" for k, v in expected.items() if k not in got]
    problems += [f"unexpected {k} {tuple(np.shape(got[k]))}" for k in got if k not in expected]
    problems += [f"{k}: checkpoint {tuple(np.shape(got[k]))} vs model {tuple(v.shape)}"
                 for k, v in expected.items() if k in got and tuple(np.shape(got[k])) != tuple(v.shape)]
    return problems


class Agent:
    def __init__(self, model_cfg: ModelConfig | None = None, ppo_cfg: PPOConfig | None = None,
                 device: str = "cpu", seed: int | None = None):
        self.model_cfg = model_cfg or ModelConfig()
        self.ppo_cfg = ppo_cfg or PPOConfig()
        self.device = torch.device(device)
        with torch.random.fork_rng(devices=[]):  # seeded init without touching the caller's RNG
            if seed is not None:
                torch.manual_seed(seed)
            self.model = ActorCritic(self.model_cfg).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.ppo_cfg.learning_rate,
                                          eps=self.ppo_cfg.adam_eps)
        self.value_norm = ValueNorm() if self.ppo_cfg.value_norm else None
        self.sample_generator = torch.Generator(device=self.device)  # action sampling
        self.shuffle_generator = torch.Generator()  # minibatch order
        if seed is not None:
            self.sample_generator.manual_seed(seed)
            self.shuffle_generator.manual_seed(seed + 1)
        else:
            self.sample_generator.seed()
            self.shuffle_generator.seed()
        self.train_step = 0  # learn() calls
        self.samples_learned = 0  # drives the PPO schedules
        self.model_version = 0  # bumped by every update or set_weights

    # --- acting ---------------------------------------------------------------------------------

    def _obs_tensors(self, list_obs_data: Sequence[ObsData]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        def stack(name):
            return torch.from_numpy(np.stack([getattr(o, name) for o in list_obs_data])).to(self.device)
        return stack("map"), stack("state"), stack("legal")

    def _value_out(self, value: torch.Tensor) -> torch.Tensor:
        return self.value_norm.denormalize(value) if self.value_norm is not None else value

    def predict(self, list_obs_data: Sequence[ObsData]) -> list[ActData]:
        """Sample one action per observation (training), with its log-probability and value."""
        return self._act(list_obs_data, greedy=False)

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
        value = self._value_out(value)
        return [ActData(action=int(a), log_prob=float(lp), value=float(v))
                for a, lp, v in zip(actions.squeeze(1).tolist(), chosen.tolist(), value.tolist())]

    # --- learning ---------------------------------------------------------------------------------

    def learn(self, list_sample_data: Sequence[SampleData] | np.ndarray) -> dict[str, float]:
        """One PPO update on a batch: a list of SampleData or the (N, SAMPLE_DIM) rows they pack to."""
        rows = list_sample_data if isinstance(list_sample_data, np.ndarray) else samples_to_numpy(list_sample_data)
        if len(rows) == 0:
            raise ValueError("learn() got an empty batch")
        batch = {k: torch.from_numpy(np.ascontiguousarray(v)).to(self.device) for k, v in numpy_to_batch(rows).items()}
        batch["action"] = batch["action"].long()
        progress = self.samples_learned / self.ppo_cfg.schedule_samples
        self.model.train()
        metrics = ppo_update(self.model, self.optimizer, batch, self.ppo_cfg, progress, self.value_norm,
                             self.shuffle_generator)
        self.train_step += 1
        self.samples_learned += len(rows)
        self.model_version += 1
        metrics.update(train_step=float(self.train_step), batch_size=float(len(rows)))
        return metrics

    # --- weights (model pool) -----------------------------------------------------------------

    def get_weights(self) -> dict[str, np.ndarray]:
        """Model tensors (and value-norm statistics) as numpy copies."""
        weights = {k: v.detach().cpu().numpy().copy() for k, v in self.model.state_dict().items()}
        if self.value_norm is not None:
            weights.update({VALUE_NORM_PREFIX + k: v.numpy().copy() for k, v in self.value_norm.state_dict().items()})
        return weights

    def set_weights(self, weights: dict[str, np.ndarray], version: int | None = None) -> None:
        model_part = {k: v for k, v in weights.items() if not k.startswith(VALUE_NORM_PREFIX)}
        norm_part = {k[len(VALUE_NORM_PREFIX):]: v for k, v in weights.items() if k.startswith(VALUE_NORM_PREFIX)}
        self._load_model_state(model_part, "weights")
        self._load_value_norm(norm_part or None, "weights")
        self.model_version = self.model_version + 1 if version is None else int(version)

    def _check_content(self, payload: dict, file: Path) -> None:
        """Refuse, before anything is applied, a checkpoint that reads but would poison training:
        non-finite weights or statistics, optimizer moments that do not fit the parameters,
        counters that are not non-negative integers."""
        def bad(why: str) -> CheckpointError:
            return CheckpointError(f"checkpoint {file}: {why}")

        for where, state in (("model", payload["model"]), ("value_norm", payload.get("value_norm") or {})):
            if not isinstance(state, dict):
                raise bad(f"{where} is a {type(state).__name__}, not a state dict")
            for key, value in state.items():
                if not isinstance(value, torch.Tensor):
                    raise bad(f"{where}.{key} is a {type(value).__name__}, not a tensor")
                if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                    raise bad(f"{where}.{key} holds NaN or infinite values")
        for key in ("train_step", "samples_learned", "model_version"):
            value = payload.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise bad(f"{key} = {value!r} is not a non-negative integer")
        optimizer = payload["optimizer"]
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

    def _load_model_state(self, state: dict, source: str) -> None:
        expected = self.model.state_dict()
        problems = _architecture_mismatch(expected, state)
        if problems:
            raise CheckpointError(f"{source} do not fit this model (model config "
                                  f"{dataclasses.asdict(self.model_cfg)}): " + "; ".join(problems))
        self.model.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})

    def _load_value_norm(self, state: dict | None, source: str) -> None:
        if state is None:
            if self.value_norm is not None:
                self.value_norm = ValueNorm()  # raw-return critic: identity statistics fit it
            return
        if self.value_norm is None:
            raise CheckpointError(f"{source}: the critic was trained with ppo.value_norm = true; "
                                  "set it here too, or its values are read in the wrong units")
        self.value_norm.load_state_dict(state)

    # --- checkpoints --------------------------------------------------------------------------------

    def save_model(self, path: str | Path, id: int | str, extra: dict | None = None) -> Path:
        """Write `path/model.ckpt-{id}.pkl` atomically. `extra`: the caller's counters, RNG states...
        (tensors and plain Python values only, so weights_only loading can read it)."""
        _check_plain(extra or {})
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        final = checkpoint_file(path, id)
        payload = {
            "format": 1,
            "model_config": dataclasses.asdict(self.model_cfg),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "value_norm": self.value_norm.state_dict() if self.value_norm is not None else None,
            "train_step": self.train_step,
            "samples_learned": self.samples_learned,
            "model_version": self.model_version,
            "extra": extra or {},
        }
        tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
        try:
            with open(tmp, "wb") as f:
                torch.save(payload, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
        dir_fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # make the rename itself durable
        finally:
            os.close(dir_fd)
        return final

    def load_model(self, path: str | Path, id: int | str = "latest") -> dict:
        """Restore model, optimizer, value-norm statistics and counters; returns the `extra` dict."""
        path = Path(path)
        if id == "latest":
            id = latest_checkpoint_id(path)
            if id is None:
                raise CheckpointError(f"no checkpoint model.ckpt-*.pkl in {path}")
        file = checkpoint_file(path, id)
        if not file.is_file():
            raise CheckpointError(f"checkpoint not found: {file}")
        try:
            payload = torch.load(file, map_location=self.device, weights_only=True)
        except Exception as e:  # truncated, overwritten, or not a torch file at all
            raise CheckpointError(f"cannot read checkpoint {file}: {type(e).__name__}: {e}") from e
        missing = [k for k in ("model", "optimizer", "train_step") if not isinstance(payload, dict) or k not in payload]
        if missing:
            raise CheckpointError(f"{file} is not an agent checkpoint (missing {', '.join(missing)})")
        self._check_content(payload, file)
        self._load_model_state(payload["model"], f"checkpoint {file}")
        self._load_value_norm(payload.get("value_norm"), f"checkpoint {file}")
        try:
            self.optimizer.load_state_dict(payload["optimizer"])
        except (ValueError, KeyError) as e:
            raise CheckpointError(f"checkpoint {file}: optimizer state does not fit this model: {e}") from e
        self.train_step = int(payload["train_step"])
        self.samples_learned = int(payload.get("samples_learned", 0))
        self.model_version = int(payload.get("model_version", self.train_step))
        return dict(payload.get("extra") or {})
