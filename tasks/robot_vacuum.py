"""The robot_vacuum cleaning task: the smallest real learning problem of robot_vacuum, shared by
tests/test_learning_vacuum.py and measurements (tools/robot_vacuum/learn.py trains it over seeds).

Generated maps 1-4, one official robot, one charger, 50 steps on a battery that lasts them
(battery_max 100: no charging to learn). The score is the dirty cells the hero cleans. A random
legal policy walks back over its own trail and cleans about 23 cells; a policy that steps onto
the dirt next to it whenever there is some cleans about 48 (measured on 16 held-out episodes). The
robot_vacuum PPO package (its features, reward terms and episode loop, as a run trains them)
trains in one process (workflow.host.local_trainer) for a budget of env steps, with a short
horizon (gamma 0.8: a cleaned cell pays on the step that enters it, and the rest of the episode
is noise to that choice); then its greedy policy (exploit) plays EVAL_EPISODES fresh episodes on
generated maps it never saw (11-14), beside a random legal policy and the same agent untrained,
on the same episodes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tasks.small import Greedy, RandomLegal, small_ppo_config, untrained_agent

MAX_STEP = 50
TRAIN_MAPS, EVAL_MAPS = [1, 2, 3, 4], [11, 12, 13, 14]
BUDGET_ENV_STEPS = 2_000
FIRST = 8  # the first training episodes (the first 400 env steps) the starting mean is taken over
WINDOW = 8  # the last training episodes the learned mean is taken over
EVAL_EPISODES = 8


def cleaning_config(seed: int = 0, **ppo):
    """The task's AppConfig (tasks.small: 4 envs, 8 segments an update) on the training maps, with
    segments of 32 steps (an update every 256 env steps) and gamma 0.8; `ppo`: [ppo] keys that
    replace the task's (learning_rate among them)."""
    cfg = small_ppo_config("robot_vacuum", seed, 5e-3, {"num_steps": 32, "gamma": 0.8, **ppo})
    cfg.curriculum_vacuum = task_curriculum(TRAIN_MAPS)
    return cfg


def task_curriculum(maps: list[int]):
    from feature.robot_vacuum.curriculum import CurriculumConfig

    return CurriculumConfig(map=list(maps), map_random=True, robot_count=1, charger_count=1, max_step=MAX_STEP,
                            battery_max=100)


def play(choose, episodes: int = EVAL_EPISODES, seed: int = 1000) -> float:
    """Mean cells cleaned by `choose(env_obs) -> act` (after `choose.reset()` if it has one) on
    `episodes` fresh episodes of the held-out maps, episode i seeded seed + i."""
    from realm import make_env

    env = make_env(protocol="vacuum", seed=seed)
    cleaned = []
    for i in range(episodes):
        usr_conf = task_curriculum([EVAL_MAPS[i % len(EVAL_MAPS)]]).usr_conf()
        env_obs = env.reset(usr_conf, seed=seed + i)
        if hasattr(choose, "reset"):
            choose.reset(env_obs)
        while not (env_obs["terminated"] or env_obs["truncated"]):
            _, env_obs = env.step(int(choose(env_obs)))
        cleaned.append(env_obs["observation"]["env_info"]["clean_score"])
    return float(np.mean(cleaned))


@dataclass
class CleaningResult:
    seed: int
    env_steps: int
    updates: int
    seconds: float
    first_cells: float  # mean cells cleaned over the first FIRST training episodes
    train_cells: float  # ... over the last WINDOW training episodes
    eval_cells: float  # the trained greedy policy on the held-out maps
    untrained_cells: float  # the same agent's greedy policy before training, same episodes
    random_cells: float  # a random legal policy, same episodes
    agent: object = None


def train_cleaning(cfg, budget_env_steps: int = BUDGET_ENV_STEPS) -> CleaningResult:
    from workflow.host.kaiwu_package import KaiwuPackage  # noqa: F401 (the agent's package settles its imports)
    from workflow.host.local_trainer import train_local

    start = time.monotonic()
    result = train_local(cfg, max_env_steps=budget_env_steps, window=WINDOW)
    cells = [e["total_score"] for e in result.episodes]
    untrained = untrained_agent(cfg)
    return CleaningResult(seed=cfg.app.seed, env_steps=result.stats.env_steps, updates=len(result.updates),
                          seconds=time.monotonic() - start, first_cells=float(np.mean(cells[:FIRST])),
                          train_cells=float(np.mean(cells[-WINDOW:])), eval_cells=play(Greedy(result.agent)),
                          untrained_cells=play(Greedy(untrained)), random_cells=play(RandomLegal(cfg.app.seed)),
                          agent=result.agent)


def seed_account(seed: int, budget: int) -> str:
    r = train_cleaning(cleaning_config(seed), budget)
    return (f"{r.env_steps} env steps, {r.updates} updates, {r.seconds:.0f} s; cells cleaned in {MAX_STEP} steps: "
            f"first {FIRST} {r.first_cells:.1f}, last {WINDOW} {r.train_cells:.1f}, held-out greedy "
            f"{r.eval_cells:.1f} (untrained {r.untrained_cells:.1f}, random {r.random_cells:.1f})")
