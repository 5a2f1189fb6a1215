"""The PPO Agent over any game's features (`PPOAgent`): predict / exploit / learn /
save_model / load_model around one ActorCritic, with the platform's constructor and decorators.
A game's agent module (`<algo>/algorithm/agent.py`: agent.back_to_the_realm.ppo_agent for Back to the Realm,
agent.ppo_view_agent's for the later games) names its sample rows, its input shape, where its
settings come from and how its observation says a cell was visited before.

The same class serves every role. On the platform, and in this toolkit's training system, the
decorators route the calls (kaiwu_agent.agent.base_agent): an aisrv's `learn` sends the samples
to the replay buffer, the learner's `learn` runs the PPO update below, an aisrv's
`load_model(id="latest")` loads the model pool's newest checkpoint. Without a framework (a
tool, a test) every method runs as written.

A checkpoint (agent.checkpoint_io, agent.checkpointed) is `model.ckpt-{id}.pkl`, the model's
state dict (the value-normalisation statistics are buffers of the model, so they travel with
it), the counters and the model options (core, action head) in
`model.ckpt-{id}.progress.json`, and `model.ckpt-{id}.train.pt`: the optimizer and the
minibatch RNG.

With a recurrent core ([model] core, agent.core) acting reads each observation's `core_state`
(zeros when None: an episode's first step) and hands the next one out with the action; learning
unrolls each segment from the state it stored (`sequence_batch`) instead of flattening frames.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import torch

from agent.checkpoint_io import check_train_state
from agent.checkpointed import CheckpointedAgent
from agent.gae import gae, valid_frames
from agent.model import ActorCritic
from agent.ppo import ppo_update
from feature.segments import ActData, ObsData
from kaiwu_agent.agent.base_agent import (exploit_wrapper, learn_wrapper, load_model_wrapper, predict_wrapper,
                                          save_model_wrapper)

#: learn()'s statistics as metric names ("<group>/<name>"); the rest go under "ppo/"
METRIC_NAMES = {"policy_loss": "loss/policy", "value_loss": "loss/value"}


class PPOAgent(CheckpointedAgent):
    #: the network keeps its precision-sensitive layers in fp32 (agent.model), so the learner's
    #: precision "auto" may run the update in bf16 (workflow.precision)
    bf16_ready = True
    #: the game's sample rows (its feature.back_to_the_realm.ppo_definition's SAMPLE_ROWS) and the model's input (map
    #: channels, map size, state size): each game's agent sets them
    sample_rows = None
    input_shape: tuple[int, int, int] | None = None
    #: an observer of every act: `act_probe(list_obs_data, probabilities (B, actions), values (B,), actions)`,
    #: numpy arrays and the chosen indices (a recorded episode's view of the policy: evaluation.recorder);
    #: None, as in training, leaves acting without the critic's pass
    act_probe = None

    def __init__(self, agent_type="player", device=None, logger=None, monitor=None, *,
                 settings=None, seed: int | None = None):
        """The platform builds it with its four arguments; the settings then come from
        `load_settings()`. Tools and tests may pass `settings` and a `seed`; without a seed the
        process's torch RNG (seeded by whoever started the process) decides the initial weights
        and the agent's own generators."""
        super().__init__(agent_type, device, logger, monitor)
        self.settings = settings or self._load_settings()
        self.model_cfg, self.ppo_cfg = self.settings.model, self.settings.ppo
        self.device = torch.device(device if device is not None else "cpu")
        with torch.random.fork_rng(devices=[], enabled=seed is not None):  # a seed never moves the caller's CPU RNG
            if seed is not None:
                torch.manual_seed(seed)
            self.model = ActorCritic(self.model_cfg, self.input_shape).to(self.device)
            generator_seeds = torch.randint(0, 2**62, (2,)).tolist()
        self.sample_generator = torch.Generator(device=self.device)  # action sampling (this process's own)
        self.sample_generator.manual_seed(generator_seeds[0])
        self.shuffle_generator = torch.Generator()  # minibatch order (saved for an exact resume)
        self.shuffle_generator.manual_seed(generator_seeds[1])
        self.train_step = 0  # learn() calls
        self.samples_learned = 0  # frames learned: drives the PPO schedules
        self.model_version = 0  # bumped by every update or load

    # --- acting ---------------------------------------------------------------------------------

    def _obs_tensors(self, list_obs_data: Sequence[ObsData]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        def stack(name):
            return torch.from_numpy(np.stack([getattr(o, name) for o in list_obs_data])).to(self.device)
        return stack("map"), stack("state"), stack("legal")

    @predict_wrapper
    def predict(self, list_obs_data: Sequence[ObsData]) -> list[ActData]:
        """Sample one action per observation (training), with its log-probability."""
        return self._act(list_obs_data, greedy=False)

    @exploit_wrapper
    def exploit(self, list_obs_data: Sequence[ObsData]) -> list[ActData]:
        """Evaluation's action per observation, by `[ppo] exploit_policy`: the most probable
        legal action ("greedy"), a draw ("sample"), or the most probable unless the hero is
        back on a cell it ended `unstuck_visits` steps on before, where a draw breaks the loop
        ("unstuck")."""
        policy = self.ppo_cfg.exploit_policy
        if policy == "unstuck":
            return self._act(list_obs_data, greedy=[self._earlier_visits(o) < self.ppo_cfg.unstuck_visits
                                                    for o in list_obs_data])
        return self._act(list_obs_data, greedy=policy == "greedy")

    def _load_settings(self):
        """The package's settings in this process (its config module's load_settings)."""
        raise NotImplementedError

    def _earlier_visits(self, obs_data: ObsData) -> int:
        """How often the hero ended a step on its cell before (exploit's "unstuck" reads it)."""
        raise NotImplementedError

    def _core_states(self, list_obs_data: Sequence[ObsData]) -> torch.Tensor:
        """(B, core_state_size): each observation's recurrent state, zeros where it has none."""
        size = self.model.core_state_size
        states = np.zeros((len(list_obs_data), size), dtype=np.float32)
        for row, obs in zip(states, list_obs_data):
            if obs.core_state is not None:
                state = np.asarray(obs.core_state, dtype=np.float32).reshape(-1)
                if state.size != size:
                    raise ValueError(f"ObsData.core_state holds {state.size} numbers; this model's state has {size} "
                                     f"([model] core = {self.model_cfg.core!r}, core_size = {self.model_cfg.core_size})")
                row[:] = state
        return torch.from_numpy(states).to(self.device)

    @torch.inference_mode()
    def _act(self, list_obs_data: Sequence[ObsData], greedy: bool | list[bool]) -> list[ActData]:
        """`greedy`: argmax for all, a draw for all, or per observation. (inference_mode: no
        autograd bookkeeping at all, a little cheaper than no_grad per step.)"""
        if not list_obs_data:
            return []
        if self.model.training:  # eval() walks every submodule: 4 % of an aisrv's time, called per step
            self.model.eval()
        core_states = None
        if self.model.recurrent:
            logits, core_states = self.model.step(*self._obs_tensors(list_obs_data), self._core_states(list_obs_data))
            core_states = list(core_states.cpu().numpy())
        else:
            logits = self.model.policy(*self._obs_tensors(list_obs_data))
        log_probs = torch.log_softmax(logits, dim=-1)
        if greedy is True:
            actions = log_probs.argmax(dim=-1, keepdim=True)
        else:
            actions = torch.multinomial(log_probs.exp(), 1, generator=self.sample_generator)
            if greedy is not False:
                actions = torch.where(torch.tensor(greedy, device=log_probs.device)[:, None], log_probs.argmax(dim=-1, keepdim=True), actions)
        chosen = log_probs.gather(1, actions).squeeze(1)
        if self.act_probe is not None:
            self.act_probe(list_obs_data, log_probs.exp().float().cpu().numpy(), self._values(list_obs_data),
                           actions.squeeze(1).tolist())
        core_states = core_states or [None] * len(list_obs_data)
        return [ActData(action=int(a), log_prob=float(lp), core_state=state)
                for a, lp, state in zip(actions.squeeze(1).tolist(), chosen.tolist(), core_states)]

    @torch.no_grad()
    def _values(self, list_obs_data: Sequence[ObsData]) -> np.ndarray:
        """The critic's value of each observation (from its recurrent state, with a core), in
        return units, as the learner's GAE pass values a frame."""
        maps, states, legal = self._obs_tensors(list_obs_data)
        if self.model.recurrent:
            _, values = self.model.sequence(maps[:, None], states[:, None], legal[:, None], self._core_states(list_obs_data))
            values = values[:, 0]
        else:
            values = self.model.value(maps, states)
        return self.model.value_norm.denormalize(values).float().cpu().numpy()

    # --- learning ---------------------------------------------------------------------------------

    @learn_wrapper
    def learn(self, list_sample_data: Sequence) -> dict[str, float]:
        """One PPO update on a batch of segments (feature.back_to_the_realm.ppo_definition): advantages and returns
        from the current critic (`frame_batch`), then ppo_update on the segments' frames. Returns
        its statistics named as metrics ("loss/policy", "ppo/approx_kl", ...)."""
        if len(list_sample_data) == 0:
            raise ValueError("learn() got an empty batch")
        fields = self.sample_rows.stack(list_sample_data)  # one copy per field, straight from the samples
        segments = {k: torch.from_numpy(v).to(self.device) for k, v in fields.items()}
        batch, frames = self.update_batch(segments)
        progress = self.samples_learned / self.ppo_cfg.schedule_samples
        self.model.train()
        value_norm = self.model.value_norm if self.ppo_cfg.value_norm else None
        metrics = ppo_update(self.model, self.optimizer, batch, self.ppo_cfg, progress, value_norm,
                             self.shuffle_generator)
        self.train_step += 1
        self.samples_learned += frames
        self.model_version += 1
        metrics.update(batch_size=float(frames), segments=float(len(list_sample_data)))
        return {METRIC_NAMES.get(name, "ppo/" + name): value for name, value in metrics.items()}

    def update_batch(self, segments: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], int]:
        """Segments (N, SEGMENT_FRAMES, ...) -> (ppo_update's batch, the frames it trains on):
        frames (`frame_batch`), or sequences with a recurrent core (`sequence_batch`)."""
        if self.model.recurrent:
            batch = self.sequence_batch(segments)
            return batch, int(batch["train"].sum())
        batch = self.frame_batch(segments)
        return batch, len(batch["action"])

    def frame_batch(self, segments: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Segments (N, SEGMENT_FRAMES, ...) -> ppo_update's batch of their K frames (K, ...).

        One no-grad pass of the current critic values the K frames and the N bootstrap
        observations (in the learner's precision: learn runs under its autocast); GAE over those
        (agent.gae) gives the advantages, returns = advantages + values, and the values are the
        "old" values value clipping keeps the update near."""
        valid = valid_frames(segments["mask"])
        count = int(valid.sum())
        maps = torch.cat([segments["map"][valid], segments["next_map"]])
        states = torch.cat([segments["state"][valid], segments["next_state"]])
        with torch.no_grad():
            values = self.model.value_norm.denormalize(self.model.value(maps, states))  # identity without value_norm
        frame_values = values.new_zeros(valid.shape)
        frame_values[valid] = values[:count]
        advantages = gae(segments["reward"], frame_values, values[count:], segments["terminated"], valid,
                         self.ppo_cfg.gamma, self.ppo_cfg.gae_lambda)[valid]
        frame_values = frame_values[valid]
        return {"map": maps[:count], "state": states[:count], "legal": segments["legal"][valid],
                "action": segments["action"][valid].long(), "log_prob": segments["log_prob"][valid],
                "value": frame_values, "advantage": advantages, "ret": advantages + frame_values}

    def sequence_batch(self, segments: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Segments (N, SEGMENT_FRAMES, ...) -> ppo_update's batch of N sequences (N, T, ...), T
        the longest segment's frames, with the state each starts from (`core_state`) and
        `train` (N, T): the frames the loss reads (not padding, not burn-in).

        As frame_batch, but the critic unrolls each segment from its stored state, with the
        bootstrap observation as the step after its last frame."""
        valid = valid_frames(segments["mask"])
        lengths = valid.sum(dim=1)
        n, t = len(lengths), int(lengths.max())
        valid, rows = valid[:, :t], torch.arange(n, device=valid.device)
        core_state = segments["core_state"][:, :self.model.core_state_size]

        def then_next(name):  # the frames, and the next observation right after each segment's last one
            frames = segments[name][:, :t]
            out = torch.cat([frames, frames.new_zeros(frames[:, :1].shape)], dim=1)
            out[rows, lengths] = segments["next_" + name]
            return out

        with torch.no_grad():
            values = self.model.value_norm.denormalize(self.model.sequence_value(then_next("map"), then_next("state"),
                                                                                 core_state))
        frame_values = torch.where(valid, values[:, :t], values.new_zeros(()))
        advantages = gae(segments["reward"][:, :t], frame_values, values[rows, lengths], segments["terminated"][:, :t],
                         valid, self.ppo_cfg.gamma, self.ppo_cfg.gae_lambda)
        steps = torch.arange(t, device=valid.device)
        train = valid & (steps[None, :] >= segments["burn_in"][:, None])
        return {"map": segments["map"][:, :t], "state": segments["state"][:, :t], "legal": segments["legal"][:, :t],
                "core_state": core_state, "train": train, "action": segments["action"][:, :t].long(),
                "log_prob": segments["log_prob"][:, :t], "value": frame_values, "advantage": advantages,
                "ret": advantages + frame_values}

    # --- checkpoints --------------------------------------------------------------------------------

    @save_model_wrapper
    def save_model(self, path=None, id="1"):
        """Write checkpoint `id` into `path` (agent.checkpointed); returns the .pkl path."""
        return self.write_checkpoint(path, id)

    @load_model_wrapper
    def load_model(self, path=None, id="1") -> None:
        """Load `path/model.ckpt-{id}.pkl` ("latest": the newest there), its counters and, when it
        is beside it, the training state; a bad checkpoint raises CheckpointError and leaves the
        agent as it was (agent.checkpointed)."""
        self.read_checkpoint(path, id)

    def _describe(self) -> str:
        return f"model config {dataclasses.asdict(self.model_cfg)}"

    def _model_options(self) -> dict:
        """[model] core (with core_size) and action_head: a checkpoint loads only under the same."""
        options = {"core": self.model_cfg.core, "action_head": self.model_cfg.action_head}
        if self.model_cfg.core != "none":
            options["core_size"] = self.model_cfg.core_size
        return options

    def _train_state(self) -> dict:
        return {"format": 3, "model_config": dataclasses.asdict(self.model_cfg),
                "optimizer": self.optimizer.state_dict(), "shuffle_rng": self.shuffle_generator.get_state()}

    def _check_train_state(self, train, file) -> None:
        check_train_state(train, file, (), list(self.model.parameters()), self._new_optimizer,
                                        generators=("shuffle_rng",))

    def _apply_train_state(self, train, weights) -> None:
        if train is not None:
            self.optimizer.load_state_dict(train["optimizer"])
            self.shuffle_generator.set_state(train["shuffle_rng"].cpu())

    def _new_optimizer(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.model.parameters(), lr=self.ppo_cfg.learning_rate, eps=self.ppo_cfg.adam_eps)
