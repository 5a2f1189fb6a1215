"""The gorge_chase survival task: the smallest real learning problem of gorge_chase, shared by
tests/test_learning_gorge.py and measurements (tools/gorge_chase/survival.py trains it over seeds).

Generated maps 1-4, one monster (monster_interval -2: no second one), no chests or buffs, 200
steps. A random policy is caught within about 15 steps (the monster spawns 10 cells away and
chases on the shortest path). The gorge_chase PPO package (its features, reward
terms and episode loop) trains in one process (workflow.host.local_trainer) for a budget of env
steps; then its greedy policy (exploit) plays EVAL_EPISODES fresh episodes on generated maps it
never saw (11-14), beside a random legal policy on the same episodes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tasks.small import Greedy, RandomLegal, small_ppo_config, untrained_agent

MAX_STEP = 200
TRAIN_MAPS, EVAL_MAPS = [1, 2, 3, 4], [11, 12, 13, 14]
BUDGET_ENV_STEPS = 8_000
WINDOW = 50  # the last training episodes the learned mean is taken over
EVAL_EPISODES = 12


def survival_config(seed: int = 0, **ppo):
    """The task's AppConfig (tasks.small) on the training maps."""
    from feature.gorge_chase.observation import FeatureConfig

    cfg = small_ppo_config("gorge_chase", seed, 1e-3, ppo)
    cfg.curriculum_gorge = task_curriculum(TRAIN_MAPS)
    # the task measures what the network learns: exploit's look-ahead would escape for it
    cfg.features_gorge = FeatureConfig(lookahead_guard=False)
    return cfg


def task_curriculum(maps: list[int]):
    from feature.gorge_chase.curriculum import CurriculumConfig

    return CurriculumConfig(map=list(maps), monster_interval=-2, treasure_count=0, buff_count=0, max_step=MAX_STEP)


def play(choose, episodes: int = EVAL_EPISODES, seed: int = 1000) -> float:
    """Mean steps survived by `choose(env_obs) -> act` (after `choose.reset()` if it has one) on
    `episodes` fresh episodes of the held-out maps, episode i seeded seed + i."""
    from realm import make_env

    env = make_env(protocol="gorge", seed=seed)
    steps = []
    for i in range(episodes):
        usr_conf = task_curriculum([EVAL_MAPS[i % len(EVAL_MAPS)]]).usr_conf()
        env_obs = env.reset(usr_conf, seed=seed + i)
        if hasattr(choose, "reset"):
            choose.reset(env_obs)
        while not (env_obs["terminated"] or env_obs["truncated"]):
            _, env_obs = env.step(int(choose(env_obs)))
        steps.append(env_obs["observation"]["step_no"])
    return float(np.mean(steps))


@dataclass
class SurvivalResult:
    seed: int
    env_steps: int
    updates: int
    seconds: float
    first_steps: float  # mean steps survived over the first 20 training episodes
    train_steps: float  # ... over the last WINDOW training episodes
    eval_steps: float  # the trained greedy policy on the held-out maps
    untrained_steps: float  # the same agent's greedy policy before training, same episodes
    random_steps: float  # a random legal policy, same episodes
    agent: object = None


def train_survival(cfg, budget_env_steps: int = BUDGET_ENV_STEPS) -> SurvivalResult:
    from workflow.host.kaiwu_package import KaiwuPackage  # noqa: F401 (the agent's package settles its imports)
    from workflow.host.local_trainer import train_local

    start = time.monotonic()
    result = train_local(cfg, max_env_steps=budget_env_steps, window=WINDOW)
    steps = [e["steps"] for e in result.episodes]
    untrained = untrained_agent(cfg)
    return SurvivalResult(seed=cfg.app.seed, env_steps=result.stats.env_steps, updates=len(result.updates),
                          seconds=time.monotonic() - start, first_steps=float(np.mean(steps[:20])),
                          train_steps=float(np.mean(steps[-WINDOW:])), eval_steps=play(Greedy(result.agent)),
                          untrained_steps=play(Greedy(untrained)), random_steps=play(RandomLegal(cfg.app.seed)),
                          agent=result.agent)


def seed_account(seed: int, budget: int) -> str:
    r = train_survival(survival_config(seed), budget)
    return (f"{r.env_steps} env steps, {r.updates} updates, {r.seconds:.0f} s; steps survived: first {r.first_steps:.1f}, "
            f"last {WINDOW} {r.train_steps:.1f}, held-out greedy {r.eval_steps:.1f} (untrained {r.untrained_steps:.1f}, "
            f"random {r.random_steps:.1f})")
