"""RealmGymEnv: gymnasium's API checks, spaces, rewards, seeding and rendering."""
from __future__ import annotations

import math
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import realm
from realm.back_to_the_realm.env import UNIT_VECTORS
from realm.back_to_the_realm.gym_env import RealmGymEnv
from realm.back_to_the_realm.maps import cell_of

INFO_KEYS = {
    "frame_no", "step_no", "pos", "score", "total_score", "treasure_count", "buff_count", "talent_count",
    "speed_up", "flash_ready", "flash_cooldown", "buff_remain_time",
}


def make(**kwargs):
    return gymnasium.make(realm.GYM_ENV_ID, **kwargs)


def heading(env: RealmGymEnv, info: dict, target_id: int) -> int:
    """The move whose whole step stays clear of walls and lands nearest (BFS) to the target."""
    x, z = info["pos"]
    length = 1000 if info["speed_up"] else 700
    field = env.map.distance_fields[target_id]
    tx, tz = env.map.positions[target_id]
    best = None
    for d, (ux, uz) in enumerate(UNIT_VECTORS):
        cells = [cell_of(x + ux * length * k / 12, z + uz * length * k / 12) for k in range(13)]
        if all(env.map.is_passable_cell(xc, zc) for xc, zc in cells):
            key = (field[cells[-1][1], cells[-1][0]], math.hypot(tx - x - ux * length, tz - z - uz * length))
            best = min(best or (key, d), (key, d))
    return best[1]


def play_to_the_end(env: RealmGymEnv, usr_conf: dict, seed: int = 0):
    """Walk to every chest of the episode in id order, then to the end; returns (rewards, last info, ends)."""
    obs, info = env.reset(seed=seed, options={"usr_conf": usr_conf})
    rewards = []
    for target in [*env.episode.treasure_id, env.episode.end]:
        while target == env.episode.end or obs["treasure_pos"][target - 1, 0] != 0:  # direction 0: taken
            obs, reward, terminated, truncated, info = env.step(heading(env, info, target))
            rewards.append(reward)
            if terminated or truncated:
                return rewards, info, (terminated, truncated)
    raise AssertionError("unreachable: the loop ends with the episode")


@pytest.fixture
def official_env(official_map_paths):
    map_file, positions_file = official_map_paths
    return make(map_file=str(map_file), positions_file=str(positions_file)).unwrapped


# ---- registration and gymnasium's checker ------------------------------------------------------


def test_registered_id_makes_the_env():
    env = make(map_seed=0)
    assert isinstance(env.unwrapped, RealmGymEnv)
    assert env.action_space == gymnasium.spaces.Discrete(16)
    assert set(env.observation_space.spaces) == {
        "norm_pos", "grid_pos", "start_pos", "end_pos", "buff_pos", "treasure_pos",
        "obstacle_map", "memory_map", "treasure_map", "end_map", "legal_act",
    }
    env.close()


@pytest.mark.parametrize("where", ["generated", "official"])
def test_check_env_passes_without_warnings(where, request):
    if where == "official":
        map_file, positions_file = request.getfixturevalue("official_map_paths")
        kwargs = {"map_file": str(map_file), "positions_file": str(positions_file)}
    else:
        kwargs = {"map_seed": 3, "step_jitter": True}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = make(**kwargs)
        check_env(env.unwrapped)
        env.close()


def test_unknown_constructor_arguments_fail_early():
    with pytest.raises(TypeError, match="step_jitter"):
        RealmGymEnv(map_seed=0, step_jiter=True)
    with pytest.raises(ValueError, match="render_mode"):
        RealmGymEnv(map_seed=0, render_mode="human")
    with pytest.raises(realm.UsrConfError, match="start"):
        RealmGymEnv(map_seed=0, usr_conf={"diy": {"start": 99}})


# ---- observations and info -------------------------------------------------------------------------


