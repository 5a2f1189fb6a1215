"""Kaiwu's Agent for the DQN package (`dqn_plus`): predict (epsilon-greedy) / exploit (greedy) /
learn (agent.dqn: Double DQN, n-step, dueling, prioritized replay) / save_model / load_model.

`learn` reads each sample's importance-sampling weight (`is_weight`, set by the training
system under prioritized replay; 1 otherwise) and returns the new priorities, |TD error| per
sample, as `{"priority": [...]}` beside its statistics, as the training system's prioritized
replay expects. Exploration anneals with the run's learned samples, which every model the
aisrv load carries, so a restarted aisrv or a resumed run explores as the run had reached.

Checkpoints (agent.checkpoint_io, agent.checkpointed): `model.ckpt-{id}.pkl` is the online
network's state dict, `model.ckpt-{id}.progress.json` the counters, `model.ckpt-{id}.train.pt`
the target network and the optimizer.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Sequence

import numpy as np
import torch

from agent.checkpoint_io import check_state_dict, check_train_state
from agent.checkpointed import CheckpointedAgent
from agent.dqn import dqn_update, masked_argmax, sync_target
from agent.back_to_the_realm.dqn_plus_config import Settings, load_settings
from agent.model import QNetwork
from agent.workflow_methods import WorkflowMethods
from feature.back_to_the_realm.dqn_plus_definition import SAMPLE_ROWS, ActData, SampleData
from feature.back_to_the_realm.layout import INPUT_SHAPE, earlier_visits
from kaiwu_agent.agent.base_agent import (exploit_wrapper, learn_wrapper, load_model_wrapper, predict_wrapper,
                                          save_model_wrapper)
from kaiwu_agent.utils.common_func import attached

METRIC_NAMES = {"loss": "loss/q"}  # the rest go under "dqn/"


@attached
class Agent(WorkflowMethods, CheckpointedAgent):
    #: the network keeps its precision-sensitive layers in fp32 (agent.model), so the learner's
    #: precision "auto" may run the update in bf16 (workflow.precision)
    bf16_ready = True

    def __init__(self, agent_type="player", device=None, logger=None, monitor=None, *,
                 settings: Settings | None = None, seed: int | None = None):
        """As the PPO agent: the platform's four arguments; tools and tests may pass `settings`
        and a `seed` (initial weights and the exploration RNG)."""
        super().__init__(agent_type, device, logger, monitor)
        self.settings = settings or load_settings()
        self.model_cfg, self.dqn_cfg = self.settings.model, self.settings.dqn
        self.device = torch.device(device if device is not None else "cpu")
        with torch.random.fork_rng(devices=[], enabled=seed is not None):
            if seed is not None:
                torch.manual_seed(seed)
            self.model = QNetwork(self.model_cfg, INPUT_SHAPE, self.dqn_cfg.dueling).to(self.device)
            explore_seed = int(torch.randint(0, 2**62, (1,)).item())
        self.target_model = copy.deepcopy(self.model).requires_grad_(False)
        self.explore_rng = np.random.default_rng(explore_seed)  # this process's own (not checkpointed)
        self.sample_generator = torch.Generator()  # exploit's loop-breaking draws (evaluation seeds it per episode)
        self.sample_generator.manual_seed(explore_seed)
        self.train_step = 0
        self.samples_learned = 0  # drives epsilon
        self.model_version = 0

    def _new_optimizer(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.model.parameters(), lr=self.dqn_cfg.learning_rate, eps=self.dqn_cfg.adam_eps)

    # --- acting ---------------------------------------------------------------------------------

    @property
    def epsilon(self) -> float:
        return self.dqn_cfg.epsilon(self.samples_learned)

    @predict_wrapper
    def predict(self, list_obs_data) -> list[ActData]:
        """Epsilon-greedy: a uniformly random legal action with probability epsilon, else the greedy one."""
        return self._act(list_obs_data, self.epsilon)

    @exploit_wrapper
    def exploit(self, list_obs_data) -> list[ActData]:
        """The legal action of the highest value; with `[dqn] exploit_policy = "unstuck"`, a random
        legal action instead where the hero is back on a cell it ended `unstuck_visits` steps on."""
        out = self._act(list_obs_data, 0.0)
        if self.dqn_cfg.exploit_policy == "unstuck":
            for i, obs in enumerate(list_obs_data):
                if earlier_visits(obs.map) >= self.dqn_cfg.unstuck_visits:
                    legal = np.flatnonzero(np.asarray(obs.legal) > 0.5)
                    action = int(legal[int(torch.randint(len(legal), (1,), generator=self.sample_generator))])
                    out[i] = ActData(action=action, q=out[i].q)
        return out

    @torch.no_grad()
    def _act(self, list_obs_data: Sequence, epsilon: float) -> list[ActData]:
        if not list_obs_data:
            return []
        def stack(name):
            return torch.from_numpy(np.stack([getattr(o, name) for o in list_obs_data])).to(self.device)
        legal = stack("legal")
        if self.model.training:  # eval() walks every submodule: 4 % of an aisrv's time, called per step
            self.model.eval()
        q = self.model(stack("map"), stack("state"))
        greedy = masked_argmax(q, legal).tolist()
        chosen_q = q.gather(1, torch.tensor(greedy, device=self.device).unsqueeze(1)).squeeze(1).tolist()
        out = []
        for i, obs in enumerate(list_obs_data):
            if epsilon > 0 and self.explore_rng.random() < epsilon:
                action = int(self.explore_rng.choice(np.flatnonzero(np.asarray(obs.legal) > 0.5)))
                out.append(ActData(action=action, q=float(q[i, action])))
            else:
                out.append(ActData(action=int(greedy[i]), q=float(chosen_q[i])))
        return out

    # --- learning ---------------------------------------------------------------------------------

    @learn_wrapper
    def learn(self, list_sample_data: Sequence[SampleData]) -> dict:
        """One gradient step on a batch of samples; returns statistics (metric names) and
        "priority": |TD error| per sample (capped at [dqn] priority_clip), in the order given."""
        if len(list_sample_data) == 0:
            raise ValueError("learn() got an empty batch")
        fields = SAMPLE_ROWS.stack(list_sample_data)
        batch = {k: torch.from_numpy(v).to(self.device) for k, v in fields.items()}
        batch["action"] = batch["action"].long()
        weights = [getattr(s, "is_weight", None) for s in list_sample_data]
        if all(w is not None for w in weights):
            batch["is_weight"] = torch.tensor(weights, dtype=torch.float32, device=self.device)
        self.model.train()
        stats, priority = dqn_update(self.model, self.target_model, self.optimizer, batch, self.dqn_cfg)
        self.train_step += 1
        self.samples_learned += len(list_sample_data)
        self.model_version += 1
        sync_target(self.model, self.target_model, self.dqn_cfg, self.train_step)
        stats.update(epsilon=self.epsilon, batch_size=float(len(list_sample_data)))
        metrics: dict = {METRIC_NAMES.get(k, "dqn/" + k): v for k, v in stats.items()}
        metrics["priority"] = priority.cpu().tolist()
        return metrics

    # --- checkpoints --------------------------------------------------------------------------------

    @save_model_wrapper
    def save_model(self, path=None, id="1"):
        """Write checkpoint `id` into `path` (agent.checkpointed); returns the .pkl path."""
        return self.write_checkpoint(path, id)

    @load_model_wrapper
    def load_model(self, path=None, id="1") -> None:
        """Load checkpoint `id` ("latest": the newest) of `path`; everything is checked first, a
        bad checkpoint raises CheckpointError and leaves the agent as it was. Without a training
        state the target network starts as a copy of the loaded one."""
        self.read_checkpoint(path, id)

    def _describe(self) -> str:
        return f"model config {dataclasses.asdict(self.model_cfg)}, dueling {self.dqn_cfg.dueling}"

    def _train_state(self) -> dict:
        return {"format": 2, "model_config": dataclasses.asdict(self.model_cfg), "dueling": self.dqn_cfg.dueling,
                "target_model": {k: v.detach().cpu() for k, v in self.target_model.state_dict().items()},
                "optimizer": self.optimizer.state_dict()}

    def _check_train_state(self, train, file) -> None:
        check_train_state(train, file, ("target_model",), list(self.model.parameters()),
                                        self._new_optimizer)
        check_state_dict(self.model.state_dict(), train["target_model"], file, "target network")

    def _apply_train_state(self, train, weights) -> None:
        if train is None:
            self.target_model.load_state_dict(weights)
            return
        self.target_model.load_state_dict(train["target_model"])
        self.optimizer.load_state_dict(train["optimizer"])
