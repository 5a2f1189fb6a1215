"""Layout, observation_process, GAE (sample_process), SampleData packing, unpack, curriculum."""
import numpy as np
import pytest

from fake_obs import make_env_info, make_obs, make_score
from feature import layout
from feature.curriculum import CurriculumConfig, CurriculumSampler, CurriculumStage
from feature.definition import (SAMPLE_DIM, ActData, Frame, NumpyData2SampleData, ObsData, SampleData,
                                SampleData2NumpyData, action_process, numpy_to_batch, numpy_to_samples,
                                observation_process, sample_process, samples_to_numpy)
from feature.unpack import step_view
from realm.unpack import unpack_env_info, unpack_obs, unpack_score


# --- layout -----------------------------------------------------------------------------------

def test_layout_sizes_follow_the_tables():
    assert layout.MAP_SHAPE == (4, 51, 51)
    assert [c.name for c in layout.MAP_LAYOUT] == ["obstacle", "memory", "treasure", "end"]
    assert layout.STATE_DIM == 61 == sum(b.size for b in layout.STATE_LAYOUT)
    assert layout.NUM_ACTIONS == 16
    covered = np.zeros(layout.STATE_DIM, dtype=int)
    for s in layout.STATE_SLICES.values():
        covered[s] += 1
    assert (covered == 1).all()  # blocks tile the vector exactly once


def test_legal_mask_blocks_flashes_during_cooldown():
    assert layout.legal_mask([1, 1]).tolist() == [1.0] * 16
    assert layout.legal_mask([1, 0]).tolist() == [1.0] * 8 + [0.0] * 8


# --- observation_process ---------------------------------------------------------------------------