def test_observations_and_infos_stay_valid_over_many_steps():
    """Random play with flashes and jitter through the passive checker of gymnasium.make: any
    out-of-space observation or wrong type would warn, and warnings are errors here."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = make(map_seed=1, step_jitter=True, flash_blocked="nearest")
        space = env.observation_space
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=5)
        assert space.contains(obs) and INFO_KEYS <= info.keys()
        seen_flash = False
        for _ in range(400):
            obs, reward, terminated, truncated, info = env.step(int(rng.integers(16)))
            assert space.contains(obs), {k: v for k, v in obs.items() if not space[k].contains(v)}
            assert INFO_KEYS <= info.keys() and "raw_obs" not in info and "env_info" not in info
            assert isinstance(reward, float) and type(terminated) is bool and type(truncated) is bool
            assert obs["legal_act"].tolist() == [1, int(info["flash_ready"])]
            seen_flash |= info["talent_count"] > 0
            if terminated or truncated:
                obs, info = env.reset()
        assert seen_flash


def test_observation_matches_the_protocol_fields(official_env):
    obs, info = official_env.reset(options={"usr_conf": {"diy": {"treasure_random": 0, "treasure_id": [4, 9]}}})
    feature = official_env.game.reset({"diy": {"treasure_random": 0, "treasure_id": [4, 9]}}).feature
    assert obs["grid_pos"].tolist() == [feature.grid_pos.x, feature.grid_pos.z] == [13, 15]  # (zc, xc)
    assert obs["norm_pos"].tolist() == pytest.approx([feature.norm_pos.x, feature.norm_pos.z])
    end = feature.end_pos
    assert obs["end_pos"].tolist() == pytest.approx([end.direction, end.l2_distance, end.path_distance, end.grid_distance])
    live = [i for i in range(15) if obs["treasure_pos"][i, 0] != 0]
    assert live == [3, 8]  # ids 4 and 9
    assert obs["treasure_pos"][0].tolist() == [0, 5, 5, 1]  # the null RelativePosition
    assert np.array_equal(obs["obstacle_map"].reshape(-1), list(feature.obstacle_map)) and obs["obstacle_map"].flags.writeable
    assert info["pos"] == tuple(official_env.map.positions[2]) and info["step_no"] == 0 and info["frame_no"] == 1


def test_info_reports_the_flash_and_the_buff(official_env):
    official_env.reset(options={"usr_conf": {"diy": {"treasure_random": 0, "treasure_id": []}}})
    _, _, _, _, info = official_env.step(8)  # flash East
    assert info["talent_count"] == 1 and not info["flash_ready"] and info["flash_cooldown"] > 0
    assert info["step_no"] == 1 and info["frame_no"] == 4
    assert info["buff_remain_time"] == 0 and info["speed_up"] is False


# ---- rewards ---------------------------------------------------------------------------------------------


def test_rewards_sum_to_the_final_score_when_the_end_is_reached():
    env = make(map_seed=2).unwrapped
    ids = [i for i in range(1, 16) if i not in (1, 2)]
    rewards, info, (terminated, truncated) = play_to_the_end(env, {"diy": {"treasure_random": 0, "treasure_id": ids[:3]}})
    assert terminated and not truncated
    assert info["treasure_count"] == 3
    expected = 150 + 0.2 * (2000 - info["step_no"]) + 300
    assert info["total_score"] == pytest.approx(expected)
    assert sum(rewards) == pytest.approx(info["total_score"])
    assert rewards.count(100.0) >= 1  # chests pay as they are taken, the rest comes at the end


def test_a_timeout_gives_back_the_chest_score(official_env):
    """total_score drops to 0 on a timeout, so the rewards sum to 0 and the last one is negative."""
    m = official_env.map
    chest = min((i for i in range(3, 16)), key=lambda i: m.distance_between(2, i))
    max_step = m.distance_between(2, chest) + 20
    obs, info = official_env.reset(options={"usr_conf": {"diy": {"treasure_random": 0, "treasure_id": [chest], "max_step": max_step}}})
    rewards, terminated, truncated = [], False, False
    while not (terminated or truncated):
        action = heading(official_env, info, chest) if info["treasure_count"] == 0 else 0
        obs, reward, terminated, truncated, info = official_env.step(action)
        rewards.append(reward)
    assert truncated and not terminated and len(rewards) == max_step
    assert info["treasure_count"] == 1 and 100.0 in rewards and rewards[-1] == -100.0
    assert sum(rewards) == 0.0 == info["total_score"]


# ---- seeding -----------------------------------------------------------------------------------------------


def _rollout(env, seed, steps=60):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for k in range(steps):
        obs, *_ = env.step((k * 5) % 16)
        out.append(obs)
    return out


def test_the_same_seed_replays_the_same_episode():
    env = make(map_seed=0, step_jitter=True).unwrapped
    first = _rollout(env, seed=11)
    chests = list(env.episode.treasure_id)
    second = _rollout(make(map_seed=0, step_jitter=True).unwrapped, seed=11)
    assert all(a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a) for a, b in zip(first, second))
    _rollout(env, seed=12)
    assert env.episode.treasure_id != chests  # the seed draws the random chests
    protocol = realm.make_env(map_seed=0)
    protocol.reset(seed=11)
    assert protocol.episode.treasure_id == chests  # the same episode as the protocol env's


def test_reset_options_and_default_usr_conf():
    env = RealmGymEnv(map_seed=0, usr_conf={"diy": {"start": 3, "end": 4, "treasure_random": 0, "treasure_id": [5]}})
    env.reset()
    assert (env.episode.start, env.episode.end, env.episode.treasure_id) == (3, 4, [5])
    env.reset(options={"usr_conf": {"diy": {"treasure_random": 0, "treasure_id": []}}})
    assert (env.episode.start, env.episode.treasure_id) == (2, [])
    env.reset(options={})
    assert env.episode.treasure_id == [5]  # an option lasts one episode
    with pytest.raises(ValueError, match="usr_conf"):
        env.reset(options={"usr_cnf": {}})


# ---- rendering ---------------------------------------------------------------------------------------------


def test_rgb_array_render_draws_the_hero_and_its_trail():
    env = make(map_seed=0, render_mode="rgb_array", render_scale=3)
    env.reset(seed=0)
    first = env.render()
    assert first.shape == (384, 384, 3) and first.dtype == np.uint8
    for _ in range(5):
        env.step(0)
    moved = env.render()
    assert not np.array_equal(first, moved)
    env.reset(seed=0)
    assert np.array_equal(env.render(), first)  # the trail belongs to one episode
    env.close()


def test_render_without_a_mode_warns():
    env = RealmGymEnv(map_seed=0)
    env.reset()
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


# ---- every game's gymnasium env ------------------------------------------------------------------------


#: gymnasium.make's arguments of a small env of each game (realm.gym_ids.GYM_ENVS)
GAME_ENV_KWARGS = {"back_to_the_realm": {"map_seed": 3}, "back_to_the_realm_v2": {"map_seed": 0, "seed": 1},
                   "gorge_chase": {"seed": 0}, "robot_vacuum": {"seed": 0}}


def test_every_game_of_the_simulators_has_a_registered_gymnasium_env():
    from realm.gym_ids import GYM_ENVS

    assert set(GYM_ENVS) == {env.GAME for env in realm.ENVS.values()} == set(GAME_ENV_KWARGS)
    for env_id, entry_point in GYM_ENVS.values():
        assert gymnasium.registry[env_id].entry_point == entry_point


@pytest.mark.parametrize("game", GAME_ENV_KWARGS)
def test_each_games_gymnasium_env_passes_the_checker_and_plays_random_episodes(game):
    from realm.gym_ids import GYM_ENVS

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the passive checker warns on an observation outside its space
        env = gymnasium.make(GYM_ENVS[game][0], **GAME_ENV_KWARGS[game])
        check_env(env.unwrapped, skip_render_check=True)
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=3)
        for _ in range(300):
            obs, reward, terminated, truncated, info = env.step(int(rng.integers(env.action_space.n)))
            assert env.observation_space.contains(obs) and isinstance(reward, float) and isinstance(info, dict)
            if terminated or truncated:
                obs, info = env.reset()
        env.close()


def v2_gym(**kwargs):
    from realm.gym_ids import BACK_TO_THE_REALM_V2_ID

    return gymnasium.make(BACK_TO_THE_REALM_V2_ID, **kwargs).unwrapped


def test_the_v2_env_reaches_the_end_with_rewards_summing_to_the_final_score():
    """The v2 planner's actions replayed through gymnasium: terminated at the end, and the rewards
    (chests as taken, the rest at the end) sum to the game's total_score."""
    from realm.back_to_the_realm_v2.reference import run_planner_v2
    from realm.back_to_the_realm_v2.usr_conf import default_usr_conf

    usr_conf = default_usr_conf("map_cherry")
    planned = run_planner_v2(realm.make_env(protocol="v2", seed=1), usr_conf, seed=7)
    assert planned.won and planned.chests > 0
    env = v2_gym(seed=1, usr_conf=usr_conf)
    obs, info = env.reset(seed=7)
    rewards = []
    for k, act in enumerate(planned.actions):
        obs, reward, terminated, truncated, info = env.step(act)
        rewards.append(reward)
        assert (terminated, truncated) == (k == len(planned.actions) - 1, False)
    assert info["total_score"] == pytest.approx(planned.total_score) == pytest.approx(sum(rewards))
    assert rewards.count(100.0) == planned.chests
    assert obs["progress"][0] == pytest.approx(len(planned.actions) / usr_conf["env_conf"]["map_cherry"]["max_step"])


