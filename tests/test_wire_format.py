"""SPEC §7 on the wire, through the real env: flat repeated map fields, frame_no in the frame
state, int32 positions. Platform packages read exactly these shapes."""
from __future__ import annotations

import numpy as np
import pytest

import realm
from realm.back_to_the_realm.protocol import RepeatedScalar, as_grid

MAPS = ("obstacle_map", "memory_map", "treasure_map", "end_map")
INT_MAPS = ("obstacle_map", "treasure_map", "end_map")


@pytest.fixture
def played():
    """An env after a reset and a few steps east and north (memory marks exist)."""
    env = realm.make_env(map_seed=0, seed=1)
    env.reset(usr_conf={"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 8}})
    for act in (0, 0, 2, 4, 4, 6):
        frame_no, obs, score, terminated, truncated, env_info = env.step(act)
    return env, frame_no, obs, env_info


def test_maps_are_flat_repeated_fields_in_row_major_z_x_order(played):
    env, _, obs, _ = played
    for name in MAPS:
        field = getattr(obs.feature, name)
        assert isinstance(field, RepeatedScalar) and len(field) == 51 * 51
        values = list(field)
        grid = np.asarray(field).reshape(51, 51)
        assert len(values) == 2601 and grid.tolist() == [values[r * 51:(r + 1) * 51] for r in range(51)]
        for row, col in ((0, 0), (25, 25), (25, 26), (26, 25), (50, 50), (3, 47)):
            assert field[row * 51 + col] == grid[row, col]
        assert field[-1] == values[-1] and field[2:5] == values[2:5] and isinstance(field[2:5], list)
        with pytest.raises(IndexError):
            field[2601]
        kind = int if name in INT_MAPS else float
        assert all(type(v) is kind for v in field) and type(field[1300]) is kind
        assert field == values and field != values[:-1]


def test_map_layout_matches_the_map_and_the_hero_cell(played):
    env, _, obs, _ = played
    zc, xc = obs.feature.grid_pos.x, obs.feature.grid_pos.z  # grid_pos is axis-swapped
    obstacle = np.asarray(obs.feature.obstacle_map).reshape(51, 51)
    for row in range(51):
        for col in range(51):
            expect = env.map.is_passable_cell(xc + col - 25, zc + row - 25)
            assert obstacle[row, col] == int(expect)
    memory = as_grid(obs.feature.memory_map)
    assert memory.sum() > 0 and 0.0 <= memory.min() and memory.max() <= 1.0


def test_conversions_are_copies_never_the_envs_state(played):
    env, _, obs, _ = played
    field = obs.feature.obstacle_map
    before = list(field)
    arr = np.asarray(field)
    arr[:] = 7
    as_grid(field)[:] = 7
    assert list(field) == before
    with pytest.raises(TypeError):
        hash(field)


def test_frame_no_and_int32_positions(played):
    env, frame_no, obs, env_info = played
    assert env_info.frame_state.frame_no == frame_no == 1 + 3 * 6
    assert env.reset(usr_conf={"diy": {"treasure_num": 0}}) is not None
    assert env.env_info.frame_state.frame_no == 1
    _, _, _, _, _, env_info = env.step(0)
    hero = env_info.frame_state.heroes[0]
    positions = [hero.pos, env_info.game_info.pos, obs.feature.grid_pos] + [o.pos for o in env_info.frame_state.organs]
    for pos in positions:
        assert type(pos.x) is int and type(pos.z) is int
        assert -2**31 <= pos.x < 2**31 and -2**31 <= pos.z < 2**31
    x, z = env.hero_position
    assert (hero.pos.x, hero.pos.z) == (round(x), round(z))
    assert isinstance(obs.feature.norm_pos.x, float)


def test_platform_style_feature_code_reads_the_wire(played):
    """What the official dqn's observation_process does with the maps."""
    _, _, obs, _ = played
    f = obs.feature
    feature_map = list(f.obstacle_map) + list(f.end_map) + list(f.treasure_map) + list(f.memory_map)
    assert len(feature_map) == 4 * 2601
    row = np.array(feature_map, dtype=np.float32)
    assert row.shape == (10404,)
    memory = list(f.memory_map)
    assert memory[len(memory) // 2] == f.memory_map[25 * 51 + 25]