def test_observation_process_fills_every_block():
    rng = np.random.default_rng(0)
    maps = [rng.random((51, 51)).astype(np.float32) for _ in range(4)]
    obs = make_obs(pos=(6400.0, 32000.0), end_cells=128.0, chest_cells={3: 25.6, 15: 51.2, 1: 10.0},
                   buff_cells=None, flash_ready=False, obstacle=maps[0], memory=maps[1], treasure=maps[2],
                   end_map=maps[3])
    data = observation_process(obs)
    assert data.map.shape == layout.MAP_SHAPE and data.map.dtype == np.float32
    for i in range(4):
        np.testing.assert_array_equal(data.map[i], maps[i])
    s = {name: data.state[sl] for name, sl in layout.STATE_SLICES.items()}
    np.testing.assert_allclose(s["norm_pos"], [0.1, 0.5])
    present = [1.0 if i in (3, 15) else 0.0 for i in range(3, 16)]  # id 1 is not a tracked slot
    assert s["chest_present"].tolist() == present
    np.testing.assert_allclose(s["chest_distance"][0], 0.1)
    np.testing.assert_allclose(s["chest_distance"][-1], 0.2)
    np.testing.assert_allclose(s["chest_distance"][1:-1], 1.0)  # null objects read 1.0
    assert s["buff_present"].tolist() == [0.0] and s["buff_distance"].tolist() == [1.0]
    np.testing.assert_allclose(s["end_distance"], [0.5])
    directions = s["chest_direction"].reshape(-1, 2)  # fake_obs puts every present object East
    np.testing.assert_allclose(directions[0], [1.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(directions[-1], [1.0, 0.0], atol=1e-7)
    assert (directions[1:-1] == 0.0).all()  # absent chests point nowhere
    assert s["buff_direction"].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(s["end_direction"], [1.0, 0.0], atol=1e-7)
    assert data.legal.tolist() == [1.0] * 8 + [0.0] * 8


def test_direction_features_point_at_the_objects_in_the_simulator():
    """On the real simulator each live object's direction vector is within 22.5° (one 8-way
    sector) of the true bearing from the hero to it."""
    import math

    import realm

    env = realm.make_env(map_seed=0)
    obs = env.reset(usr_conf={"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 8,
                                      "max_step": 2000}})
    data = observation_process(obs)
    s = {name: data.state[sl] for name, sl in layout.STATE_SLICES.items()}
    hero = env.hero_position
    chests = {o.config_id: o.pos for o in env.env_info.frame_state.organs if o.sub_type == 1}
    for slot, vec in zip(layout.CHEST_SLOT_IDS, s["chest_direction"].reshape(-1, 2)):
        assert len(chests) == 8
        if slot not in chests:
            assert vec.tolist() == [0.0, 0.0]
            continue
        bearing = math.atan2(chests[slot].z - hero[1], chests[slot].x - hero[0])
        got = math.atan2(vec[1], vec[0])
        assert abs((got - bearing + math.pi) % (2 * math.pi) - math.pi) <= math.pi / 8 + 1e-6, slot
    assert s["chest_present"].sum() == 8


def test_action_process_returns_plain_int():
    assert action_process(ActData(action=np.int64(9), log_prob=-1.0, value=0.0)) == 9
    assert type(action_process(ActData(action=np.int64(9), log_prob=-1.0, value=0.0))) is int


# --- sample_process (GAE) --------------------------------------------------------------------------

def _frames(rewards, values, terminated_last=False):
    obs = ObsData(map=np.zeros(layout.MAP_SHAPE, np.float32), state=np.zeros(layout.STATE_DIM, np.float32),
                  legal=np.ones(16, np.float32))
    n = len(rewards)
    return [Frame(obs=obs, act=ActData(action=i % 16, log_prob=-0.5, value=v), reward=r,
                  terminated=terminated_last and i == n - 1) for i, (r, v) in enumerate(zip(rewards, values))]


def _hand_gae(rewards, values, next_values, not_done, gamma, lam):
    # Written out step by step, independent of the implementation's loop.
    deltas = [r + gamma * nv * nd - v for r, v, nv, nd in zip(rewards, values, next_values, not_done)]
    adv = [0.0] * len(rewards)
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = deltas[t] + gamma * lam * not_done[t] * running
        adv[t] = running
    return adv


def test_gae_truncated_chunk_bootstraps_from_next_value():
    gamma, lam = 0.9, 0.8
    rewards, values, bootstrap = [1.0, 0.0, 2.0], [0.5, 1.0, 1.5], 3.0
    samples = sample_process(_frames(rewards, values), bootstrap, gamma, lam)
    # by hand: deltas = 1+.9*1-.5 = 1.4, 0+.9*1.5-1 = .35, 2+.9*3-1.5 = 3.2
    # A2 = 3.2; A1 = .35 + .72*3.2 = 2.654; A0 = 1.4 + .72*2.654 = 3.31088
    expected = [3.31088, 2.654, 3.2]
    np.testing.assert_allclose([s.advantage for s in samples], expected, rtol=1e-6)
    np.testing.assert_allclose([s.ret for s in samples], np.add(expected, values), rtol=1e-6)
    assert expected == pytest.approx(_hand_gae(rewards, values, [1.0, 1.5, 3.0], [1, 1, 1], gamma, lam))


def test_gae_terminated_chunk_ignores_bootstrap():
    gamma, lam = 0.9, 0.8
    rewards, values = [1.0, 0.0, 2.0], [0.5, 1.0, 1.5]
    a = sample_process(_frames(rewards, values, terminated_last=True), 123.0, gamma, lam)
    b = sample_process(_frames(rewards, values, terminated_last=True), -7.0, gamma, lam)
    # last step: delta = 2 - 1.5 = .5 (no future); A1 = .35 + .72*.5 = .71; A0 = 1.4 + .72*.71 = 1.9112
    np.testing.assert_allclose([s.advantage for s in a], [1.9112, 0.71, 0.5], rtol=1e-6)
    assert [s.advantage for s in a] == [s.advantage for s in b]


def test_gae_terminal_inside_chunk_stops_the_backup():
    gamma, lam = 0.99, 0.95
    frames = _frames([1.0, 5.0, 1.0], [0.0, 0.0, 0.0])
    frames[0].terminated = True
    samples = sample_process(frames, 10.0, gamma, lam)
    assert samples[0].advantage == pytest.approx(1.0)  # nothing after the terminal step leaks back
    assert samples[2].advantage == pytest.approx(1.0 + gamma * 10.0)


def test_sample_process_copies_obs_and_action():
    frames = _frames([0.0, 0.0], [1.0, 2.0])
    samples = sample_process(frames, 0.0, 0.99, 0.95)
    assert [s.action for s in samples] == [0, 1]
    assert samples[0].log_prob == np.float32(-0.5) and samples[1].value == np.float32(2.0)


# --- SampleData <-> numpy ----------------------------------------------------------------------

def _random_sample(rng) -> SampleData:
    def f32(shape):  # random bit patterns of finite float32 values, signs and tiny values included
        return (rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 30, shape)).astype(np.float32)
    return SampleData(map=f32(layout.MAP_SHAPE), state=f32((layout.STATE_DIM,)),
                      legal=rng.integers(0, 2, 16).astype(np.float32), action=int(rng.integers(0, 16)),
                      log_prob=np.float32(f32(())), value=np.float32(f32(())),
                      advantage=np.float32(f32(())), ret=np.float32(f32(())))


