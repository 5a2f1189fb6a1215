"""robot_vacuum simulator: the per-step invariants of the real trajectories (the dumps), one test
per rule (docs/games/robot_vacuum.md), the data protocol's keys and types, the official 13.0.1
package's preprocessor reading the env_obs, usr_conf checks, maps and the generator, the
reference policy against random, the gym checker, determinism."""
from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import numpy as np
import pytest

import realm
from realm.robot_vacuum import (
    EpisodeOverError,
    MapFolder,
    RobotVacuumEnv,
    VacuumMap,
    VacuumMapError,
    VacuumUsrConfError,
    default_usr_conf,
    generated_map,
    grid_text,
    load_map_file,
    make_vacuum_env,
    map_stats,
    write_map_json,
)
from realm.robot_vacuum.constants import CELL_CLEAN, CELL_DIRT, GRID_SIZE, NPC_RADIUS
from realm.robot_vacuum.maps import CELL_X, CELL_Z, footprint, map_json
from realm.robot_vacuum.options import CANDIDATES, OPTIONS, options_table
from realm.robot_vacuum.reference import RandomPolicy, ReferencePolicy, evaluate

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "kaiwu_vacuum"
DUMPS = SHARED / "dumps" / "nanbloom001__eval_logs_20260415-225137"
PACKAGE = SHARED / "package_13.0.1"
needs_dumps = pytest.mark.skipif(not DUMPS.is_dir(), reason=f"the robot_vacuum trajectories are not at {DUMPS}")
needs_package = pytest.mark.skipif(not PACKAGE.is_dir(), reason=f"the robot_vacuum package is not at {PACKAGE}")

#: the four settings of the dumps' benchmark (manifest.json rounds)
ROUNDS = [{"charger_count": 4, "robot_count": 3, "max_step": 1000, "battery_max": 200},
          {"charger_count": 3, "robot_count": 4, "max_step": 1200, "battery_max": 300},
          {"charger_count": 2, "robot_count": 4, "max_step": 1600, "battery_max": 200},
          {"charger_count": 2, "robot_count": 4, "max_step": 2000, "battery_max": 200}]
CHARGERS = [(30, 30), (86, 30), (30, 86), (86, 86)]  # the test field's charger sites (top-left)


def field(walls=(), pockets=()) -> VacuumMap:
    """A 62x62 open square of road (x, z in 28..89) with chargers in its corners, the given (x, z)
    obstacle cells, and `pockets`: cells walled in on their 4 sides (an official robot there
    cannot move; the map is then not connected, so it is built unchecked)."""
    grid = np.zeros((GRID_SIZE, GRID_SIZE), dtype=bool)
    grid[28:90, 28:90] = True
    for x, z in walls:
        grid[z, x] = False
    for x, z in pockets:
        for nx, nz in ((x + 1, z), (x - 1, z), (x, z + 1), (x, z - 1)):
            grid[nz, nx] = False
    return VacuumMap(grid, CHARGERS, name="field", check=not pockets)


def env_on(game_map, seed=0, **options) -> RobotVacuumEnv:
    env = RobotVacuumEnv(game_map, seed=seed, **options)
    env.reset({"env_conf": {"map": [1]}})
    return env


# ---- the real trajectories ---------------------------------------------------------------------


def read_dump(path: Path) -> list[list[dict]]:
    """The runs of consecutive records of one dump file (a record per decision: the env_obs the
    action was chosen on; lines broken by concurrent appends split a run)."""
    runs, run = [], []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            rec = None
        if rec is None or (run and rec["step"] != run[-1]["step"] + 1):
            if run:
                runs.append(run)
            run = [] if rec is None else [rec]
            continue
        run.append(rec)
    if run:
        runs.append(run)
    return runs


def violations(run: list[dict]) -> list[str]:
    """Every break of the per-step invariants the dumps show, in one run of consecutive records
    {step, battery, battery_max, dirt_cleaned, total_dirt}: battery -1 a step or back to
    battery_max (a charger; also while staying on it), 0 or 1 cell cleaned a step, total_dirt
    constant, the reset record (step 1) full and clean."""
    out = []
    for a, b in zip(run, run[1:]):
        if b["battery"] not in (a["battery"] - 1, a["battery_max"]):
            out.append(f"step {b['step']}: battery {a['battery']} -> {b['battery']}")
        if b["dirt_cleaned"] - a["dirt_cleaned"] not in (0, 1):
            out.append(f"step {b['step']}: dirt_cleaned {a['dirt_cleaned']} -> {b['dirt_cleaned']}")
        if b["total_dirt"] != a["total_dirt"]:
            out.append(f"step {b['step']}: total_dirt changed")
    if run[0]["step"] == 1 and (run[0]["battery"] != run[0]["battery_max"] or run[0]["dirt_cleaned"] != 0):
        out.append("the reset record is not full and clean")
    return out


