"""Route planner: exact chest order, and a controller that wins through the env's own step()."""
import itertools

import numpy as np
import pytest

from realm import make_env
from realm.maps import load_official_map
from realm.planner import (
    STEP_BUDGET_SAFETY,
    STEPS_PER_CELL,
    best_chest_order,
    final_score,
    octile_distances,
    plan_route,
    run_planner,
)
from realm.presets import preset
from realm.usr_conf import parse_usr_conf


def brute_force(start_cost, between, end_cost, direct, max_step):
    n = len(start_cost)
    best = (final_score(max_step, direct * STEPS_PER_CELL, 0), ())
    for k in range(1, n + 1):
        for order in itertools.permutations(range(n), k):
            cells = start_cost[order[0]] + sum(between[a, b] for a, b in zip(order, order[1:])) + end_cost[order[-1]]
            steps = cells * STEPS_PER_CELL
            if steps <= max_step * STEP_BUDGET_SAFETY:
                best = max(best, (final_score(max_step, steps, k), order))
    return best


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_step", [2000, 150])
def test_held_karp_matches_brute_force(seed, max_step):
    rng = np.random.default_rng(seed)
    n = 6
    points = rng.random((n + 2, 2)) * 120
    dist = np.linalg.norm(points[:, None] - points[None], axis=-1)
    start_cost, between, end_cost = dist[0, 1:n + 1], dist[1:n + 1, 1:n + 1], dist[1:n + 1, n + 1]
    order, steps = best_chest_order(start_cost, between, end_cost, dist[0, n + 1], max_step)
    expected_score, expected_order = brute_force(start_cost, between, end_cost, dist[0, n + 1], max_step)
    assert final_score(max_step, steps, len(order)) == pytest.approx(expected_score)
    assert len(order) == len(expected_order)


def test_skipping_a_far_chest_pays():
    # One chest 2000 cells off the way is worth 100 points but costs ~1430 steps (286 points).
    order, _ = best_chest_order(np.array([1000.0]), np.zeros((1, 1)), np.array([1000.0]), 10.0, 5000)
    assert order == []


def test_octile_field_is_shorter_than_bfs_on_diagonals(official_map_paths):
    m = load_official_map(*official_map_paths)
    xc, zc = m.position_cells[2]
    octile = octile_distances(m.passable, int(xc), int(zc))
    bfs = m.distance_fields[2]
    reachable = bfs >= 0
    assert np.isfinite(octile[reachable]).all()
    assert (octile[reachable] <= bfs[reachable] + 1e-9).all()
    assert (octile[reachable] >= bfs[reachable] / np.sqrt(2) - 1e-9).all()


def test_plan_covers_resolved_chests_and_ends_at_end(official_map_paths):
    m = load_official_map(*official_map_paths)
    episode = parse_usr_conf(preset("fixed-13"), np.random.default_rng(0))
    route = plan_route(m, episode)
    assert route.targets[-1] == episode.end
    assert sorted(route.chests) == sorted(episode.treasure_id)


@pytest.fixture(scope="module")
def official_env(official_map_paths):
    return make_env(map_file=official_map_paths[0], positions_file=official_map_paths[1])


def test_planner_wins_with_no_chests(official_env):
    result = run_planner(official_env, {"diy": {"start": 2, "end": 1, "treasure_random": 0, "treasure_id": []}})
    assert result.won and result.chests == 0
    # 186 BFS cells at 1.4 cells per step, shortened by diagonals, the flash and the buff.
    assert result.steps < 186 * STEPS_PER_CELL
    assert result.total_score == pytest.approx(150 + 0.2 * (2000 - result.steps))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planner_collects_every_planned_chest_on_leaderboard(official_env, seed):
    result = run_planner(official_env, preset("leaderboard-2024"), seed=seed)
    assert result.won
    assert result.chests == len(result.planned_chests) == 9
    assert result.total_score > 1300
    assert result.trajectory[0] != result.trajectory[-1]
    assert len(result.actions) == result.steps


def test_planner_is_deterministic(official_env):
    a = run_planner(official_env, preset("random-8"), seed=7)
    b = run_planner(official_env, preset("random-8"), seed=7)
    assert a.actions == b.actions and a.total_score == b.total_score
    assert a.usr_conf == b.usr_conf


def test_tight_step_limit_drops_chests_but_still_wins(official_env):
    conf = preset("fixed-13")
    conf["diy"]["max_step"] = 220
    result = run_planner(official_env, conf)
    assert result.won
    assert 0 < result.chests < 13


def test_planner_wins_on_generated_map():
    env = make_env(map_seed=3)
    result = run_planner(env, preset("random-8"), seed=0)
    assert result.won and result.chests == 8