def _assert_bit_identical(a: SampleData, b: SampleData):
    for name in ("map", "state", "legal", "log_prob", "value", "advantage", "ret"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert x.dtype == y.dtype == np.float32, name
        assert x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert a.action == b.action and type(b.action) is int


def test_sample_numpy_round_trip_is_bit_identical():
    rng = np.random.default_rng(1)
    for _ in range(20):
        sample = _random_sample(rng)
        row = SampleData2NumpyData(sample)
        assert row.shape == (SAMPLE_DIM,) and row.dtype == np.float32
        back = NumpyData2SampleData(row)
        _assert_bit_identical(sample, back)
        assert SampleData2NumpyData(back).tobytes() == row.tobytes()


def test_batched_round_trip_and_views():
    rng = np.random.default_rng(2)
    samples = [_random_sample(rng) for _ in range(5)]
    rows = samples_to_numpy(samples)
    assert rows.shape == (5, SAMPLE_DIM)
    for a, b in zip(samples, numpy_to_samples(rows)):
        _assert_bit_identical(a, b)
    batch = numpy_to_batch(rows)
    assert batch["map"].shape == (5,) + layout.MAP_SHAPE and batch["action"].shape == (5,)
    assert np.shares_memory(batch["map"], rows)  # views, no copy
    np.testing.assert_array_equal(batch["state"][3], samples[3].state)


def test_numpy_to_sample_rejects_wrong_rows():
    with pytest.raises(ValueError, match="float32"):
        NumpyData2SampleData(np.zeros(SAMPLE_DIM, dtype=np.float64))
    with pytest.raises(ValueError, match=str(SAMPLE_DIM)):
        NumpyData2SampleData(np.zeros(SAMPLE_DIM - 1, dtype=np.float32))


# --- unpack ---------------------------------------------------------------------------------------

def test_step_view_reads_cells_counts_and_hero_state():
    memory = np.zeros((51, 51), np.float32)
    memory[25, 25] = 0.4
    obs = make_obs(end_cells=64.0, chest_cells={4: 12.0, 9: 30.0}, flash_ready=False, memory=memory)
    view = step_view(obs, make_score(chests=2, buff=1, flashes=1), make_env_info(pos=(1234.0, 5678.0), speed_up=True),
                     terminated=True)
    assert view.pos == (1234.0, 5678.0) and view.speed_up
    assert view.end_dist == pytest.approx(64.0)
    assert view.chest_dists == pytest.approx({4: 12.0, 9: 30.0})
    assert (view.chest_count, view.buff_count, view.flash_count) == (2, 1, 1)
    assert not view.flash_ready and view.memory == pytest.approx(0.4) and view.terminated
    no_end = step_view(make_obs(end_cells=None))
    assert no_end.end_dist is None and no_end.pos == pytest.approx((10000.0, 20000.0))


def test_unpack_dicts_are_plain():
    obs = unpack_obs(make_obs(chest_cells={5: 10.0}, buff_cells=None))
    assert obs["buff"] is None and list(obs["treasures"]) == [5] and obs["legal_act"] == [1, 1]
    assert "obstacle_map" not in obs and len(unpack_obs(make_obs(), with_maps=True)["obstacle_map"]) == 51
    assert unpack_score(make_score(chests=3))["treasure_count"] == 3
    info = unpack_env_info(make_env_info(pos=(1.0, 2.0)))
    assert info["hero"]["pos"] == (1.0, 2.0) and info["game"]["pos"] == (1.0, 2.0)


# --- curriculum -----------------------------------------------------------------------------------

def _counts(cfg, n=400, episode=0, env_step=0, seed=0):
    sampler = CurriculumSampler(cfg, seed=seed)
    return [len(sampler.sample(episode, env_step)["diy"]["treasure_id"]) for _ in range(n)]


def test_curriculum_fixed_gives_valid_usr_conf():
    sampler = CurriculumSampler(CurriculumConfig(chest_num=5, max_step=700), seed=3)
    for _ in range(50):
        diy = sampler.sample()["diy"]
        assert (diy["start"], diy["end"], diy["max_step"], diy["treasure_random"]) == (2, 1, 700, 0)
        assert len(diy["treasure_id"]) == 5 == diy["treasure_num"] and len(set(diy["treasure_id"])) == 5
        assert not {1, 2} & set(diy["treasure_id"])


def test_curriculum_uniform_and_normal_stay_in_range():
    uniform = _counts(CurriculumConfig(chest_mode="uniform", chest_low=2, chest_high=4))
    assert set(uniform) == {2, 3, 4}
    normal = _counts(CurriculumConfig(chest_mode="normal", chest_mean=12.0, chest_std=4.0))
    assert min(normal) >= 0 and max(normal) == 13  # clipped at the top
    assert 9 < np.mean(normal) < 12


def test_curriculum_staged_switches_by_episode_and_env_step():
    cfg = CurriculumConfig(chest_mode="staged", stages=[
        CurriculumStage(until_episode=10, chest_num=0),
        CurriculumStage(until_env_step=5000, chest_num=3),
        CurriculumStage(chest_mode="uniform", chest_low=6, chest_high=7),
    ])
    assert set(_counts(cfg, 20, episode=9, env_step=99999)) == {0}
    assert set(_counts(cfg, 20, episode=10, env_step=4999)) == {3}
    assert set(_counts(cfg, 50, episode=10, env_step=5000)) == {6, 7}


def test_curriculum_random_positions_are_distinct_and_seeded():
    cfg = CurriculumConfig(start_mode="random", end_mode="random", start_ids=[3, 4], end_ids=[4, 5], chest_num=13)
    s1, s2 = CurriculumSampler(cfg, seed=7), CurriculumSampler(cfg, seed=7)
    draws = [s1.sample()["diy"] for _ in range(100)]
    assert draws == [s2.sample()["diy"] for _ in range(100)]
    for d in draws:
        assert d["start"] in (3, 4) and d["end"] in (4, 5) and d["start"] != d["end"]
        assert d["start"] not in d["treasure_id"] and d["end"] not in d["treasure_id"]
        assert len(d["treasure_id"]) == 13
    assert len({(d["start"], d["end"]) for d in draws}) == 3


@pytest.mark.parametrize("kwargs, message", [
    (dict(chest_num=14), "chest_num"),
    (dict(start=1, end=1), "start != end"),
    (dict(chest_mode="staged"), "stages"),
    (dict(chest_mode="staged", stages=[CurriculumStage(), CurriculumStage()]), "stages\\[0\\]"),
    (dict(chest_ids=[0, 3]), "chest_ids"),
])
def test_curriculum_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CurriculumConfig(**kwargs).validate()


# --- the package's own constants and imports -------------------------------------------------------

def test_feature_constants_are_the_simulators():
    import realm.constants as game
    from feature import constants as mine
    from realm.env import UNIT_VECTORS
    from realm.maps import cell_of

    for name in ("CELL_WIDTH", "ORIGIN_X", "ORIGIN_Z", "WORLD_SIZE", "NUM_POSITIONS", "NUM_TREASURE_SLOTS", "STEP_LENGTH",
                 "BUFF_STEP_LENGTH", "FLASH_DISTANCE", "TALENT_TYPE_SUPER_FLASH", "NUM_ACTIONS", "DEFAULT_MAX_STEP",
                 "VIEW_SIZE", "VIEW_RADIUS", "GRID_DISTANCE_SCALE"):
        assert getattr(mine, name) == getattr(game, name), name
    assert mine.UNIT_VECTORS == UNIT_VECTORS
    for point in ((0.0, 0.0), (-2250.0, -5250.0), (31999.9, 12345.6), (-9999.0, 70000.0)):
        assert mine.cell_of(*point) == cell_of(*point)


def test_null_is_read_from_the_protocols_own_fields():
    from feature.constants import is_null

    obs = make_obs(chest_cells={5: 10.0}, buff_cells=None)
    assert not is_null(obs.feature.treasure_pos[4]) and is_null(obs.feature.buff_pos)
    assert all(is_null(r) == r.is_null for r in obs.feature.treasure_pos)


REGISTRY_CHECK = """
import importlib, sys
definition = importlib.import_module(sys.argv[1])
from kaiwu_agent.agent.protocol import protocol
names = ("ObsData", "ActData", "SampleData", "observation_process", "action_process", "sample_process",
         "SampleData2NumpyData", "NumpyData2SampleData")
missing = [n for n in names if getattr(protocol, n) is not getattr(definition, n)]
assert not missing, missing
"""


@pytest.mark.parametrize("module", ["feature.definition", "feature.dqn_definition"])
def test_data_classes_are_the_platforms_create_cls_and_registered(module):
    """Importing a package's definition registers its classes and functions under the platform's
    names (in a fresh process: the registry is per process, the last package imported wins)."""
    import subprocess
    import sys
    from pathlib import Path

    with pytest.raises(AttributeError):
        ObsData(mapp=1)
    result = subprocess.run([sys.executable, "-c", REGISTRY_CHECK, module], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