def test_the_v2_env_times_out_with_its_view_and_organs_as_the_wire_has_them():
    from realm.back_to_the_realm_v2.constants import CELL_START
    from realm.back_to_the_realm_v2.usr_conf import default_usr_conf

    usr_conf = default_usr_conf("map_cherry")
    usr_conf["env_conf"]["map_cherry"]["max_step"] = 3
    env = v2_gym(seed=1, view_size=21)
    assert env.observation_space["map_info"].shape == (21, 21)
    obs, info = env.reset(seed=0, options={"usr_conf": usr_conf})
    wire = env.game.extra_info["frame_state"]
    assert obs["hero"][:2].tolist() == [wire["heroes"][0]["pos"]["x"], wire["heroes"][0]["pos"]["z"]]
    organs = wire["organs"]
    assert obs["organs"][:len(organs), 0].sum() == len(organs) and not obs["organs"][len(organs):].any()
    assert obs["organs"][:len(organs), 1].tolist() == [o["sub_type"] for o in organs]
    assert obs["map_info"][10, 10] == CELL_START and "map_info" not in info  # the hero stands on the start
    assert obs["map_info"].tolist() == [row["values"] for row in env.game.extra_info["game_info"]["map_info"]]
    for k in range(3):
        obs, reward, terminated, truncated, info = env.step(0)
    assert (terminated, truncated, info["total_score"]) == (False, True, 0.0)
    with pytest.raises(ValueError, match="usr_conf"):
        env.reset(options={"usr_cnf": {}})