def sim_records(env, policy, usr_conf, seed) -> tuple[list[dict], dict]:
    """A simulated episode logged as the dumps log one: a record per decision (the env_obs acted
    on, step 1 = reset), and the final env_obs."""
    obs = env.reset(usr_conf, seed=seed)
    records = []
    while True:
        h, info = obs["observation"]["frame_state"]["heroes"], obs["observation"]["env_info"]
        records.append({"step": len(records) + 1, "battery": h["battery"], "battery_max": h["battery_max"],
                        "dirt_cleaned": h["dirt_cleaned"], "total_dirt": info["total_dirt"]})
        if obs["terminated"] or obs["truncated"]:
            return records[:-1], obs
        _, obs = env.step(policy.act(env))


@needs_dumps
def test_the_real_trajectories_hold_the_per_step_invariants():
    files = sorted((DUMPS / "episodes").glob("round_*_map*.jsonl"))
    assert len(files) >= 25
    checked = refills_at_full = 0
    for path in files:
        runs = read_dump(path)
        assert runs[0][0]["step"] == 1, path.name
        for run in runs:
            assert violations(run) == [], path.name
            checked += len(run)
            refills_at_full += sum(a["battery"] == b["battery"] == a["battery_max"] for a, b in zip(run, run[1:]))
    assert checked > 25_000 and refills_at_full > 100  # staying on a charger keeps the battery full


@needs_dumps
@pytest.mark.parametrize("round_index", range(4))
def test_simulated_trajectories_hold_the_dumps_invariants_and_endings(round_index):
    """Each round of the dumps' benchmark played in the simulator (the dumps cannot be replayed:
    their `action` field is 0 on every record and they log no position, so the checks are the
    invariants): the same invariants; a run to max_step shows
    max_step decisions; a run ended early either on battery 1 (the last action emptied it) or by
    a collision, as the dumps' short runs end (round 3: battery 1 on maps 1, 6, 7; 52 on map 3)."""
    manifest = json.loads((DUMPS / "manifest.json").read_text())
    conf = manifest["rounds"][round_index]
    assert {k: conf[k] for k in ROUNDS[round_index]} == ROUNDS[round_index]
    usr_conf = {"env_conf": {"map": [11], **ROUNDS[round_index]}}
    env = RobotVacuumEnv(seed=round_index)
    for policy, seed in ((ReferencePolicy(0), 1), (RandomPolicy(round_index), 2), (RandomPolicy(7), 3)):
        records, last = sim_records(env, policy, usr_conf, seed)
        assert violations(records) == []
        if last["truncated"]:
            assert len(records) == usr_conf["env_conf"]["max_step"] and not last["terminated"]
        else:
            assert last["terminated"] and (records[-1]["battery"] == 1) == (env.fail_reason == "battery")
    for path in (DUMPS / "episodes").glob(f"round_{round_index + 1}_map*.jsonl"):  # round 4 was not logged
        first = read_dump(path)[0][0]
        assert (first["step"], first["battery"], first["battery_max"]) == (1, conf["battery_max"], conf["battery_max"])


@needs_dumps
def test_an_uncharged_battery_lasts_exactly_battery_max_actions_as_in_the_dumps():
    """round_3_map6 logs 200 decisions from battery 200 without a charge: the 200th action
    emptied the battery. The simulator's hero bumping into a wall does the same."""
    run = read_dump(DUMPS / "episodes" / "round_3_map6.jsonl")[0]
    assert len(run) == 200 and run[0]["battery"] == 200 and run[-1]["battery"] == 1
    env = env_on(field(walls=[(41, 40)]))
    env.place(hero=(40, 40), npcs=[(80, 80)])
    steps = 0
    while True:
        _, obs = env.step(0)  # east, into the wall: blocked, still a step and a battery
        steps += 1
        if obs["terminated"] or obs["truncated"]:
            break
        assert obs["observation"]["frame_state"]["heroes"]["pos"] == {"x": 40, "z": 40}
    assert steps == 200 and obs["terminated"] and env.fail_reason == "battery"
    assert obs["observation"]["env_info"]["remaining_charge"] == 0


@needs_dumps
def test_total_dirt_is_fixed_per_map_with_four_chargers_whatever_the_robots_and_spawns():
    """The dumps: with all 4 chargers total_dirt is one number per map (robot_count 3 or 4, any
    hero spawn); the simulator's is the road minus the chargers' cells."""
    round1 = {int(p.stem.split("map")[1]): read_dump(p)[0][0]["total_dirt"]
              for p in (DUMPS / "episodes").glob("round_1_map*.jsonl")}
    assert round1[1] == 6590 and round1[10] == 5828
    env = RobotVacuumEnv(seed=0)
    seen = {env.reset({"env_conf": {"map": [3], "robot_count": n}}, seed=s)["observation"]["env_info"]["total_dirt"]
            for n in (1, 3, 4) for s in range(3)}
    assert seen == {generated_map(3).num_road - 4 * 9}
    fewer = env.reset({"env_conf": {"map": [3], "charger_count": 2}})["observation"]["env_info"]["total_dirt"]
    assert fewer == generated_map(3).num_road - 2 * 9


# ---- rules ---------------------------------------------------------------------------------------


