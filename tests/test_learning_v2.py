"""The v2 PPO package (app = "back_to_the_realm_v2", algo = "ppo"): its episode protocol, features and reward
on the real v2 simulator, the local trainer, and a learning test on tasks/back_to_the_realm_v2.py's task."""
import copy

import numpy as np
import pytest

from episodes.protocol import V2, env_protocol
from episodes.runner import EpisodeRunner
from feature.back_to_the_realm_v2.constants import DIRECTIONS
from feature.back_to_the_realm_v2.curriculum import CurriculumConfig
from feature.back_to_the_realm_v2.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM, STATE_SLICES
from feature.back_to_the_realm_v2.observation import V2View, action_process, observation_process
from feature.back_to_the_realm_v2.reward import TERMS, reward_shaping, step_view
from realm import make_env
from realm.back_to_the_realm_v2 import constants as v2_constants
from tasks import back_to_the_realm_v2 as near_end_v2
from workflow.host.local_trainer import train_local


def test_the_features_numbers_are_the_simulators():
    import feature.back_to_the_realm_v2.constants as ours

    for name in ("GRID_SIZE", "VIEW_SIZE", "DIRECTIONS", "FLASH_CELLS", "MAX_TREASURES"):
        theirs = getattr(v2_constants, name)
        assert getattr(ours, "MAX_CHESTS" if name == "MAX_TREASURES" else name) == theirs, name
    assert ours.DIRECTION_INDEX == {name: d for d, name in enumerate(v2_constants.DIRECTION_NAMES)}
    assert ours.DISTANCE_BAND == {name: b for b, name in enumerate(v2_constants.DISTANCE_NAMES) if b}
    assert v2_constants.DISTANCE_BANDS["uniform20"][0] == ours.BAND_CELLS


def test_the_v2_protocol_is_named_by_both_v2_versions_and_steps_five_values():
    env = make_env(protocol=V2.name, seed=0)
    assert env_protocol(env, "v2-28") is env_protocol(env, "v2-24") is V2
    runner = EpisodeRunner([env], lambda obs: [type("A", (), {"action": 0})() for _ in obs], observation_process,
                           action_process, V2.name, translate=True, view=V2View)
    memory = runner.reset(0, near_end_v2.usr_conf())
    assert memory.hero == tuple(near_end_v2.START) and memory.end.pos == tuple(near_end_v2.END)
    obs_data = runner.obs_data(0)
    assert obs_data.map.shape == MAP_SHAPE and obs_data.state.shape == (STATE_DIM,)
    assert obs_data.legal.shape == (NUM_ACTIONS,)
    (t,) = runner.step()
    assert t.error is None and t.obs is memory and t.env_info["game_info"]["step_no"] == 1
    assert t.score.total_score == 0.0 and not t.ended


def test_the_memory_keeps_what_the_view_showed_and_masks_walls():
    env = make_env(protocol=V2.name, seed=0)
    view = V2View()
    memory, _ = view.reset(*env.reset(usr_conf=near_end_v2.usr_conf()))
    x, z = memory.hero
    for d, (dx, dz) in enumerate(DIRECTIONS):  # a move is legal exactly when the env would move the hero
        free = env.grid[z + dz, x + dx] and (not (dx and dz) or (env.grid[z, x + dx] and env.grid[z + dz, x]))
        assert memory.walk_blocked(d) == (not free), d
    seen_before = memory.seen.sum()
    for _ in range(6):
        _, obs, _, _, info = env.step(4)  # west: new ground comes into view
        memory, _ = view.step(obs, info)
    assert memory.seen.sum() > seen_before and memory.visits.max() > 0
    state = observation_process(memory).state
    end = state[STATE_SLICES["end"]]
    assert end[0] == 1.0 and end[1] == 1.0  # present, cell known (game_info reveals it while training)
    assert 0 < end[5] < 1.0  # a path length over the explored map


