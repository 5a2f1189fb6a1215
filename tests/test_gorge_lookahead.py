"""gorge_chase's look-ahead in exploit ([features_gorge] lookahead_guard,
feature.gorge_chase.lookahead): while a known monster is near, exploit acts within the moves and
flashes that a play-out over the explored map against the monsters' rule finds best; training's
samples keep the features' own mask. On the real simulator."""
from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np

from feature.gorge_chase.constants import NUM_MOVES
from feature.gorge_chase.layout import legal_mask
from feature.gorge_chase.observation import GorgeView, exploit_legal
from realm import make_env

CONF = {"env_conf": {"map": [11], "map_random": False, "treasure_count": 4, "buff_count": 1, "buff_cooldown": 200,
                     "talent_cooldown": 100, "monster_interval": 30, "monster_speedup": 150, "max_step": 300}}
GUARD = SimpleNamespace(features_gorge=SimpleNamespace(lookahead_guard=True))


def _play(seed: int, guard: bool) -> tuple[int, int]:
    """(steps survived, steps where the look-ahead narrowed the mask) of a random player over
    the open moves and flashes."""
    env = make_env(protocol="gorge", seed=seed)
    view = GorgeView(global_info=True)
    env_obs = env.reset(CONF)
    memory, _ = view.reset(env_obs)
    rnd, narrowed = np.random.default_rng(seed), 0
    while True:
        mask = legal_mask(memory)
        if guard:
            guarded = exploit_legal(memory, mask, GUARD)
            narrowed += int(guarded.sum() < mask.sum())
            assert guarded.sum() >= 1 and np.all(guarded <= mask)  # a subset, never empty
            mask = guarded
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(mask[:2 * NUM_MOVES]))))
        if env_obs["terminated"] or env_obs["truncated"]:
            return env_obs["observation"]["env_info"]["step_no"], narrowed
        memory, _ = view.step(env_obs)


def test_a_random_player_within_the_look_aheads_mask_lives_several_times_longer():
    """Seeds 0..5 (measured): a random player lives 1-32 steps (mean 17.8), within the
    look-ahead's mask 47-287 (mean 189.3, 10.6 times as long)."""
    free = [_play(seed, False)[0] for seed in range(6)]
    guarded = [_play(seed, True) for seed in range(6)]
    assert all(narrowed > 0 for _, narrowed in guarded)
    assert np.mean([steps for steps, _ in guarded]) > 4 * np.mean(free), (free, guarded)


def test_the_mask_is_left_alone_without_the_switch_or_a_monster_known():
    """extra_info withheld and no monster in view (the frame's monsters marked out of view, as a
    far one is served): the look-ahead has nothing to play out."""
    env = make_env(protocol="gorge", seed=0)
    env_obs = env.reset(CONF)
    view = GorgeView(global_info=False)
    memory, _ = view.reset(env_obs)
    mask = legal_mask(memory)
    off = SimpleNamespace(features_gorge=SimpleNamespace(lookahead_guard=False))
    assert exploit_legal(memory, mask, off) is mask
    assert exploit_legal(memory, mask, GUARD).sum() < mask.sum()  # monster 1 starts in view, near

    far = copy.deepcopy(env_obs)
    for monster in far["observation"]["frame_state"]["monsters"]:
        monster["is_in_view"] = 0
    memory, _ = GorgeView(global_info=False).reset(far)
    assert not any(slot.known for slot in memory.monsters)
    mask = legal_mask(memory)
    assert np.array_equal(exploit_legal(memory, mask, GUARD), mask)


def test_the_agents_exploit_acts_within_the_look_ahead_and_its_features_keep_their_mask():
    """The package's exploit on the raw env_obs (the platform's evaluation) narrows the mask;
    observation_process (what training's samples hold) does not."""
    from agent.gorge_chase.ppo_agent import Agent

    from feature.gorge_chase.observation import FeatureConfig

    assert FeatureConfig().lookahead_guard  # on by default
    agent = Agent()
    # this process's settings are whatever a run in the same worker left: exploit's look-ahead on,
    # training's own mask without it, on the agent's own copy
    agent.settings = copy.deepcopy(agent.settings)
    agent.settings.features_gorge.lookahead_guard, agent.settings.features_gorge.lookahead_guard_training = True, False
    env = make_env(protocol="gorge", seed=3)
    env_obs, checked, narrowed = env.reset(CONF), 0, 0
    twin = GorgeView(**agent.settings.features_gorge.view_options())  # the same episode's memory, kept apart
    memory, _ = twin.reset(env_obs)
    while not (env_obs["terminated"] or env_obs["truncated"]) and checked < 200:
        features_mask = legal_mask(memory)
        allowed = exploit_legal(memory, features_mask, agent.settings)
        act = agent.exploit(env_obs)
        assert allowed[act] == 1, (memory.step_no, act, allowed)
        obs_data, _ = agent.observation_process(env_obs)
        assert np.array_equal(obs_data.legal, features_mask)
        narrowed += int(allowed.sum() < features_mask.sum())
        checked += 1
        _, env_obs = env.step(act)
        memory, _ = twin.step(env_obs)
    assert narrowed > 0