def test_a_move_cleans_one_cell_scores_it_and_the_reward_is_the_score_change():
    env = env_on(field())
    env.place(hero=(50, 50), npcs=[(80, 80)])
    reward, obs = env.step(0)
    assert reward == {"env_id": env.env_id, "frame_no": 1, "reward": 1.0}
    info = obs["observation"]["env_info"]
    assert info["pos"] == {"x": 51, "z": 50} and info["step_cleaned_cells"] == [{"x": 51, "z": 50}]
    assert info["total_score"] == info["clean_score"] == 1 == obs["observation"]["frame_state"]["heroes"]["score"]
    reward, obs = env.step(4)  # back onto the spawn cell: dirty (hero_spawn_cell "dirty")
    assert reward["reward"] == 1.0
    reward, obs = env.step(0)  # onto a cell it cleaned
    assert reward["reward"] == 0.0 and obs["observation"]["env_info"]["step_cleaned_cells"] == []
    assert obs["observation"]["frame_state"]["heroes"]["dirt_cleaned"] == 2
    assert obs["observation"]["env_info"]["remaining_charge"] == 197


def test_the_spawn_cell_cleaned_at_reset_scores_nothing():
    env = env_on(field(), hero_spawn_cell="cleaned")
    env.place(hero=(50, 50), npcs=[(80, 80)])
    env.step(0)
    reward, _ = env.step(4)
    assert reward["reward"] == 0.0


def test_a_blocked_move_stays_put_and_still_costs_a_step_and_a_battery():
    env = env_on(field(walls=[(51, 50)]))
    env.place(hero=(50, 50), npcs=[(80, 80)])
    _, obs = env.step(0)
    h = obs["observation"]["frame_state"]["heroes"]
    assert h["pos"] == {"x": 50, "z": 50} and h["battery"] == 199 and obs["observation"]["step_no"] == 1
    _, obs = env.step(2)  # north: road
    assert obs["observation"]["frame_state"]["heroes"]["pos"] == {"x": 50, "z": 49}


def test_a_diagonal_needs_one_open_side():
    env = env_on(field(walls=[(51, 50), (50, 49)]))
    env.place(hero=(50, 50), npcs=[(80, 80)])
    _, obs = env.step(1)  # NE: both sides closed
    assert obs["observation"]["env_info"]["pos"] == {"x": 50, "z": 50}
    env = env_on(field(walls=[(51, 50)]))
    env.place(hero=(50, 50), npcs=[(80, 80)])
    _, obs = env.step(1)  # NE: north side open
    assert obs["observation"]["env_info"]["pos"] == {"x": 51, "z": 49}
    env = env_on(field(walls=[(51, 50)]), diagonal_rule="both_free")
    env.place(hero=(50, 50), npcs=[(80, 80)])
    _, obs = env.step(1)
    assert obs["observation"]["env_info"]["pos"] == {"x": 50, "z": 50}


def test_the_map_edge_blocks():
    grid = np.zeros((GRID_SIZE, GRID_SIZE), dtype=bool)
    grid[0:40, 0:40] = True
    env = env_on(VacuumMap(grid, [(0, 0), (20, 0), (0, 20), (20, 20)]))
    env.place(hero=(5, 0), npcs=[(30, 30)])
    _, obs = env.step(2)  # north, off the map
    assert obs["observation"]["env_info"]["pos"] == {"x": 5, "z": 0}
    assert obs["observation"]["map_info"][9] == [0] * 21  # the row above is off the map: 0


def test_a_charger_refills_on_entry_counts_one_charge_and_keeps_the_battery_full_inside():
    env = env_on(field())
    env.place(hero=(33, 31), npcs=[(80, 80)], battery=57)
    _, obs = env.step(4)  # onto (32, 31), the charger at (30, 30)'s east column
    info = obs["observation"]["env_info"]
    assert info["remaining_charge"] == 200 and info["charge_count"] == 1
    _, obs = env.step(4)
    assert obs["observation"]["env_info"]["remaining_charge"] == 200
    assert obs["observation"]["env_info"]["charge_count"] == 1  # still inside: no new charge
    assert obs["observation"]["map_info"][10][10] == CELL_CLEAN  # charger cells are clean floor
    for _ in range(2):
        _, obs = env.step(0)
    assert obs["observation"]["env_info"]["remaining_charge"] == 199  # out at (33, 31)
    _, obs = env.step(4)
    assert obs["observation"]["env_info"]["charge_count"] == 2


def test_a_hero_on_battery_1_stepping_onto_a_charger_lives():
    env = env_on(field())
    env.place(hero=(33, 31), npcs=[(80, 80)], battery=1)
    _, obs = env.step(4)
    assert not obs["terminated"] and obs["observation"]["env_info"]["remaining_charge"] == 200
    env = env_on(field())
    env.place(hero=(40, 40), npcs=[(80, 80)], battery=1)
    _, obs = env.step(0)
    assert obs["terminated"] and not obs["truncated"] and env.fail_reason == "battery"


def test_contact_within_chebyshev_1_ends_the_episode_and_2_does_not():
    env = env_on(field(pockets=[(60, 50)]))
    env.place(hero=(62, 52), npcs=[(60, 50)])  # the robot cannot leave its pocket
    _, obs = env.step(4)  # to (61, 52): distance 2
    assert not obs["terminated"]
    reward, obs = env.step(2)  # to (61, 51): distance 1
    assert obs["terminated"] and not obs["truncated"] and env.fail_reason == "collision"
    assert reward["reward"] == 1.0  # the fatal step still cleans its cell
    with pytest.raises(EpisodeOverError):
        env.step(0)


