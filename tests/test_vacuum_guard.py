"""robot_vacuum's battery guard ([features_vacuum] battery_guard, feature.robot_vacuum.layout.
guarded_moves): while the battery would not last the episode, the legal mask keeps only the moves
after which it still reaches the nearest charger over road seen, on the real simulator."""
from __future__ import annotations

import random

import numpy as np
import pytest

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


def _play(seed: int, conf: dict, view: VacuumView, choose):
    """One episode on the real simulator, each action `choose(memory, allowed moves)`: the ended env."""
    env = make_env(protocol="vacuum", seed=seed)
    memory, _ = view.reset(env.reset(conf))
    while True:
        _, env_obs = env.step(int(choose(memory, np.flatnonzero(legal_mask(memory)[:NUM_MOVES]))))
        if env_obs["terminated"] or env_obs["truncated"]:
            return env
        memory, _ = view.step(env_obs)


def test_a_random_policy_under_the_guard_runs_out_of_battery_less_often():
    """The same random draws, with and without the guard: battery deaths over 6 episodes."""
    deaths = {}
    for guard in (False, True):
        deaths[guard] = 0
        for seed in range(6):
            rnd = np.random.default_rng(seed)
            env = _play(seed, CONF, VacuumView(global_info=True, battery_guard=guard),
                        lambda memory, allowed: rnd.choice(allowed))
            deaths[guard] += env.fail_reason == "battery"
    assert deaths[True] < deaths[False], deaths


def test_the_robot_guard_keeps_only_the_moves_no_robot_reaches_next():
    """A robot planted three cells east of the hero: the moves east enter its next reach."""
    env = make_env(protocol="vacuum", seed=0)
    view = VacuumView(global_info=True, robot_guard=True)
    memory, _ = view.reset(env.reset(CONF))
    hx, hz = memory.hero
    memory.robots[0].known, memory.robots[0].x, memory.robots[0].z = True, hx + 3, hz
    memory.robot_guard = False
    free = legal_mask(memory)[:NUM_MOVES]
    memory.robot_guard = True
    guarded = legal_mask(memory)[:NUM_MOVES]
    for d, (dx, dz) in enumerate(DIRECTIONS):
        assert guarded[d] == (free[d] and dx <= 0), (d, free, guarded)
    memory.robots[0].x = hx + 2  # two cells east: only the moves west stay out of its reach
    guarded = legal_mask(memory)[:NUM_MOVES]
    if any(free[d] for d, (dx, _) in enumerate(DIRECTIONS) if dx < 0):
        assert all(guarded[d] == (free[d] and dx < 0) for d, (dx, _) in enumerate(DIRECTIONS)), (free, guarded)
    else:  # none open: the moves farthest from it
        assert guarded.sum() >= 1


def test_a_policy_that_chases_robots_meets_them_far_less_often_under_the_robot_guard():
    """Each step the allowed move nearest the nearest robot (ties at random), with and without
    the guard, the same draws: contacts over 16 episodes of 300 steps."""
    conf = {"env_conf": dict(CONF["env_conf"], robot_count=4, battery_max=999, max_step=300)}
    contacts = {}
    for guard in (False, True):
        contacts[guard] = 0
        for seed in range(16):
            rnd = random.Random(seed)

            def toward_robots(memory, allowed):
                hx, hz = memory.hero
                gap = {int(d): memory.robot_gap(hx + DIRECTIONS[d][0], hz + DIRECTIONS[d][1]) for d in allowed}
                return rnd.choice([d for d, g in gap.items() if g == min(gap.values())])

            env = _play(seed, conf, VacuumView(global_info=True, robot_guard=guard), toward_robots)
            contacts[guard] += env.fail_reason == "collision"
    # a chaser still walks into dead ends a robot then closes (no move out of its reach is left)
    assert contacts[False] >= 4 and 2 * contacts[True] <= contacts[False], contacts


def test_the_route_around_a_robot_is_never_shorter_and_is_the_route_itself_when_no_robot_is_near():
    from feature.bitgrid import UNKNOWN_STEPS
    for seed in (0, 1, 2):
        env, view, memory = _near_a_charger(seed)
        plain = int(memory.charger_steps()[0][1, 1])
        hx, hz = memory.hero
        robot = memory.robots[0]
        robot.known, robot.x, robot.z = True, (hx + 60) % 128, (hz + 60) % 128  # far from the hero and the route
        if memory.robot_gap(*memory.hero) > 2 and max(abs(robot.x - hx), abs(robot.z - hz)) > plain + 3:
            assert int(memory.charger_steps_around_robots()[1, 1]) == plain, seed
        memory._step_cache.pop("charger_around_robots", None)
        steps = memory.charger_steps()[0]
        dx, dz = min(DIRECTIONS, key=lambda d: steps[1 + d[1], 1 + d[0]])  # toward the charger
        robot.x, robot.z = hx + 3 * dx, hz + 3 * dz  # three cells along the route
        around = int(memory.charger_steps_around_robots()[1, 1])
        assert around == UNKNOWN_STEPS or around >= plain, (seed, around, plain)
        robot.x, robot.z = hx + dx, hz + dz  # next to the hero: no route keeps out of its reach
        memory._step_cache.pop("charger_around_robots", None)
        assert memory.charger_steps_around_robots() is None


def test_unseen_slack_decides_when_an_unknown_route_holds_the_hero_to_its_way():
    """While no route over road seen reaches a charger, the guard keeps unseen_slack times the
    path over cells never seen to spare: with 3 a battery of 11 + 4 × that path leaves every move
    open, with 20 only the moves that bring the hero no farther along it."""
    from feature.robot_vacuum.observation import FeatureConfig

    checked = 0
    for seed in range(8):
        env = make_env(protocol="vacuum", seed=seed)
        view = VacuumView(global_info=True, battery_guard=True)
        memory, _ = view.reset(env.reset(CONF))
        steps, known = memory.charger_steps()
        here = int(steps[1, 1])
        if known or not 4 <= here <= 40:
            continue
        memory.battery = GUARD_MARGIN + 1 + 4 * here + 2  # above 3's margin, below 20's
        free = [cell is not None for cell in memory.move_cells()]
        memory.unseen_slack = 3.0
        assert list(legal_mask(memory)[:NUM_MOVES].astype(bool)) == free, seed
        memory.unseen_slack = 20.0
        held = legal_mask(memory)[:NUM_MOVES].astype(bool)
        assert 1 <= held.sum() < sum(free), seed
        nearest = min(steps[1 + dz, 1 + dx] for (dx, dz), ok in zip(DIRECTIONS, free) if ok)
        assert all(steps[1 + dz, 1 + dx] == nearest for (dx, dz), ok in zip(DIRECTIONS, held) if ok), seed
        checked += 1
    assert checked >= 3, "too few resets with an unknown route to a charger"
    with pytest.raises(ValueError, match=r"\[features_vacuum\] unseen_slack must be a number from 0 to 1000"):
        FeatureConfig(unseen_slack=-1.0).validate()
