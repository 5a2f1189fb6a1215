"""The one episode runner: training, evaluation and rendering step episodes through it.

`EpisodeRunner` holds K envs in lockstep. Each `step()` turns every env's observation into the
package's ObsData (`observation_process`), asks the agent once for all of them (`predict` while
training, `exploit` when evaluating), turns each answer into the env's action
(`action_process`) and steps the envs. What happens with a step (reward shaping, samples, a
video frame) is the caller's. `EpisodeStats` is the one summary of a finished episode.

It takes the protocol functions as arguments, so it runs any Kaiwu package's agent, and it
imports nothing of the toolkit: it ships inside the exported package with train_workflow.

A recurrent policy's state (agent.core) rides on its answers: whatever an answer carries as
`core_state` the runner hands back as the `core_state` of the env's next observation, and a
reset makes an observation without one, so each episode starts from the policy's initial state
(training, evaluation and rendering alike; a package without memory answers None).

A v2 env (back_to_the_realm_v2) resets to `(obs, extra_info)` and steps to five values; with
`translate` the game's view (`view`: the episode's memory, feature.back_to_the_realm_v2.observation.V2View, which
the game's episodes hand over) is what `observation_process` and the Transitions see as the
observation.

A gorge_chase env (15.0.1) resets to the env_obs and steps to `(env_reward, env_obs)`; with
`translate` the game's view (feature.gorge_chase.observation.GorgeView) keeps the episode's memory.

Either protocol (episodes.protocol): a 2025 (18.0.2) env gets its usr_conf through `usr_conf_of`
when given (the 2024 game's episodes give feature.back_to_the_realm.curriculum.env_conf: a 2024 usr_conf as
env_conf; whether an env speaks 2025 is settled before its first reset: episodes.protocol
.env_protocol), and predict's `(list, model_version)` is unpacked. Its observations reach
`observation_process` as they come (the reset's `(obs, state)`, then each step's obs and state:
a 2025 package's own features read them so), unless `translate` asks for the 2024 shapes: then
a per-env view (feature.back_to_the_realm.observation18.Realm18View, which the 2024 game's episodes give) reads
each episode, and `observation_process`, the Transitions and whatever reads them (the project's
features and reward) see 2024 objects.

Every reset and step is decoded once, by the env's protocol (episodes.protocol: `EnvProtocol`,
`StepOutcome`, whose terminated / truncated / won / lost mean the same in every game); the
training system's host reads its envs' steps with the same objects (`env_protocol`, from here).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

from episodes.protocol import EnvProtocol, StepOutcome, act_list, env_protocol

__all__ = ["EpisodeRunner", "EpisodeStats", "Transition", "carry_core_state", "env_protocol"]


@dataclass
class EpisodeStats:
    """A finished episode as the game scored it."""

    total_score: float  # the final score (in the realm games 0 when the step limit ran out)
    chests: int
    steps: int
    win: bool  # the game's win (StepOutcome.won): reached the end; gorge_chase: survived to max_step
    buff_count: int
    flash_count: int

    @classmethod
    def from_outcome(cls, outcome: StepOutcome, steps: int) -> "EpisodeStats":
        """The episode that `outcome`, its last step, ended after `steps` steps."""
        score = outcome.score
        return cls(total_score=float(score.total_score), chests=int(score.treasure_count), steps=int(steps),
                   win=outcome.won, buff_count=int(score.buff_count), flash_count=int(score.talent_count))

    def report(self) -> dict[str, float]:
        """As numbers, for a monitor or a metrics row."""
        return {key: float(value) for key, value in asdict(self).items()}


@dataclass
class Transition:
    """What one env did in one `step()`."""

    index: int  # which env
    before: Any  # the ObsData the action was chosen from
    act: Any  # the agent's answer (ActData)
    action: int  # what the env was given
    #: the observation after the step and what came beside it, as the features read them (through the
    #: game's view when translated: a 2025 env's obs and state as the 2024 obs and env_info)
    obs: Any = None
    env_info: Any = None
    outcome: StepOutcome | None = None  # the step as its protocol decoded it: score, end flags, won / lost
    obs_data: Any = None  # observation_process(obs, env_info): what the next action is chosen from
    error: Exception | None = None  # env.step raised: the episode is lost, reset the env

    @property
    def score(self):
        return None if self.outcome is None else self.outcome.score

    @property
    def terminated(self) -> bool:
        return self.outcome is not None and self.outcome.terminated

    @property
    def truncated(self) -> bool:
        return self.outcome is not None and self.outcome.truncated

    @property
    def won(self) -> bool:
        return self.outcome is not None and self.outcome.won

    @property
    def lost(self) -> bool:
        return self.outcome is not None and self.outcome.lost

    @property
    def ended(self) -> bool:
        return self.outcome is not None and self.outcome.ended

    def stats(self, steps: int) -> EpisodeStats:
        return EpisodeStats.from_outcome(self.outcome, steps)


def carry_core_state(act, obs_data):
    """`obs_data` with the recurrent state `act` handed out (module docstring), if it has one."""
    core_state = getattr(act, "core_state", None)
    if core_state is not None and hasattr(obs_data, "core_state"):
        obs_data.core_state = core_state
    return obs_data


class _Slot:
    def __init__(self, env, protocol: EnvProtocol):
        self.env = env
        self.protocol = protocol
        self.view = None  # the game's view of a translated protocol's episode (EpisodeRunner's `view`)
        self.obs_data = None
        self.steps = 0


class EpisodeRunner:
    def __init__(self, envs: Sequence[Any], act: Callable[[list], list], observation_process: Callable,
                 action_process: Callable, kaiwu_version: str | None = None, translate: bool = False,
                 view: type | None = None, usr_conf_of: Callable | None = None):
        """`act(list_obs_data) -> list_act_data` is the agent's predict or exploit (a 2025
        aisrv's `(list, model_version)` is unpacked). `kaiwu_version` (episodes.protocol.KAIWU_VERSIONS): the
        protocol of every env; None: each env's own (episodes.protocol.env_protocol).
        `translate`: hand on the observations of an env whose protocol translates through `view`,
        the game's (one per episode; module docstring). `usr_conf_of`: a usr_conf as such an env's
        reset takes it (None: as it is given)."""
        self.slots = [_Slot(env, env_protocol(env, kaiwu_version)) for env in envs]
        self.translate = translate
        self.view_class = view
        self.usr_conf_of = usr_conf_of
        self.act = act
        self.observation_process = observation_process
        self.action_process = action_process

    def obs_data(self, index: int):
        return self.slots[index].obs_data

    def steps(self, index: int) -> int:
        return self.slots[index].steps

    def reset(self, index: int, usr_conf: dict | None, **kwargs):
        """Start an episode on env `index` with a usr_conf (a 2025 env gets a 2024 `{"diy": ...}`
        as env_conf) and kwargs for env.reset (e.g. a seed); returns what reset returned (with
        `translate`, a 2025 env's observation in the 2024 shape), or None when the env gave no
        observation. A 2024 reset returns no env_info, so the first ObsData is made without it."""
        slot = self.slots[index]
        if self.usr_conf_of is not None and slot.protocol.translates:
            usr_conf = self.usr_conf_of(usr_conf)
        outcome = slot.protocol.reset(slot.env.reset(usr_conf=usr_conf, **kwargs))
        slot.view = None
        if outcome.obs is None:
            return None
        slot.view = self._new_view(slot)
        if slot.protocol.info_at_reset:  # v2: the observation and extra_info, both for the features
            obs, info = (outcome.obs, outcome.info) if slot.view is None else slot.view.reset(outcome.obs, outcome.info)
        else:  # the observation alone: through the view, else as reset returned it (18: the (obs, state) pair)
            obs, info = (outcome.returned if slot.view is None else slot.view.reset(outcome.obs)[0]), None
        slot.obs_data = self.observation_process(obs, info)
        slot.steps = 0
        return obs

    def _new_view(self, slot: _Slot):
        """A fresh view of the episode starting on `slot` (None: its observations as they come)."""
        translated = self.translate and slot.protocol.translates and self.view_class is not None
        return self.view_class() if translated else None

    def step(self, indices: Sequence[int] | None = None) -> list[Transition]:
        """One action on each env of `indices` (default all), chosen in one batched call."""
        indices = range(len(self.slots)) if indices is None else indices
        befores = [self.slots[i].obs_data for i in indices]
        acts = act_list(self.act(befores))
        out = []
        for i, before, act in zip(indices, befores, acts):
            slot, action = self.slots[i], int(self.action_process(act))
            try:
                outcome = slot.protocol.step(slot.env.step(action))
                obs, env_info = outcome.obs, outcome.info
                if slot.view is not None:  # translated: the view reads the episode (2025: rebuilds env_info)
                    if obs is None:
                        raise RuntimeError("env.step returned no observation")
                    obs, env_info = (slot.view.step(obs, env_info) if slot.protocol.info_at_reset
                                     else slot.view.step(obs))
            except Exception as e:  # one env failing ends its episode only
                out.append(Transition(i, before, act, action, error=e))
                continue
            slot.steps += 1
            slot.obs_data = carry_core_state(act, self.observation_process(obs, env_info))
            out.append(Transition(i, before, act, action, obs, env_info, outcome, slot.obs_data))
        return out

    def play(self, usr_conf: dict | None, index: int = 0, on_step: Callable[[Transition], None] | None = None,
             **reset_kwargs) -> tuple[EpisodeStats, list[int]]:
        """One whole episode on env `index`: (its stats, the actions taken). An env error is raised."""
        if self.reset(index, usr_conf, **reset_kwargs) is None:
            raise RuntimeError(f"env.reset returned no observation for usr_conf {usr_conf}")
        actions = []
        while True:
            (transition,) = self.step([index])
            if transition.error is not None:
                raise transition.error
            actions.append(transition.action)
            if on_step is not None:
                on_step(transition)
            if transition.ended:
                return transition.stats(self.slots[index].steps), actions
