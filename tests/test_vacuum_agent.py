"""The project's robot_vacuum package (app = "robot_vacuum", algo = "ppo") on real env_obs of the
simulator: its numbers against the simulator's, the features' shapes against the layout, the
legal mask (the moves the view shows open, never the model's actions 8..15), the memory's map and
path searches against the env's own map and move table, the reward terms on a cleaning step, a
contact and an empty battery, the sample rows' round trip, the agent acting on the raw env_obs,
and a local training step."""
from __future__ import annotations

import dataclasses
from collections import deque

import numpy as np
import pytest

from episodes.protocol import VACUUM, env_protocol
from episodes.runner import EpisodeRunner
from feature.robot_vacuum import constants as ours
from feature.robot_vacuum.curriculum import CurriculumConfig
from feature.robot_vacuum.layout import MAP_LAYOUT, MAP_SHAPE, STATE_DIM, STATE_LAYOUT, earlier_visits, legal_mask
from feature.robot_vacuum.memory import GRID, VacuumMemory
from feature.robot_vacuum.observation import FeatureConfig, VacuumView, action_process, observation_process
from feature.bitgrid import UNKNOWN_STEPS, steps_near
from feature.robot_vacuum.reward import TERMS, RewardConfig, reward_shaping, step_view
from feature.segments import NUM_ACTIONS, ActData
from realm import make_env
from realm.robot_vacuum import constants as theirs
from realm.robot_vacuum.maps import CELL_X, CELL_Z

SMALL = CurriculumConfig(map=[1], map_random=False, robot_count=2, charger_count=2, max_step=300, battery_max=100)


def _episode(seed: int = 0, conf: CurriculumConfig = SMALL, **rules):
    env = make_env(protocol="vacuum", seed=seed, **rules)
    view = VacuumView(global_info=True)
    memory, _ = view.reset(env.reset(conf.usr_conf(), seed=seed))
    return env, view, memory