def test_with_the_training_switch_the_features_mask_is_the_look_aheads_and_exploit_adds_nothing():
    """[features_gorge] lookahead_guard_training: the episode loops' view (view_options) narrows
    the mask observation_process makes, so training's samples hold what the policy sampled
    within; it is the mask exploit would have made of the features' own, and exploit leaves it."""
    from feature.gorge_chase.observation import FeatureConfig, observation_process

    options = FeatureConfig(lookahead_guard_training=True).view_options()
    assert options["lookahead_guard"] is True and FeatureConfig().view_options()["lookahead_guard"] is False
    env = make_env(protocol="gorge", seed=3)
    env_obs = env.reset(CONF)
    trained, plain = GorgeView(**options), GorgeView(global_info=True)
    memory, _ = trained.reset(env_obs)
    twin, _ = plain.reset(env_obs)
    rnd, narrowed, steps = np.random.default_rng(3), 0, 0
    while not (env_obs["terminated"] or env_obs["truncated"]) and steps < 200:
        mask = observation_process(memory).legal
        unguarded = legal_mask(twin)
        assert np.array_equal(mask, exploit_legal(twin, unguarded, GUARD)), memory.step_no
        assert exploit_legal(memory, mask, GUARD) is mask
        narrowed += int(mask.sum() < unguarded.sum())
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(mask[:2 * NUM_MOVES]))))
        memory, _ = trained.step(env_obs)
        twin, _ = plain.step(env_obs)
        steps += 1
    assert narrowed > 0


def test_play_outs_that_meet_share_their_answer_and_decide_as_each_alone(monkeypatch):
    """Search.survives keeps the steps lived from each state a play-out passes; a later play-out
    reaching one stops there. The path lengths from a hero's cell and the hero's flight from a
    cell are kept for every play-out of the step too (the Python definition, not its C twin). On an episode of a random player within the
    mask, the masks are those of play-outs each run alone, with nothing kept; some play-outs did
    meet, and some searches were read again."""
    from feature.gorge_chase import lookahead

    shared_answer = lookahead.Search.survives
    met, searches = [], {"made": 0, "read": 0}

    def alone(search, first, depth):
        search.outcomes, search.levels, search.flights = {}, {}, {}
        return shared_answer(search, first, depth)

    def counting(search, first, depth):
        before = len(search.outcomes)
        lived = shared_answer(search, first, depth)
        # alone, a play-out keeps one state a step from its second on: fewer where it met one kept
        shared = not search.step < search.interval <= search.step + depth
        met.append(shared and len(search.outcomes) - before < (lived if lived < depth else depth - 1))
        return lived

    move_monsters = lookahead.Search._move_monsters

    def counting_moves(search, monsters, hero):
        searches["read" if hero in search.levels else "made"] += 1
        return move_monsters(search, monsters, hero)

    monkeypatch.setattr(lookahead.Search, "_move_monsters", counting_moves)
    monkeypatch.setattr(lookahead, "guard", lambda *args: None)  # the Python definition (not its C twin)

    env = make_env(protocol="gorge", seed=5)
    env_obs = env.reset(CONF)
    memory, _ = (view := GorgeView(global_info=True)).reset(env_obs)
    rnd, steps = np.random.default_rng(5), 0
    while not (env_obs["terminated"] or env_obs["truncated"]) and steps < 150:
        mask = legal_mask(memory)
        monkeypatch.setattr(lookahead.Search, "survives", counting)
        kept = exploit_legal(memory, mask, GUARD)
        monkeypatch.setattr(lookahead.Search, "survives", alone)
        assert np.array_equal(kept, exploit_legal(memory, mask, GUARD)), memory.step_no
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(kept[:2 * NUM_MOVES]))))
        memory, _ = view.step(env_obs)
        steps += 1
    assert any(met) and searches["read"] > 0 and searches["made"] > 0
