"""The robot_vacuum PPO package learns: tasks/robot_vacuum.py's task (one official robot, 50 steps,
generated maps 1-4) over three seeds within a budget of env steps, judged on held-out maps."""
import pytest

from tasks import robot_vacuum as vacuum_cleaning

LEARNED = 1.15  # the last training episodes clean this many times the first ones' cells
GAIN = 10.0  # the trained greedy policy cleans this many cells more than its untrained self, held out
OVER_RANDOM = 1.5  # ... and this many times a random legal policy's cells


@pytest.mark.slow
def test_learns_to_step_onto_the_dirt_on_every_seed():
    """Each seed starts out cleaning about 28 of its 50 steps' cells and, after 2 000 env steps
    (vacuum_cleaning.BUDGET_ENV_STEPS, 9 updates), cleans at least LEARNED times as many in its last
    training episodes; its greedy policy on maps it never saw cleans GAIN cells more than its own
    untrained greedy policy and OVER_RANDOM times a random legal policy's. Seeds 0, 1, 2 measured
    28.6 -> 39.9, 30.6 -> 38.1, 26.4 -> 39.8 cells in training (1.40x, 1.25x, 1.51x) and held-out
    greedy 42.4, 47.0, 43.4 (untrained 22.8, 25.4, 16.2; random 23.6, 19.6, 23.0). At 1 500 env steps
    the held-out checks already pass on all three (42.8, 42.2, 45.2), the training window not yet
    (1.16x, 1.08x, 1.26x)."""
    for seed in (0, 1, 2):
        r = vacuum_cleaning.train_cleaning(vacuum_cleaning.cleaning_config(seed))
        assert r.env_steps <= vacuum_cleaning.BUDGET_ENV_STEPS
        assert r.first_cells <= 34, f"seed {seed}: cleaned {r.first_cells:.1f} cells untrained"
        assert r.train_cells >= LEARNED * r.first_cells, \
            f"seed {seed}: {r.first_cells:.1f} -> {r.train_cells:.1f} cells"
        assert r.eval_cells >= r.untrained_cells + GAIN, \
            f"seed {seed}: held-out {r.eval_cells:.1f}, untrained {r.untrained_cells:.1f}"
        assert r.eval_cells >= OVER_RANDOM * r.random_cells, \
            f"seed {seed}: held-out {r.eval_cells:.1f}, random {r.random_cells:.1f}"


@pytest.mark.slow
def test_a_broken_update_does_not_learn_within_the_budget():
    """The learning test can fail: with a learning rate of 1e-9 the policy stays the untrained one
    (seed 0 measured 27.1 -> 25.2 cells in training, held-out greedy 23.0 beside untrained 22.8)."""
    r = vacuum_cleaning.train_cleaning(vacuum_cleaning.cleaning_config(0, learning_rate=1e-9))
    assert r.env_steps >= vacuum_cleaning.BUDGET_ENV_STEPS
    assert r.train_cells < LEARNED * r.first_cells and r.eval_cells < r.untrained_cells + GAIN