def test_the_exploit_guard_keeps_off_the_end_while_chests_are_live():
    from feature.back_to_the_realm_v2.curriculum import CurriculumConfig
    from feature.back_to_the_realm_v2.layout import end_guard, legal_mask

    env = make_env(protocol=V2.name, seed=0)
    env.reset(usr_conf=near_end_v2.usr_conf())
    x, z = near_end_v2.START
    d = next(d for d, (dx, dz) in enumerate(DIRECTIONS) if env.grid[z + dz, x + dx] and not (dx and dz))
    next_cell = [x + DIRECTIONS[d][0], z + DIRECTIONS[d][1]]

    def memory(chests: bool):
        conf = CurriculumConfig(start=[x, z], end=next_cell, end_random=False, obstacle_random=False,
                                **({} if chests else {"treasure_pos": [], "treasure_count": 0})).usr_conf()
        return V2View().reset(*env.reset(usr_conf=conf))[0]

    live = memory(chests=True)
    assert live.live_chests() and live.reaches_end(d) and not live.reaches_end((d + 4) % 8)
    mask = legal_mask(live)
    guarded = end_guard(live, mask)
    assert mask[d] == 1.0 and guarded[d] == 0.0
    assert (np.delete(guarded, d) == np.delete(mask, d)).all()  # nothing else changes
    done = memory(chests=False)  # no chest left: the end is the goal
    assert (end_guard(done, legal_mask(done)) == legal_mask(done)).all()
    only = np.zeros(NUM_ACTIONS, dtype=np.float32)
    only[d] = 1.0  # the end is the only move: kept
    assert (end_guard(live, only) == only).all()

    # [ppo] exploit_end_guard_patience: the guard lifts once that many steps passed without a chest
    assert end_guard(live, mask, patience=5)[d] == 0.0
    live.step_no = 5
    assert end_guard(live, mask, patience=5)[d] == 1.0 and end_guard(live, mask)[d] == 0.0  # 0: never lifts
    obs = copy.deepcopy(live.obs)  # a chest taken at step 6 starts the count again
    obs["frame_state"]["step_no"] = 6
    obs["score_info"]["treasure_collected_count"] = live.chest_count + 1
    live.update(obs, live.extra_info)
    assert live.last_chest_step == 6 and end_guard(live, mask, patience=5)[d] == 0.0
    live.step_no = 11
    assert end_guard(live, mask, patience=5)[d] == 1.0


def test_the_reward_terms_sum_and_a_win_scores_its_weight():
    cfg = CurriculumConfig()
    assert cfg.usr_conf()["env_conf"]["map_cherry"]["max_step"] == 2000
    from feature.back_to_the_realm_v2.reward import RewardConfig

    weights = RewardConfig()
    env = make_env(protocol=V2.name, seed=0)
    view = V2View()
    memory, _ = view.reset(*env.reset(usr_conf=near_end_v2.usr_conf()))
    prev = step_view(memory)
    _, obs, terminated, truncated, info = env.step(4)
    total, terms = reward_shaping(prev, step_view(view.step(obs, info)[0], terminated, truncated), 4, weights)
    assert set(terms) == set(TERMS) and total == pytest.approx(sum(terms.values()))
    assert terms["step"] == pytest.approx(weights.step) and terms["win"] == 0.0


def test_the_local_trainer_trains_the_v2_package():
    cfg = near_end_v2.near_end_v2_config(seed=0)
    result = train_local(cfg, max_updates=2)
    assert len(result.updates) == 2 and result.stats.env_steps > 0
    assert all(np.isfinite(v) for update in result.updates for v in update.values())


@pytest.mark.slow
def test_learns_to_reach_a_near_end_on_every_seed():
    """tasks/back_to_the_realm_v2.py's task (the end 30 moves away, out of view at the start, 100 steps),
    three seeds: each starts out lost and reaches 90 % wins within the budget of env steps, and
    its sampling policy wins on episodes it did not train on. Seeds 0, 1, 2 got there in 27 261,
    8 051 and 8 031 env steps (docs/BENCHMARKS.md, the v2 section), so the budget of 82 000
    (near_end_v2.BUDGET_ENV_STEPS) is three times the worst."""
    for seed in (0, 1, 2):
        result = near_end_v2.train_near_end_v2(near_end_v2.near_end_v2_config(seed))
        assert result.first_win_rate <= 0.5, f"seed {seed}: the task was not lost at the start"
        assert result.learned, f"seed {seed}: win rate {result.train_win_rate:.2f} after {result.env_steps} env steps"
        assert result.eval_win_rate >= 0.8, f"seed {seed}: eval win rate {result.eval_win_rate:.2f}"


@pytest.mark.slow
def test_a_broken_update_does_not_learn_within_the_budget():
    """The learning test can fail: with a learning rate of 1e-9 the policy stays the untrained one,
    on the seed whose working update reaches the target in 8 051 env steps, within 10 000."""
    result = near_end_v2.train_near_end_v2(near_end_v2.near_end_v2_config(1, learning_rate=1e-9),
                                           budget_env_steps=10_000)
    assert not result.learned and result.train_win_rate < 0.5