def test_collision_check_before_the_robots_move():
    """A hero stepping next to a robot that then moves away: alive when contact is checked after
    the robots' moves only, caught with collision_check = "before_and_after"."""
    outcomes = {}
    for rule in ("after_npcs", "before_and_after"):
        caught = 0
        for seed in range(20):
            env = env_on(field(), seed=seed, collision_check=rule, npc_moves="4dir", npc_tries=1)
            env.place(hero=(62, 50), npcs=[(60, 50)])
            _, obs = env.step(4)  # to (61, 50): next to the robot before it moves
            caught += obs["terminated"]
        outcomes[rule] = caught
    assert outcomes["before_and_after"] == 20 and outcomes["after_npcs"] < 20


def test_the_step_limit_truncates_and_wins_over_a_failure_on_the_same_step():
    env = RobotVacuumEnv(field(), seed=0)
    env.reset({"env_conf": {"map": [1], "max_step": 3}})
    env.place(hero=(40, 40), npcs=[(80, 80)], battery=3)
    for k in range(3):
        reward, obs = env.step(0)
    assert obs["truncated"] and not obs["terminated"] and obs["observation"]["env_info"]["remaining_charge"] == 0
    assert obs["observation"]["env_info"]["finished_steps"] == 3 == reward["frame_no"]


def test_official_robots_stay_in_their_squares_move_one_cell_and_their_cleaning_never_scores():
    """A whole episode, every step: each robot within +-10 of its spawn point, one 4-connected
    cell at most per step; the hero scores exactly when it enters dirt; the cells cleaned
    (step_cleaned_cells with the robots' too) account for all dirt gone, the score for the
    hero's alone."""
    env = RobotVacuumEnv(seed=3, step_cleaned_cells="hero_and_npcs")
    obs = env.reset({"env_conf": {"map": [12]}})
    homes = list(env.npc_homes)
    hx, hz = CELL_X[env.hero_cell], CELL_Z[env.hero_cell]
    for i, (x, z) in enumerate(homes):
        assert all(max(abs(x - ox), abs(z - oz)) > 2 * NPC_RADIUS for ox, oz in homes[i + 1:])
        assert max(abs(x - hx), abs(z - hz)) > 5
    policy, cleaned_total, npc_cleaned = ReferencePolicy(0), 0, 0
    while not (obs["terminated"] or obs["truncated"]):
        before = list(env.npc_cells)
        target_state = env.dirt_grid()
        reward, obs = env.step(policy.act(env))
        c = env.hero_cell
        assert reward["reward"] == (target_state[CELL_Z[c], CELL_X[c]] == CELL_DIRT)
        for (ox, oz), b, n in zip(homes, before, env.npc_cells):
            assert abs(CELL_X[n] - ox) <= NPC_RADIUS and abs(CELL_Z[n] - oz) <= NPC_RADIUS
            assert abs(CELL_X[n] - CELL_X[b]) + abs(CELL_Z[n] - CELL_Z[b]) <= 1
        cells = obs["observation"]["env_info"]["step_cleaned_cells"]
        cleaned_total += len(cells)
        npc_cleaned += len(cells) - int(reward["reward"])
    info = obs["observation"]["env_info"]
    assert cleaned_total == info["total_dirt"] - int((env.dirt_grid() == CELL_DIRT).sum())
    assert npc_cleaned > 300 and info["total_score"] == cleaned_total - npc_cleaned


def _walk(env, goal) -> list[int]:
    """The hero's actions along a shortest path to cell `goal` (flat id) over the road."""
    parent, frontier = {env.hero_cell: None}, [env.hero_cell]
    while goal not in parent:
        nxt = []
        for c in frontier:
            for a in range(8):
                t = env.moves[c * 8 + a]
                if t not in parent:
                    parent[t] = (c, a)
                    nxt.append(t)
        frontier = nxt
    actions, c = [], goal
    while parent[c] is not None:
        c, a = parent[c]
        actions.append(a)
    return actions[::-1]


def test_a_cell_an_official_robot_cleaned_gives_the_hero_nothing():
    env = env_on(field(walls=[(33, 31)]))
    env.reset({"env_conf": {"map": [1], "robot_count": 1}})
    env.place(hero=(32, 31), npcs=[(60, 60)])  # on a charger, against a wall: it waits at full battery
    for _ in range(150):
        _, obs = env.step(0)
    trail = {c for c in env.npc_paths[0] if env.dirt_grid()[CELL_Z[c], CELL_X[c]] == CELL_CLEAN}
    npc = env.npc_cells[0]
    goal = min((c for c in trail if max(abs(CELL_X[c] - CELL_X[npc]), abs(CELL_Z[c] - CELL_Z[npc])) >= 8),
               key=lambda c: max(abs(CELL_X[c] - 32), abs(CELL_Z[c] - 31)))
    score = obs["observation"]["env_info"]["total_score"]
    for a in _walk(env, goal):
        reward, obs = env.step(a)
        assert not obs["terminated"]
        score += reward["reward"]
    assert env.hero_cell == goal and reward["reward"] == 0.0
    assert obs["observation"]["env_info"]["total_score"] == score


