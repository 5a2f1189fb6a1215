"""gorge_chase's danger guard ([features_gorge] danger_guard, feature.gorge_chase.layout.
guarded_moves): the legal mask keeps the moves whose cell no monster in view reaches this step,
while one exists, on the real simulator."""
from __future__ import annotations

import numpy as np

from feature.gorge_chase.constants import NUM_MOVES
from feature.gorge_chase.layout import legal_mask
from feature.gorge_chase.observation import GorgeView
from realm import make_env

CONF = {"env_conf": {"map": [11], "map_random": False, "treasure_count": 4, "buff_count": 1, "buff_cooldown": 200,
                     "talent_cooldown": 100, "monster_interval": 30, "monster_speedup": 150, "max_step": 300}}


def _play(seed: int, guard: bool) -> tuple[int, int]:
    """(steps survived, steps where the guard held a move back) of a random legal policy."""
    env = make_env(protocol="gorge", seed=seed)
    view = GorgeView(global_info=True, danger_guard=guard)
    env_obs = env.reset(CONF)
    memory, _ = view.reset(env_obs)
    rnd, held = np.random.default_rng(seed), 0
    while True:
        mask = legal_mask(memory)
        if guard:
            memory.danger_guard = False
            held += int(legal_mask(memory)[:NUM_MOVES].sum() > mask[:NUM_MOVES].sum())
            memory.danger_guard = True
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(mask[:NUM_MOVES]))))
        if env_obs["terminated"] or env_obs["truncated"]:
            return env_obs["observation"]["env_info"]["step_no"], held
        memory, _ = view.step(env_obs)


def test_a_random_mover_under_the_guard_lives_longer_and_the_guard_acts():
    free = [_play(seed, False)[0] for seed in range(8)]
    guarded = [_play(seed, True) for seed in range(8)]
    assert sum(held for _, held in guarded) > 0
    assert np.mean([steps for steps, _ in guarded]) > np.mean(free), (free, guarded)
