"""gorge_chase's features are what a trained checkpoint reads, so their numbers are fixed: seeded
episodes of the real simulator on the official maps (../shared), played by a greedy policy on the
features themselves (toward chests, away from monsters, flashing when one is close), must give
exactly the map tensors, state vectors, legal masks, reward views and shaped rewards recorded
here as hashes, with and without `global_info`. A faster implementation keeps these hashes.

The simulator's own stream is hashed too: when the features' hash differs, it says whether the
episodes themselves changed (a change of the simulator: then both are re-recorded from the
unchanged features with `record()`) or the features did."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from feature.gorge_chase.constants import DIRECTIONS, NUM_MOVES
from feature.gorge_chase.curriculum import CurriculumConfig
from feature.gorge_chase.layout import STATE_SLICES
from feature.gorge_chase.observation import GorgeView, observation_process
from feature.gorge_chase.reward import RewardConfig, reward_shaping, step_view
from realm import make_env
from tests.conftest import REPO_ROOT

GRIDS = REPO_ROOT.parent / "shared" / "kaiwu_gorge" / "map" / "grids"
CONF = CurriculumConfig(map=[1, 4, 7], map_random=False, treasure_count=10, buff_count=2, buff_cooldown=60,
                        talent_cooldown=50, monster_interval=40, monster_speedup=120, max_step=400)
EPISODES = 4
#: sha256 of (the simulator's env_obs stream, the features of both views), recorded from the
#: features as they were before their implementation was made faster.
SIMULATOR_HASH = "205e4156f3a734f2b88fd7cede6e426e84837f646fbef2c6fb0c2e012b9922da"
FEATURES_HASH = "2231250ddd05a9c3324b81c96ff489e902fdbb0d91a7663769d488e3e5c5a6ef"


def greedy(obs, rng: np.random.Generator) -> int:
    """An action from the features alone (10 % random legal): a flash away when a monster is next
    to the hero; near one, the open move gaining the most distance into open ground; else the move
    saving chest path steps, drawn toward a buff within 25 cells."""
    legal = np.flatnonzero(obs.legal)
    if rng.random() < 0.1:
        return int(rng.choice(legal))
    state = obs.state
    moves = state[STATE_SLICES["moves"]].reshape(NUM_MOVES, 3)
    flashes = state[STATE_SLICES["flashes"]].reshape(NUM_MOVES, 3)
    rooms = state[STATE_SLICES["rooms"]].reshape(2, NUM_MOVES, 3)
    closeness = state[STATE_SLICES["hero"]][5]
    if closeness >= 0.85 and obs.legal[NUM_MOVES:].any():
        score = np.where(obs.legal[NUM_MOVES:] > 0, flashes[:, 1] + rooms[1, :, 1] - rooms[1, :, 2], -np.inf)
        return NUM_MOVES + int(np.argmax(score))
    if closeness > 0.5:
        score = 8.0 * moves[:, 1] - 4.0 * moves[:, 2] + 2.0 * (rooms[0, :, 1] - rooms[0, :, 2])
    else:
        score = state[STATE_SLICES["chest_paths"]][2:].copy()
        buff = state[STATE_SLICES["items"]][8:13]  # known, unit (dx, dz), Chebyshev / 128, in view
        if buff[0] > 0 and buff[3] < 0.2:
            score += 3.0 * (np.asarray(DIRECTIONS, dtype=np.float32) @ buff[1:3])
    score = np.where(obs.legal[:NUM_MOVES] > 0, score + 0.01 * rng.random(NUM_MOVES), -np.inf)
    return int(np.argmax(score)) if np.isfinite(score).any() else int(rng.choice(legal))


def play() -> tuple[str, str, dict[str, int]]:
    """(simulator hash, features hash, what the episodes held: steps, chests, buffs, flashes,
    steps with both monsters) of the seeded episodes."""
    env = make_env(protocol="gorge", maps_folder=str(GRIDS), seed=7)
    rng = np.random.default_rng(7)
    sim, feats = hashlib.sha256(), hashlib.sha256()
    weights = RewardConfig()
    held = dict.fromkeys(("steps", "chests", "buffs", "flashes", "two_monsters"), 0)

    def features(view_memory, terminated=False, truncated=False):
        obs = observation_process(view_memory)
        for array in (obs.map, obs.state, obs.legal):
            feats.update(np.ascontiguousarray(array).tobytes())
        return obs, step_view(view_memory, terminated, truncated)

    for _ in range(EPISODES):
        env_obs = env.reset(CONF.usr_conf())
        sim.update(repr(env_obs["observation"]).encode())
        views = [GorgeView(global_info=True), GorgeView(global_info=False)]
        current = [features(view.reset(env_obs)[0]) for view in views]
        while True:
            action = greedy(current[0][0], rng)
            _, env_obs = env.step(action)
            sim.update(repr(env_obs["observation"]).encode())
            ended = (env_obs["terminated"], env_obs["truncated"])
            after = [features(view.step(env_obs)[0], *ended) for view in views]
            for (_, prev), (_, cur) in zip(current, after):
                total, terms = reward_shaping(prev, cur, action, weights)
                feats.update(repr((cur, total, sorted(terms.items()))).encode())
            current = after
            memory = views[0].memory
            held["steps"] += 1
            held["flashes"] += action >= NUM_MOVES
            held["two_monsters"] += all(m.present for m in memory.monsters)
            if any(ended):
                held["chests"] += memory.chest_count
                held["buffs"] += memory.buff_count
                break
    return sim.hexdigest(), feats.hexdigest(), held


@pytest.mark.skipif(not GRIDS.is_dir(), reason=f"the official gorge_chase maps are not at {GRIDS}")
def test_the_features_of_seeded_episodes_keep_their_recorded_values():
    sim, feats, held = play()
    # long episodes: chests, a buff, flashes, the second monster, the speed-up (step 120)
    assert held["steps"] > 400 and held["chests"] >= 5 and held["buffs"] >= 1 and held["flashes"] >= 5, held
    assert held["two_monsters"] > 200, held
    if feats != FEATURES_HASH:
        pytest.fail("the features' numbers changed on the same simulator episodes" if sim == SIMULATOR_HASH else
                    "the simulator's episodes changed (its hash too): if the features did not, re-record both "
                    "hashes (see the docstring)")


def record() -> None:
    """Prints the hashes to paste above (python -m tests.test_gorge_feature_values)."""
    sim, feats, held = play()
    print(f"{held}\nSIMULATOR_HASH = {sim!r}\nFEATURES_HASH = {feats!r}")


if __name__ == "__main__":
    record()