def test_charger_subsets_are_drawn_from_the_map_sites():
    env = RobotVacuumEnv(field(), seed=0)
    drawn = set()
    for _ in range(30):
        obs = env.reset({"env_conf": {"map": [1], "charger_count": 2}})
        organs = obs["observation"]["frame_state"]["organs"]
        assert len(organs) == 2 and obs["observation"]["env_info"]["total_charger"] == 2
        drawn.add(tuple((o["pos"]["x"], o["pos"]["z"]) for o in organs))
    assert len(drawn) == 6 and all(set(d) <= set(CHARGERS) for d in drawn)
    centre = RobotVacuumEnv(field(), seed=0, charger_pos="centre").reset()["observation"]["frame_state"]["organs"]
    assert [(o["pos"]["x"], o["pos"]["z"]) for o in centre] == [(x + 1, z + 1) for x, z in CHARGERS]


# ---- the data protocol ---------------------------------------------------------------------------


def _types(d: dict) -> dict:
    return {k: type(v).__name__ for k, v in d.items()}


def test_env_obs_has_the_protocols_keys_nesting_and_types():
    env = RobotVacuumEnv(seed=0)
    obs = env.reset({"env_conf": {"map": [2], "robot_count": 4}})
    reward, obs = env.step(3)
    assert set(reward) == {"env_id", "frame_no", "reward"} and isinstance(reward["reward"], float)
    assert _types(obs) == {"env_id": "str", "frame_no": "int", "observation": "dict", "extra_info": "dict",
                           "terminated": "bool", "truncated": "bool"}
    o = obs["observation"]
    assert list(o) == ["step_no", "frame_state", "env_info", "map_info", "legal_action"]
    assert o["legal_action"] == [1] * 8
    fs = o["frame_state"]
    assert list(fs) == ["frame_no", "heroes", "npcs", "organs"] and fs["frame_no"] == o["step_no"] == 1
    assert _types(fs["heroes"]) == {"hero_id": "str", "pos": "dict", "battery": "int", "battery_max": "int",
                                    "score": "int", "dirt_cleaned": "int"}
    assert len(fs["npcs"]) == 4 and [n["idx"] for n in fs["npcs"]] == [1, 2, 3, 4]
    for n in fs["npcs"]:
        assert _types(n) == {"npc_id": "str", "pos": "dict", "idx": "int", "is_in_view": "int"}
    assert len(fs["organs"]) == 4
    for g in fs["organs"]:
        assert _types(g) == {"sub_type": "int", "config_id": "int", "pos": "dict", "w": "int", "h": "int"}
        assert (g["sub_type"], g["w"], g["h"]) == (1, 3, 3)
    info = o["env_info"]
    assert list(info) == ["total_score", "step_no", "clean_score", "total_dirt", "battery_max", "remaining_charge",
                          "charge_count", "total_charger", "npc_count", "pos", "total_map", "map_random", "max_step",
                          "finished_steps", "step_cleaned_cells"]
    assert all(type(v) is int for k, v in info.items() if k not in ("pos", "step_cleaned_cells"))
    assert (info["total_map"], info["map_random"], info["npc_count"], info["max_step"]) == (1, 0, 4, 1000)
    assert len(o["map_info"]) == 21 and all(len(row) == 21 for row in o["map_info"])
    assert {v for row in o["map_info"] for v in row} <= {0, 1, 2} and o["map_info"][10][10] == CELL_CLEAN
    extra = obs["extra_info"]
    assert list(extra) == ["frame_state", "map_id", "result_code", "result_message"]
    assert (extra["map_id"], extra["result_code"], extra["result_message"]) == (2, 0, "")
    assert [n["pos"] for n in extra["frame_state"]["npcs"]] == [{"x": CELL_X[c], "z": CELL_Z[c]} for c in env.npc_cells]


def test_map_info_rows_are_z_and_columns_x():
    env = env_on(field(walls=[(53, 49)]))
    obs = env.place(hero=(50, 50), npcs=[(80, 80)])
    view = obs["observation"]["map_info"]
    assert view[10 - 1][10 + 3] == 0 and view[10 + 3][10 - 1] == CELL_DIRT
    assert view[10][0] == CELL_DIRT and view[0][10] == CELL_DIRT  # (40, 50) and (50, 40): road
    env.step(0)
    _, obs = env.step(4)
    assert obs["observation"]["map_info"][10][11] == CELL_CLEAN  # (51, 50), cleaned on the way


def test_robots_beyond_the_view_are_hidden_in_the_observation_only():
    env = env_on(field())
    obs = env.place(hero=(40, 40), npcs=[(45, 48), (75, 75)])
    near, far = obs["observation"]["frame_state"]["npcs"]
    assert near == {"npc_id": near["npc_id"], "pos": {"x": 45, "z": 48}, "idx": 1, "is_in_view": 1}
    assert far["pos"] == {"x": -1, "z": -1} and far["is_in_view"] == 0
    assert obs["extra_info"]["frame_state"]["npcs"][1]["pos"] == {"x": 75, "z": 75}
    shown = env_on(field(), npc_out_of_view="shown")
    obs = shown.place(hero=(40, 40), npcs=[(45, 48), (75, 75)])
    assert obs["observation"]["frame_state"]["npcs"][1]["pos"] == {"x": 75, "z": 75}


