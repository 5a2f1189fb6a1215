"""The training episode loop (Kaiwu's `train_workflow.workflow`), K envs in lockstep.

Per step: observation_process for every env, one batched `agent.predict`, action_process,
env.step, reward_shaping, and a Frame per env. A chunk of frames becomes samples
(sample_process, GAE) when it reaches `num_steps` frames or its episode ends, and goes to
`agent.learn(samples)`: in local mode that agent trains (after buffering a batch); in remote
mode the env worker's agent wrapper sends the samples to the replay server instead.

The loop knows nothing of processes or the replay server, and nothing of the model: it is the
place to change how episodes are run.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from feature.curriculum import CurriculumSampler
from feature.definition import Frame, action_process, observation_process, sample_process
from feature.reward import RewardConfig, reward_shaping
from feature.unpack import step_view

MAX_RESET_FAILURES = 3  # consecutive failed resets of one env before the loop gives up


@dataclass
class LoopSettings:
    curriculum: CurriculumSampler
    reward: RewardConfig
    num_steps: int  # frames per chunk
    gamma: float
    gae_lambda: float


@dataclass
class LoopStats:
    episodes: int = 0  # finished (won or timed out)
    env_steps: int = 0
    env_errors: int = 0  # exceptions raised by env.reset / env.step
    chunks: int = 0  # agent.learn calls
    samples: int = 0


@dataclass
class _Slot:
    """One env and the episode it is running."""

    index: int
    env: Any
    usr_conf: dict = field(default_factory=dict)
    obs_data: Any = None
    view: Any = None
    frames: list[Frame] = field(default_factory=list)
    steps: int = 0
    reward_sum: float = 0.0
    term_sums: dict[str, float] = field(default_factory=dict)


def _episode_report(slot: _Slot, score, terminated: bool) -> dict[str, float]:
    report = {
        "total_score": float(score.total_score),
        "chests": float(score.treasure_count),
        "chests_total": float(len(slot.usr_conf["diy"].get("treasure_id", []))),
        "steps": float(slot.steps),
        "win": 1.0 if terminated else 0.0,
        "buff_count": float(score.buff_count),
        "flash_count": float(score.talent_count),
        "reward": slot.reward_sum,
    }
    report.update({f"reward/{name}": value for name, value in slot.term_sums.items()})
    return report


def workflow(envs: Sequence[Any], agents: Sequence[Any], logger: logging.Logger | None, monitor: Any,
             settings: LoopSettings, should_stop: Callable[[], bool], stats: LoopStats | None = None) -> LoopStats:
    """Run episodes on all `envs` with `agents[0]` until `should_stop()`; returns the counters.

    `monitor.put(dict)` receives one report per finished episode (see _episode_report).
    """
    logger = logger or logging.getLogger(__name__)
    agent = agents[0]
    stats = stats or LoopStats()
    slots = [_Slot(i, env) for i, env in enumerate(envs)]

    def reset(slot: _Slot) -> None:
        for _ in range(MAX_RESET_FAILURES):
            slot.usr_conf = settings.curriculum.sample(stats.episodes, stats.env_steps)
            try:
                obs = slot.env.reset(usr_conf=slot.usr_conf)
                env_info = slot.env.env_info
            except Exception:
                stats.env_errors += 1
                logger.exception("env %d: reset failed with usr_conf %s", slot.index, slot.usr_conf)
                continue
            slot.obs_data = observation_process(obs, env_info)
            slot.view = step_view(obs, None, env_info)
            slot.frames, slot.steps, slot.reward_sum, slot.term_sums = [], 0, 0.0, {}
            return
        raise RuntimeError(f"env {slot.index}: reset failed {MAX_RESET_FAILURES} times in a row")

    def flush(slot: _Slot, bootstrap_value: float) -> None:
        samples = sample_process(slot.frames, bootstrap_value, settings.gamma, settings.gae_lambda)
        slot.frames = []
        agent.learn(samples)
        stats.chunks += 1
        stats.samples += len(samples)

    for slot in slots:
        reset(slot)

    while not should_stop():
        acts = agent.predict([slot.obs_data for slot in slots])
        need_bootstrap: list[_Slot] = []  # chunk cut mid-episode or episode truncated: V(s') needed
        finished: list[tuple[_Slot, Any, bool]] = []
        for slot, act in zip(slots, acts):
            action = action_process(act)
            try:
                _, obs, score, terminated, truncated, env_info = slot.env.step(action)
            except Exception:
                stats.env_errors += 1
                logger.exception("env %d: step(%d) failed at step %d; episode dropped", slot.index, action, slot.steps)
                reset(slot)
                continue
            stats.env_steps += 1
            slot.steps += 1
            view = step_view(obs, score, env_info, terminated, truncated)
            reward, terms = reward_shaping(slot.view, view, action, settings.reward)
            slot.reward_sum += reward
            for name, value in terms.items():
                slot.term_sums[name] = slot.term_sums.get(name, 0.0) + value
            slot.frames.append(Frame(obs=slot.obs_data, act=act, reward=reward, terminated=bool(terminated)))
            slot.obs_data, slot.view = observation_process(obs, env_info), view

            if terminated:
                flush(slot, 0.0)
            elif truncated or len(slot.frames) >= settings.num_steps:
                need_bootstrap.append(slot)
            if terminated or truncated:
                finished.append((slot, score, bool(terminated)))

        if need_bootstrap:
            values = agent.predict([slot.obs_data for slot in need_bootstrap])
            for slot, value in zip(need_bootstrap, values):
                flush(slot, value.value)
        for slot, score, terminated in finished:
            stats.episodes += 1
            if monitor is not None:
                monitor.put(_episode_report(slot, score, terminated))
            reset(slot)
    return stats
