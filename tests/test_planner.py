"""Route planner: exact chest order, and a controller that wins through the env's own step()."""
import itertools

import numpy as np
import pytest

from realm import make_env
from realm.back_to_the_realm.maps import load_official_map
from realm.back_to_the_realm.reference import (
    STEP_BUDGET_SAFETY,
    STEPS_PER_CELL,
    best_chest_order,
    cost_to_go,
    final_score,
    octile_distances,
    path_fields,
    plan_route,
    run_planner,
)
from realm.back_to_the_realm.presets import preset
from realm.back_to_the_realm.usr_conf import parse_usr_conf


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


@pytest.mark.parametrize("seed", range(4))
def test_held_karp_matches_brute_force_on_one_way_costs(seed):
    # Directed costs (a→b ≠ b→a) with a limit that forces a subset choice.
    rng = np.random.default_rng(100 + seed)
    n = 6
    start_cost, end_cost = rng.integers(5, 80, n).astype(float), rng.integers(5, 80, n).astype(float)
    between = rng.integers(5, 80, (n, n)).astype(float)
    np.fill_diagonal(between, 0.0)
    for max_step in (2000, 200):
        order, steps = best_chest_order(start_cost, between, end_cost, 60.0, max_step)
        expected_score, expected_order = brute_force(start_cost, between, end_cost, 60.0, max_step)
        assert final_score(max_step, steps, len(order)) == pytest.approx(expected_score)
        assert order, "both limits leave room for some chests"
        cells = start_cost[order[0]] + sum(between[a, b] for a, b in zip(order, order[1:])) + end_cost[order[-1]]
        assert steps == pytest.approx(cells * STEPS_PER_CELL)


def test_thirteen_chest_plan_takes_every_chest(official_map_paths):
    m = load_official_map(*official_map_paths)
    episode = parse_usr_conf(preset("fixed-13"), np.random.default_rng(0))
    route = plan_route(m, episode)
    assert len(route.chests) == 13


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


def test_cost_to_go_rewards_progress_inside_a_cell(official_map):
    field = path_fields(official_map).fields[1]
    rows = path_fields(official_map).rows[1]
    tx, tz = official_map.positions[1]
    xc, zc = (int(v) for v in official_map.position_cells[1])
    assert cost_to_go(rows, tx, tz, xc, zc) == pytest.approx(0.0)
    # From the start's cell centre toward its best neighbour: every point nearer it costs less,
    # though all of them lie in one cell with one field value.
    sx, sz = (int(v) for v in official_map.position_cells[2])
    neighbours = [(field[sz + dz, sx + dx], dx, dz) for dx in (-1, 0, 1) for dz in (-1, 0, 1) if dx or dz]
    _, dx, dz = min(neighbours)
    cx, cz = official_map.positions[2]
    costs = [cost_to_go(rows, cx + dx * t, cz + dz * t, sx, sz) for t in (0, 60, 120, 180, 240)]
    assert all(a > b for a, b in zip(costs, costs[1:]))
    assert costs[0] <= field[sz, sx] + 1e-9


def test_look_ahead_flash_beats_the_first_good_enough_flash(official_env):
    seeds = range(3)
    ahead = [run_planner(official_env, preset("leaderboard-2024"), seed=s).total_score for s in seeds]
    greedy = [run_planner(official_env, preset("leaderboard-2024"), seed=s, look_ahead=False).total_score for s in seeds]
    assert np.mean(ahead) > np.mean(greedy)


def test_planner_wins_with_step_jitter_and_no_seed(official_map_paths):
    # The look-ahead twin cannot replay the jitter here: the flash must still be spent, the end reached.
    env = make_env(map_file=official_map_paths[0], positions_file=official_map_paths[1], step_jitter=True, seed=11)
    for _ in range(2):
        result = run_planner(env, preset("leaderboard-2024"))
        assert result.won and result.chests == 9 and result.flash_count == 1
