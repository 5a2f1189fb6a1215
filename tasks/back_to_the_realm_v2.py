"""The v2 near-end task: the smallest real learning problem of back_to_the_realm_v2, shared by
tests/test_learning_v2.py and measurements (tools/back_to_the_realm_v2/near_end.py trains it over seeds).

Generated v2 map 0 (map_cherry's points), start [111, 83], the end fixed at [84, 95] (30 moves
away, out of the 11×11 view at the start), no chests, no obstacle, 100 steps. The v2 PPO package
(its features, reward terms and episode loop) trains in one process
(workflow.host.local_trainer) until WIN_TARGET of the last WINDOW training episodes are won, or a
budget of env steps runs out; then its sampling policy plays EVAL_EPISODES fresh episodes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from tasks.small import small_ppo_config

START, END = [111, 83], [84, 95]
MAX_STEP = 100
WIN_TARGET = 0.9  # of the last WINDOW training episodes
WINDOW = 50
BUDGET_ENV_STEPS = 82_000  # 3x the worst of seeds 0..2: 27 261, 8 051, 8 031 (docs/BENCHMARKS.md, the v2 section)
EVAL_EPISODES = 20


def near_end_v2_config(seed: int = 0, **ppo):
    """The task's AppConfig (tasks.small) on the near-end episode."""
    cfg = small_ppo_config("back_to_the_realm_v2", seed, 5e-4, ppo)
    cfg.curriculum_v2 = curriculum()
    return cfg


def curriculum():
    """[curriculum_v2] of the near-end episode."""
    from feature.back_to_the_realm_v2.curriculum import CurriculumConfig

    return CurriculumConfig(start=list(START), end=list(END), end_random=False, treasure_pos=[], treasure_count=0,
                            obstacle_random=False, max_step=MAX_STEP)


def usr_conf() -> dict:
    return curriculum().usr_conf()


def play(agent, episodes: int = EVAL_EPISODES, seed: int = 123, sample: bool = True) -> tuple[float, float]:
    """(win rate, mean steps) of the agent's policy (sampling, or exploit) on fresh episodes of a
    separately seeded env, through the episode runner as evaluation plays."""
    from episodes.protocol import V2
    from episodes.runner import EpisodeRunner
    from feature.back_to_the_realm_v2.observation import V2View, action_process, observation_process
    from realm import make_env

    env = make_env(protocol=V2.name, seed=seed)
    runner = EpisodeRunner([env], agent.predict if sample else agent.exploit, observation_process, action_process,
                           V2.name, translate=True, view=V2View)
    wins = steps = 0
    for _ in range(episodes):
        stats, _ = runner.play(usr_conf())
        wins += stats.win
        steps += stats.steps
    return wins / episodes, steps / episodes


@dataclass
class NearEndV2Result:
    seed: int
    learned: bool  # the training win rate reached WIN_TARGET within the budget
    env_steps: int
    updates: int
    seconds: float
    first_win_rate: float  # of the first 20 training episodes
    train_win_rate: float  # of the last WINDOW training episodes
    eval_win_rate: float  # the trained sampling policy on EVAL_EPISODES fresh episodes
    eval_steps: float
    agent: object = None


def train_near_end_v2(cfg, budget_env_steps: int = BUDGET_ENV_STEPS) -> NearEndV2Result:
    from workflow.host.local_trainer import train_local

    start = time.monotonic()
    result = train_local(cfg, max_env_steps=budget_env_steps, window=WINDOW,
                         stop_when=lambda log: len(log.recent) >= WINDOW and log.mean("win") >= WIN_TARGET)
    first = result.episodes[:20]
    eval_rate, eval_steps = play(result.agent)
    return NearEndV2Result(seed=cfg.app.seed, env_steps=result.stats.env_steps, updates=len(result.updates),
                           learned=len(result.episodes) >= WINDOW and result.win_rate >= WIN_TARGET,
                           seconds=time.monotonic() - start,
                           first_win_rate=sum(r["win"] for r in first) / max(len(first), 1),
                           train_win_rate=result.win_rate, eval_win_rate=eval_rate, eval_steps=eval_steps,
                           agent=result.agent)


def seed_account(seed: int, budget: int) -> str:
    r = train_near_end_v2(near_end_v2_config(seed), budget)
    return (f"learned {r.learned}, {r.env_steps} env steps, {r.updates} updates, {r.seconds:.0f} s, first win rate "
            f"{r.first_win_rate:.2f}, train {r.train_win_rate:.2f}, eval {r.eval_win_rate:.2f} in {r.eval_steps:.1f} steps")