def test_wire_options_change_only_what_they_name():
    base = RobotVacuumEnv(seed=0)
    other = RobotVacuumEnv(seed=0, legal_action_key="both", legal_action_type="bool", reward_value="total",
                           total_map="open", vacuum_extra_info="withheld")
    a, b = base.reset(), other.reset()
    assert b["observation"]["legal_action"] == b["observation"]["legal_act"] == [True] * 8
    assert b["observation"]["env_info"]["total_map"] == 10 and b["extra_info"] == {"result_code": 0,
                                                                                   "result_message": ""}
    assert a["observation"]["frame_state"] == b["observation"]["frame_state"]
    rewards = []
    for _ in range(5):
        ra, _ = base.step(0)
        rb, _ = other.step(0)
        rewards.append((ra["reward"], rb["reward"]))
    assert sum(r for r, _ in rewards) == rewards[-1][1] == base.score


@needs_package
def test_the_official_packages_preprocessor_reads_the_env_obs_and_the_workflow_calls_match():
    """agent_ppo/feature/preprocessor.py of the official 13.0.1 package (pure numpy, loaded from
    ../shared) turns every env_obs of an episode into its 69 features and its reward (0.1 per
    cell cleaned - 0.001), reading `legal_action`, `map_info`, the hero and `total_dirt`; the
    workflow's calls (`env_obs = env.reset(usr_conf)`, `env_reward, env_obs = env.step(act)`, the
    end flags and `env_info.total_score`) are the env's."""
    workflow = (PACKAGE / "agent_ppo" / "workflow" / "train_workflow.py").read_text(encoding="utf-8")
    assert "env_obs = self.env.reset(self.usr_conf)" in workflow
    assert "env_reward, env_obs = self.env.step(act)" in workflow
    spec = importlib.util.spec_from_file_location("official_vacuum_preprocessor",
                                                  PACKAGE / "agent_ppo" / "feature" / "preprocessor.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pre = module.Preprocessor()
    env = RobotVacuumEnv(seed=0)
    env_obs = env.reset({"env_conf": {"map": [4], "max_step": 300}})
    policy = ReferencePolicy(0)
    feature, legal, _ = pre.feature_process(env_obs, 0)
    while not (env_obs["terminated"] or env_obs["truncated"]):
        env_reward, env_obs = env.step(policy.act(env))
        feature, legal, reward = pre.feature_process(env_obs, 0)
        assert feature.shape == (69,) and np.isfinite(feature).all() and legal == [1] * 8
        assert reward == pytest.approx(0.1 * env_reward["reward"] - 0.001)
    assert pre.dirt_cleaned == env_obs["observation"]["env_info"]["total_score"] > 200
    assert pre.total_dirt == env.total_dirt and feature[49 + 1] == pytest.approx(env.battery / env.battery_max)


# ---- usr_conf, errors, options, the factory ------------------------------------------------------


@pytest.mark.parametrize("key, value", [("robot_count", 0), ("robot_count", 5), ("charger_count", 5),
                                        ("max_step", 2001), ("max_step", 0), ("battery_max", 99),
                                        ("battery_max", 1000), ("battery_max", True), ("map_random", 1),
                                        ("map", []), ("map", [0]), ("map", "1"), ("charger_count", 2.0)])
def test_bad_usr_conf_values_name_the_key(key, value):
    env = RobotVacuumEnv(seed=0)
    with pytest.raises(VacuumUsrConfError, match=f"'{key}'.*allowed"):
        env.reset({"env_conf": {key: value}})


def test_usr_conf_defaults_unknown_keys_and_shape():
    env = RobotVacuumEnv(seed=0)
    info = env.reset()["observation"]["env_info"]
    assert (info["battery_max"], info["max_step"], info["npc_count"], info["total_charger"]) == (200, 1000, 4, 4)
    assert default_usr_conf() == {"env_conf": {"map": list(range(1, 11)), "map_random": False, "robot_count": 4,
                                               "charger_count": 4, "max_step": 1000, "battery_max": 200}}
    with pytest.raises(VacuumUsrConfError, match="unknown key 'robot_cont'.*robot_count"):
        env.reset({"env_conf": {"robot_cont": 2}})
    with pytest.raises(VacuumUsrConfError, match="usr_conf must be a dict"):
        env.reset([1])
    edges = {"robot_count": 1, "charger_count": 1, "max_step": 2000, "battery_max": 999, "map_random": True}
    info = env.reset({"env_conf": edges})["observation"]["env_info"]
    assert (info["npc_count"], info["total_charger"], info["max_step"], info["battery_max"], info["map_random"]) == \
        (1, 1, 2000, 999, 1)


def test_errors_env_obs_answers_as_the_platform():
    env = RobotVacuumEnv(seed=0, errors="env_obs")
    obs = env.reset({"env_conf": {"battery_max": 50}})
    assert obs["observation"] is None and obs["truncated"] and not obs["terminated"]
    assert obs["extra_info"]["result_code"] == -101 and "battery_max" in obs["extra_info"]["result_message"]
    reward, obs = env.step(0)
    assert reward["reward"] == 0.0 and obs["extra_info"]["result_code"] == -201
    assert isinstance(env.answered_error, EpisodeOverError)


def test_the_map_order_cycles_and_map_random_draws():
    env = RobotVacuumEnv(seed=0)
    conf = {"env_conf": {"map": [3, 5, 7]}}
    assert [env.reset(conf)["extra_info"]["map_id"] for _ in range(4)] == [3, 5, 7, 3]
    first = RobotVacuumEnv(seed=0, map_order="first")
    assert {first.reset(conf)["extra_info"]["map_id"] for _ in range(3)} == {3}
    conf["env_conf"]["map_random"] = True
    assert {env.reset(conf)["extra_info"]["map_id"] for _ in range(20)} == {3, 5, 7}


def test_bad_option_and_unknown_option_are_named():
    with pytest.raises(ValueError, match="option npc_moves = 'hop' is invalid: allowed '4dir' | '8dir'"):
        RobotVacuumEnv(npc_moves="hop")
    with pytest.raises(ValueError, match="option npc_tries = 0 is invalid: allowed an int in 1..10"):
        RobotVacuumEnv(npc_tries=0)
    with pytest.raises(TypeError, match="unknown robot_vacuum env option 'npc_move'.*npc_moves"):
        RobotVacuumEnv(npc_move="4dir")


def test_the_rules_page_holds_the_options_table():
    text = (REPO / "docs" / "games" / "robot_vacuum.md").read_text(encoding="utf-8")
    assert options_table() in text
    for name in OPTIONS:
        assert f"`{name}`" in text


def test_randomize_rules_draws_every_candidate_reproducibly():
    draws = []
    for _ in range(2):
        env = RobotVacuumEnv(seed=5, randomize_rules=True)
        seen = []
        for _ in range(12):
            env.reset({"env_conf": {"map": [1]}})
            seen.append(tuple(getattr(env, name) for name in CANDIDATES))
        draws.append(seen)
    assert draws[0] == draws[1] and len(set(draws[0])) > 6
    for k, name in enumerate(CANDIDATES):
        assert {d[k] for d in draws[0]} <= set(CANDIDATES[name])


def test_make_env_builds_the_vacuum_env_and_refuses_what_it_does_not_read(tmp_path):
    env = realm.make_env(protocol="vacuum", seed=1, npc_moves="8dir", map_id=4)
    assert isinstance(env, RobotVacuumEnv) and env.npc_moves == "8dir"
    assert env.reset()["extra_info"]["map_id"] == 4 and env.map is generated_map(4)
    assert make_vacuum_env(map_seed=2).reset({"env_conf": {"map": [1]}}) and generated_map(2001)
    with pytest.raises(ValueError, match="map_file: not a map source of protocol 'vacuum'"):
        realm.make_env(protocol="vacuum", map_file="x.json")
    with pytest.raises(TypeError, match="unknown vacuum env option 'monster_distance'.*protocol='gorge'"):
        realm.make_env(protocol="vacuum", monster_distance="bfs4")
    with pytest.raises(ValueError, match="step_jitter"):
        realm.make_env(protocol="vacuum", step_jitter=True)


# ---- maps ----------------------------------------------------------------------------------------


def test_generated_maps_look_like_the_open_maps():
    """The dumps' total_dirt of maps 1-10 (4 chargers) is 5,690..7,873: generated maps are in that
    range, one connected road, 4 charger sites on road and spawn squares apart."""
    for seed in range(1, 9):
        m = generated_map(seed)
        stats = map_stats(m)
        assert 5690 <= stats["total_dirt"] <= 7900 and stats["components"] == 1
        assert 0.1 < stats["blocked_inside"] < 0.5  # walls and furniture inside the building
        assert len(m.chargers) == 4 and len(m.npc_spawns) == 4
        for i, (x, z) in enumerate(m.npc_spawns):
            assert all(max(abs(x - a), abs(z - b)) > 2 * NPC_RADIUS for a, b in m.npc_spawns[i + 1:])
    assert not np.array_equal(generated_map(1).walkable, generated_map(2).walkable)


def test_map_files_round_trip_by_id_in_both_forms(tmp_path):
    m = generated_map(5)
    write_map_json(m, tmp_path / "robot_vacuum_map_3.json")
    (tmp_path / "map_12.txt").write_text(grid_text(m), encoding="utf-8")
    folder = MapFolder(tmp_path)
    assert folder.ids() == [3, 12] and folder.allowed_ids() >= {1, 3, 10, 12}
    for map_id in (3, 12):
        loaded = folder.get(map_id)
        assert np.array_equal(loaded.walkable, m.walkable)
        assert sorted(loaded.chargers) == sorted(m.chargers) and sorted(loaded.npc_spawns) == sorted(m.npc_spawns)
    env = realm.make_env(protocol="vacuum", maps_folder=str(tmp_path), seed=0, npc_spawns="map")
    obs = env.reset({"env_conf": {"map": [12]}})
    assert obs["extra_info"]["map_id"] == 12 and set(env.npc_homes) == set(m.npc_spawns)
    with pytest.raises(VacuumMapError, match="map id 4: none of"):
        env.reset({"env_conf": {"map": [4]}})


def test_bad_map_files_name_the_file_and_the_problem(tmp_path):
    m = generated_map(5)
    data = map_json(m)
    cases = {
        "short.json": ({**data, "cells": data["cells"][:-1]}, "16383 cells, expected 16384"),
        "chargers.json": ({**data, "objects": data["objects"][1:]}, "3 charger sites, needs at least 4"),
        "wall.json": ({**data, "objects": [{"name": "charger", "x": 0, "z": 0}] + data["objects"][1:]},
                      r"charger at top-left \(0, 0\) needs its 3x3 footprint on road"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name
        path.write_text(json.dumps(content), encoding="utf-8")
        with pytest.raises(VacuumMapError, match=f"{name}.*{message}"):
            load_map_file(path)
    text = grid_text(m).splitlines()
    x, z = m.chargers[0]
    text[z] = text[z][:x] + "." + text[z][x + 1:]  # a charger block with a hole
    (tmp_path / "hole.txt").write_text("\n".join(text), encoding="utf-8")
    with pytest.raises(VacuumMapError, match=r"hole.txt.*does not start a 3x3 block"):
        load_map_file(tmp_path / "hole.txt")
    split = np.array(m.walkable)
    split[:, 64] = False
    with pytest.raises(VacuumMapError, match="separate components"):
        VacuumMap(split, m.chargers, name="split")


# ---- the reference policy, gymnasium, determinism -------------------------------------------------


def test_the_reference_policy_cleans_far_more_than_random_on_generated_maps():
    env = RobotVacuumEnv(seed=0)
    for conf in ({"map": [11, 12, 13]}, {"map": [14, 15, 16], "charger_count": 3, "battery_max": 150}):
        usr_conf = {"env_conf": conf}
        random_play = evaluate(env, RandomPolicy(0), usr_conf, 3)
        reference = evaluate(env, ReferencePolicy(0), usr_conf, 3)
        assert reference.survival == 1.0 and reference.collisions == 0
        assert reference.score > 600 and reference.score > 5 * random_play.score
        assert reference.charges >= 3  # it must charge to last 1000 steps


def test_the_gym_env_passes_the_checker_and_plays():
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(realm.robot_vacuum.GYM_ENV_ID, seed=0, usr_conf={"env_conf": {"map": [2]}})
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=1)
    total = 0.0
    for _ in range(150):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        total += reward
        if terminated or truncated:
            break
    assert total == info["total_score"] and obs["map_info"][10, 10] == CELL_CLEAN


def test_the_same_seed_replays_the_same_episode_and_another_seed_does_not():
    def run(seed):
        env = RobotVacuumEnv(seed=seed)
        obs = [env.reset({"env_conf": {"map": [6, 7]}})]
        rnd = random.Random(0)
        for _ in range(120):
            obs.append(env.step(rnd.randrange(8))[1])
            if obs[-1]["terminated"] or obs[-1]["truncated"]:
                obs.append(env.reset({"env_conf": {"map": [6, 7]}}))
        return json.dumps(obs)

    assert run(4) == run(4) and run(4) != run(5)
    env = RobotVacuumEnv(seed=9)
    a = env.reset({"env_conf": {"map": [6]}}, seed=2)
    env.step(0)
    assert env.reset({"env_conf": {"map": [6]}}, seed=2) == a


def test_render_draws_an_episode(tmp_path):
    from realm.robot_vacuum.render import record_episode, render_png

    env = RobotVacuumEnv(seed=0)
    frames = record_episode(env, RandomPolicy(0), {"env_conf": {"map": [1], "max_step": 30}}, seed=0)
    assert len(frames) == 31 and frames[-1]["end"] == "time"
    render_png(frames, tmp_path / "episode.png")
    assert (tmp_path / "episode.png").stat().st_size > 5000


def test_charger_footprints_and_dirt_start_as_the_rules_say():
    env = RobotVacuumEnv(field(), seed=0)
    env.reset({"env_conf": {"map": [1], "charger_count": 3}})
    grid = env.dirt_grid()
    active = [env.map.chargers[i] for i in env.charger_sites]
    for x, z in CHARGERS:
        values = {int(grid[cz, cx]) for cx, cz in footprint(x, z)}
        assert values == ({CELL_CLEAN} if (x, z) in active else {CELL_DIRT})
    assert int((grid == CELL_DIRT).sum()) == env.total_dirt == 62 * 62 - 27


def test_the_speed_bench_prints_its_figure_last():
    from tool_runs import run_tool

    done = run_tool("tools/robot_vacuum/bench_env.py", "--maps", "1", "--steps", "500", "--cpu")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("map  1 (generated_1):") and lines[-1].startswith("steps_per_second: ")
    assert int(lines[-1].split()[-1]) > 1000
