"""robot_vacuum's battery guard ([features_vacuum] battery_guard, feature.robot_vacuum.layout.
guarded_moves): while the battery would not last the episode, the legal mask keeps only the moves
after which it still reaches the nearest charger over road seen, on the real simulator."""
from __future__ import annotations

import random

import numpy as np

from feature.robot_vacuum.constants import DIRECTIONS, NUM_MOVES
from feature.robot_vacuum.layout import GUARD_MARGIN, legal_mask
from feature.robot_vacuum.observation import VacuumView
from realm import make_env

CONF = {"env_conf": {"map": [11], "map_random": False, "robot_count": 1, "charger_count": 4, "max_step": 600,
                     "battery_max": 100}}


def _near_a_charger(seed: int):
    """A guarded view a few steps from a charger whose route over road seen is known."""
    env = make_env(protocol="vacuum", seed=seed)
    view = VacuumView(global_info=True, battery_guard=True)
    memory, _ = view.reset(env.reset(CONF))
    rnd = random.Random(seed)
    for _ in range(300):
        steps, known = memory.charger_steps()
        if known and 3 <= steps[1, 1] <= 20:
            return env, view, memory
        # toward the nearest charger by the (optimistic) path, a random move now and then
        toward = min(range(NUM_MOVES), key=lambda d: steps[1 + DIRECTIONS[d][1], 1 + DIRECTIONS[d][0]])
        _, env_obs = env.step(toward if rnd.random() < 0.8 else rnd.randrange(NUM_MOVES))
        ended = env_obs["terminated"] or env_obs["truncated"]
        memory, _ = view.reset(env.reset(CONF)) if ended else view.step(env_obs)
    raise AssertionError("no charger came within 20 steps over road seen")


def test_with_the_battery_just_enough_only_moves_toward_the_charger_stay_legal():
    for seed in (0, 1, 2):
        env, view, memory = _near_a_charger(seed)
        steps, _ = memory.charger_steps()
        here = int(steps[1, 1])
        memory.battery = here + GUARD_MARGIN  # one step away from the charger leaves less than the margin
        open_moves = [cell is not None for cell in memory.move_cells()]
        memory.battery_guard = False
        free = legal_mask(memory)[:NUM_MOVES]
        memory.battery_guard = True
        guarded = legal_mask(memory)[:NUM_MOVES]
        assert guarded.sum() >= 1 and guarded.sum() < free.sum(), seed
        for d, ((dx, dz), allowed) in enumerate(zip(DIRECTIONS, guarded)):
            if allowed:
                assert open_moves[d] and steps[1 + dz, 1 + dx] <= here - 1, (seed, d)
        memory.battery = 10_000  # lasts the episode: nothing is held back
        assert np.array_equal(legal_mask(memory)[:NUM_MOVES], free)


def test_a_random_policy_under_the_guard_runs_out_of_battery_less_often():
    """The same random draws, with and without the guard: battery deaths over 6 episodes."""
    deaths = {}
    for guard in (False, True):
        deaths[guard] = 0
        for seed in range(6):
            env = make_env(protocol="vacuum", seed=seed)
            view = VacuumView(global_info=True, battery_guard=guard)
            env_obs = env.reset(CONF)
            memory, _ = view.reset(env_obs)
            rnd = np.random.default_rng(seed)
            while not (env_obs["terminated"] or env_obs["truncated"]):
                mask = legal_mask(memory)[:NUM_MOVES]
                act = int(rnd.choice(np.flatnonzero(mask)))
                _, env_obs = env.step(act)
                if env_obs["terminated"] or env_obs["truncated"]:
                    break
                memory, _ = view.step(env_obs)
            info = env_obs["observation"]["env_info"]
            if env_obs["terminated"] and info["remaining_charge"] <= 0:
                deaths[guard] += 1
    assert deaths[True] < deaths[False], deaths