def test_the_features_numbers_are_the_simulators():
    for name in ("GRID_SIZE", "VIEW_RADIUS", "VIEW_SIZE", "DIRECTIONS", "CELL_BLOCKED", "CELL_CLEAN", "CELL_DIRT",
                 "SUB_TYPE_CHARGER", "CHARGER_SIZE", "MAX_CHARGERS", "MAX_ROBOTS"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.NUM_MOVES == theirs.NUM_ACTIONS
    assert (ours.ROBOT_RADIUS, ours.CONTACT_RANGE) == (theirs.NPC_RADIUS, theirs.COLLISION_RANGE)
    defaults = theirs.DEFAULT_ENV_CONF
    assert (ours.STEP_NORM, ours.BATTERY_NORM) == (defaults["max_step"], defaults["battery_max"])


def test_the_curriculum_is_the_official_env_conf_on_training_maps_and_names_a_bad_key():
    from realm.robot_vacuum.usr_conf import default_usr_conf, validate_usr_conf

    conf = CurriculumConfig().usr_conf()
    assert set(conf["env_conf"]) == set(default_usr_conf()["env_conf"])
    assert conf["env_conf"]["map"] == list(range(1, 9)) and conf["env_conf"]["map_random"] is True
    validate_usr_conf(conf)
    with pytest.raises(ValueError, match="battery_max must be an int in 100..999"):
        CurriculumConfig(battery_max=50).validate()
    with pytest.raises(ValueError, match="charger_pos must be one of either"):
        FeatureConfig(charger_pos="middle").validate()


def test_the_13_protocol_hands_the_runner_the_memory_and_the_features_match_the_layout():
    env = make_env(protocol="vacuum", seed=0)
    assert env_protocol(env, "13") is env_protocol(env, "vacuum") is VACUUM
    runner = EpisodeRunner([env], lambda obs: [ActData(action=0, log_prob=0.0) for _ in obs], observation_process,
                           action_process, VACUUM.name, translate=True, view=VacuumView)
    memory = runner.reset(0, SMALL.usr_conf())
    assert isinstance(memory, VacuumMemory) and memory.step_no == 0
    obs_data = runner.obs_data(0)
    assert obs_data.map.shape == MAP_SHAPE == (len(MAP_LAYOUT), ours.VIEW_SIZE, ours.VIEW_SIZE)
    assert obs_data.state.shape == (STATE_DIM,) == (sum(b.size for b in STATE_LAYOUT),)
    assert obs_data.legal.shape == (NUM_ACTIONS,)
    assert np.isfinite(obs_data.map).all() and np.isfinite(obs_data.state).all()
    map_info = np.asarray(memory.env_obs["observation"]["map_info"])
    assert np.array_equal(obs_data.map[0], map_info != 0) and np.array_equal(obs_data.map[1], map_info == 2)
    (t,) = runner.step()
    assert t.error is None and t.obs is memory and memory.step_no == 1
    assert t.score.total_score == memory.score and not t.ended


def test_the_legal_mask_allows_the_open_moves_only_and_never_the_actions_beyond_7():
    env, view, memory = _episode(3)
    rng = np.random.default_rng(0)
    for _ in range(60):
        mask = legal_mask(memory)
        assert mask.shape == (NUM_ACTIONS,) and not mask[ours.NUM_MOVES:].any()
        assert 1 <= mask[:ours.NUM_MOVES].sum() <= ours.NUM_MOVES
        hero = memory.hero[1] * ours.GRID_SIZE + memory.hero[0]
        for d in range(ours.NUM_MOVES):  # open in the mask exactly when the env's move leaves the cell
            assert bool(mask[d]) == (env.moves[hero * 8 + d] != hero), (memory.hero, d)
        action = int(rng.choice(np.flatnonzero(mask)))
        _, env_obs = env.step(action)
        assert (CELL_X[env.hero_cell], CELL_Z[env.hero_cell]) != memory.hero
        if env_obs["terminated"] or env_obs["truncated"]:
            break
        memory, _ = view.step(env_obs)
    with pytest.raises(ValueError, match="moves 0..7"):
        action_process(ActData(action=ours.NUM_MOVES, log_prob=0.0))
    assert action_process(ActData(action=7, log_prob=0.0)) == 7


def test_an_error_env_obs_is_refused_naming_its_result():
    with pytest.raises(ValueError, match="result_code -101: bad battery_max"):
        VacuumMemory().update({"observation": None, "extra_info": {"result_code": -101,
                                                                   "result_message": "bad battery_max"}})


def test_a_hero_boxed_in_by_the_view_keeps_legal_actions_moves():
    _, _, memory = _episode(0)
    memory.view = np.zeros_like(memory.view)
    memory.view[ours.VIEW_RADIUS, ours.VIEW_RADIUS] = ours.CELL_CLEAN
    memory._step_cache = {}
    assert legal_mask(memory).tolist() == [1.0] * ours.NUM_MOVES + [0.0] * ours.NUM_MOVES


def test_the_memory_keeps_the_map_the_view_showed_and_follows_the_moves():
    env, view, memory = _episode(1)
    assert memory.seen_cells == int(memory._inner(memory.seen).sum()) > 0
    seen_before, dirt_before = memory.seen_cells, memory.known_dirt
    for _ in range(12):
        d = next(d for d, cell in enumerate(memory.move_cells()) if cell is not None)
        target = memory.move_cells()[d]
        _, env_obs = env.step(d)
        if env_obs["terminated"]:
            break
        memory, _ = view.step(env_obs)
        assert memory.hero == target and memory.previous_hero != memory.hero
    truth = env.dirt_grid()  # [z, x]: 0 blocked, 1 clean, 2 dirt
    seen = memory._inner(memory.seen) > 0
    assert memory.seen_cells == int(seen.sum()) > seen_before
    assert np.array_equal(memory._inner(memory.road)[seen] > 0, truth[seen] != 0)
    x, z = memory.hero
    here = slice(max(z - 2, 0), z + 3), slice(max(x - 2, 0), x + 3)  # in view now: dirt as the env has it
    assert np.array_equal(memory._inner(memory.dirt)[here] > 0, truth[here] == 2)
    assert memory.known_dirt == int(memory._inner(memory.dirt).sum()) != dirt_before
    assert memory.visits[z + 31, x + 31] >= 0.2 and memory.score == env.score


def _true_steps(env, targets: set[int], start: int) -> int:
    """Moves from cell `start` to the nearest of `targets` by the env's own move table."""
    seen, queue = {start}, deque([(start, 0)])
    while queue:
        c, n = queue.popleft()
        if c in targets:
            return n
        for a in range(ours.NUM_MOVES):
            t = env.moves[c * 8 + a]
            if t not in seen:
                seen.add(t)
                queue.append((t, n + 1))
    return UNKNOWN_STEPS


def test_the_path_search_follows_the_envs_moves_and_the_charger_cells_charge():
    env, _, memory = _episode(2)
    walkable = np.asarray(env.dirt_grid() != 0)
    cells = sorted(memory.charger_cells)
    assert cells and all(env.on_charger(z * ours.GRID_SIZE + x) for x, z in cells)  # "either": both readings' cells
    targets = {z * ours.GRID_SIZE + x for x, z in cells}
    rng = np.random.default_rng(2)
    road = np.flatnonzero(walkable.reshape(-1))
    for start in rng.choice(road, 6, replace=False).tolist():
        x, z = CELL_X[start], CELL_Z[start]
        steps = steps_near(GRID, GRID.of_mask(walkable), GRID.of_cells(cells), (x, z), 2 * ours.GRID_SIZE)
        assert steps[1, 1] == _true_steps(env, targets, start), (x, z)
        for dz in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if 0 <= x + dx < ours.GRID_SIZE and 0 <= z + dz < ours.GRID_SIZE and walkable[z + dz, x + dx]:
                    assert steps[1 + dz, 1 + dx] == _true_steps(env, targets, start + dz * ours.GRID_SIZE + dx)


def test_the_charger_route_over_road_seen_is_never_shorter_than_the_true_one():
    env, view, memory = _episode(4)
    targets = {z * ours.GRID_SIZE + x for x, z in memory.charger_cells}
    checked = 0
    for _ in range(40):
        steps, known = memory.charger_steps()
        if known:
            hero = memory.hero[1] * ours.GRID_SIZE + memory.hero[0]
            assert steps[1, 1] >= _true_steps(env, targets, hero)
            checked += 1
        mask = legal_mask(memory)
        _, env_obs = env.step(int(np.flatnonzero(mask)[0]))
        if env_obs["terminated"] or env_obs["truncated"]:
            break
        memory, _ = view.step(env_obs)


def _entry(env, cell: tuple[int, int], footprint: set) -> tuple[tuple[int, int], int]:
    """A road cell outside `footprint` and the move from it that enters `cell`."""
    x, z = cell
    for d, (dx, dz) in enumerate(ours.DIRECTIONS):
        start = (x - dx, z - dz)
        if start not in footprint and env.map.is_walkable(*start):
            c = start[1] * ours.GRID_SIZE + start[0]
            if env.moves[c * 8 + d] == z * ours.GRID_SIZE + x:
                return start, d
    raise StopIteration(f"no way into {cell}")


def _road_at(env, hero: tuple[int, int], low: int, high: int) -> tuple[int, int]:
    """A road cell off the chargers at Chebyshev distance low..high from `hero`."""
    for c in env.map.road_cells:
        x, z = CELL_X[c], CELL_Z[c]
        if low <= max(abs(x - hero[0]), abs(z - hero[1])) <= high and not env.on_charger(c):
            return x, z
    raise AssertionError(f"no road cell {low}..{high} from {hero}")


def _footprint(env, site: int) -> set:
    x0, z0 = env.map.chargers[env.charger_sites[site]]
    return {(x0 + dx, z0 + dz) for dz in range(3) for dx in range(3)}


def test_a_step_on_a_charger_marks_its_cell_and_the_robots_are_read():
    env, view, memory = _episode(6, vacuum_extra_info="full", charger_pos="centre")  # the wire's pos: the centre
    assert all(env.on_charger(z * ours.GRID_SIZE + x) for x, z in memory.charger_cells)  # "either" still charges
    footprint = _footprint(env, 0)
    corner = min(footprint)  # the top-left cell: outside the 2x2 both readings share
    assert corner not in memory.charger_cells
    start, d = _entry(env, corner, footprint)
    near, far = _road_at(env, start, 5, 7), _road_at(env, start, 30, 60)
    env_obs = env.place(hero=start, npcs=[near, far])
    memory, _ = view.reset(env_obs)
    blind, _ = VacuumView(global_info=False).reset(env_obs)
    assert [r.known for r in memory.robots] == [True, True]  # extra_info's true cells
    assert [(r.known, r.in_view) for r in blind.robots] == [(True, True), (False, False)]
    assert (blind.robots[0].x, blind.robots[0].z) == near and blind.robot_gap(*start) == max(
        abs(near[0] - start[0]), abs(near[1] - start[1]))
    _, env_obs = env.step(d)
    memory, _ = view.step(env_obs)
    assert memory.on_charger and memory.hero == corner and corner in memory.charger_cells
    assert memory.trail[near[1] + 31, near[0] + 31] == 1.0


def test_the_reward_terms_on_a_cleaning_step_a_contact_and_an_empty_battery():
    weights = RewardConfig()
    env, view, memory = _episode(0)
    prev = step_view(memory)
    d = next(d for d, cell in enumerate(memory.move_cells())
             if cell is not None and memory.view[ours.VIEW_RADIUS + ours.DIRECTIONS[d][1],
                                                 ours.VIEW_RADIUS + ours.DIRECTIONS[d][0]] == ours.CELL_DIRT)
    _, env_obs = env.step(d)
    cur = step_view(view.step(env_obs)[0], env_obs["terminated"], env_obs["truncated"])
    total, terms = reward_shaping(prev, cur, d, weights)
    assert set(terms) == set(TERMS) and total == pytest.approx(sum(terms.values()))
    assert cur.score == prev.score + 1 and terms["clean"] == pytest.approx(weights.clean)
    assert terms["collision"] == terms["battery_out"] == terms["stuck"] == 0.0

    env, view, memory = _episode(0)  # an official robot on the cell the hero moves to: contact after its move
    d = next(d for d, cell in enumerate(memory.move_cells()) if cell is not None)
    memory, _ = view.reset(env.place(npcs=[memory.move_cells()[d]]))
    prev = step_view(memory)
    _, env_obs = env.step(d)
    assert env_obs["terminated"] and env.fail_reason == "collision"
    cur = step_view(view.step(env_obs)[0], True, False)
    _, terms = reward_shaping(prev, cur, d, weights)
    assert terms["collision"] == weights.collision and terms["battery_out"] == 0.0 and terms["danger"] == 0.0

    env, view, memory = _episode(0)  # the last unit of battery away from a charger
    memory, _ = view.reset(env.place(battery=1))
    prev = step_view(memory)
    assert prev.charger_steps > 1 and prev.low > 0.0
    action = int(np.flatnonzero(legal_mask(memory))[0])
    _, env_obs = env.step(action)
    assert env_obs["terminated"] and env.fail_reason == "battery"
    cur = step_view(view.step(env_obs)[0], True, False)
    _, terms = reward_shaping(prev, cur, action, weights)
    assert terms["battery_out"] == weights.battery_out and terms["collision"] == 0.0
    survived = dataclasses.replace(cur, terminated=False, truncated=True)  # the step limit wins: no penalty
    _, terms = reward_shaping(prev, survived, action, weights)
    assert terms["battery_out"] == terms["collision"] == 0.0


def test_charging_when_low_pays_and_the_reserve_counts_the_steps_left():
    weights = RewardConfig()
    env, view, memory = _episode(6)
    footprint = _footprint(env, 0)
    start, d = next(_entry(env, cell, footprint) for cell in sorted(footprint) if cell != (min(footprint)[0] + 1,
                                                                                         min(footprint)[1] + 1))
    env_obs = env.place(hero=start, npcs=[_road_at(env, start, 30, 60)], battery=10)
    memory, _ = view.reset(env_obs)
    prev = step_view(memory)
    assert prev.low > 0.0
    _, env_obs = env.step(d)
    cur = step_view(view.step(env_obs)[0], env_obs["terminated"], env_obs["truncated"])
    assert cur.battery == cur.battery_max > prev.battery and not cur.terminated
    _, terms = reward_shaping(prev, cur, d, weights)
    assert terms["recharge"] == pytest.approx(weights.recharge * (cur.battery_max - 10) / cur.battery_max)
    assert terms["stuck"] == terms["low_reserve"] == 0.0 and cur.reserve == cur.battery_max
    late = dataclasses.replace(prev, steps_left=10)  # the battery lasts the episode: no charge needed
    assert late.low == 0.0 and reward_shaping(late, cur, d, weights)[1]["recharge"] == 0.0


def test_the_sample_rows_round_trip():
    from feature.robot_vacuum.ppo_definition import (SAMPLE_DIM, NumpyData2SampleData, SampleData,
                                                     SampleData2NumpyData, sample_process)
    from kaiwu_agent.utils.common_func import Frame

    env, view, memory = _episode(0)
    frames, obs = [], observation_process(memory)
    rng = np.random.default_rng(0)
    for _ in range(5):
        action = int(rng.choice(np.flatnonzero(obs.legal)))
        _, env_obs = env.step(action)
        memory, _ = view.step(env_obs)
        frames.append(Frame(obs=obs, act=ActData(action=action, log_prob=-2.0), reward=0.1, terminated=False))
        obs = observation_process(memory)
    (sample,) = sample_process(frames, obs)
    row = SampleData2NumpyData(sample)
    assert row.shape == (SAMPLE_DIM,) == (sum(SampleData.FIELD_DIMS.values()),)
    back = NumpyData2SampleData(row)
    for name in SampleData.FIELD_DIMS:
        assert np.array_equal(np.asarray(getattr(back, name)), np.asarray(getattr(sample, name))), name
    assert back.action[:5].tolist() == [int(f.act.action) for f in frames] and back.mask.sum() == 5
    assert np.array_equal(back.map[0], frames[0].obs.map) and np.array_equal(back.next_legal, obs.legal)


def test_the_agent_plays_the_raw_env_obs_as_the_platform_evaluates():
    from agent.model import ModelConfig
    from agent.robot_vacuum.ppo_agent import Agent
    from agent.robot_vacuum.ppo_config import Settings

    agent = Agent(settings=Settings(model=ModelConfig(channels=[4], kernel_sizes=[3], strides=[2], hidden_size=16)),
                  seed=0)
    env = make_env(protocol="vacuum", seed=0)
    env_obs = env.reset(SMALL.usr_conf(), seed=0)
    agent.reset(env_obs)
    for _ in range(6):
        act = agent.exploit(env_obs)
        assert isinstance(act, int) and 0 <= act < ours.NUM_MOVES
        assert legal_mask(agent._view.memory)[act] == 1.0
        memory = agent._view.memory
        assert earlier_visits(observation_process(memory).state) == round(memory.revisit / 0.2)
        _, env_obs = env.step(act)
        if env_obs["terminated"]:
            break


def test_the_local_trainer_trains_the_vacuum_package():
    """Two updates of the package in one process (workflow.host.local_trainer), hosted by the
    13.0.1 platform version: games.robot_vacuum lists the agent ("ppo" in its algorithms)."""
    from tasks.small import small_ppo_config
    from workflow.host.local_trainer import train_local
    from workflow.platforms.project import PROJECT_ALGORITHMS, hosting_version

    assert ("robot_vacuum", "ppo") in PROJECT_ALGORITHMS, "games/robot_vacuum.py: algorithms = (\"ppo\",) registers the agent"
    assert hosting_version("robot_vacuum").name == "13"
    assert set(PROJECT_ALGORITHMS[("robot_vacuum", "ppo")].sections) == {"model", "ppo", "reward_vacuum",
                                                                         "curriculum_vacuum", "features_vacuum"}
    cfg = small_ppo_config("robot_vacuum", 0, 1e-3, {})
    cfg.curriculum_vacuum = CurriculumConfig(map=[1, 2], robot_count=2, max_step=80, battery_max=100)
    result = train_local(cfg, max_updates=2)
    assert len(result.updates) == 2 and result.stats.env_steps > 0
    assert all(np.isfinite(v) for update in result.updates for v in update.values())
