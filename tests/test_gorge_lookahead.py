"""gorge_chase's look-ahead in exploit ([features_gorge] lookahead_guard,
feature.gorge_chase.lookahead): while a known monster is near, exploit acts within the moves and
flashes that a play-out over the explored map against the monsters' rule finds best; training's
samples keep the features' own mask. On the real simulator."""
from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

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


def _guarded_searches(monkeypatch, seed: int, steps: int, on_search) -> None:
    """A random player within the Python guard's mask for `steps` steps; `on_search(search, first,
    depth, lived)` sees each candidate's search."""
    from feature.gorge_chase import lookahead

    survives = lookahead.Search.survives

    def seen(search, first, depth):
        lived = survives(search, first, depth)
        on_search(search, first, depth, lived)
        return lived

    monkeypatch.setattr(lookahead.Search, "survives", seen)
    monkeypatch.setattr(lookahead, "guard", lambda *args: None)  # the Python definition (not its C twin)
    env = make_env(protocol="gorge", seed=seed)
    env_obs = env.reset(CONF)
    memory, _ = (view := GorgeView(global_info=True)).reset(env_obs)
    rnd = np.random.default_rng(seed)
    for _ in range(steps):
        kept = exploit_legal(memory, legal_mask(memory), GUARD)
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(kept[:2 * NUM_MOVES]))))
        if env_obs["terminated"] or env_obs["truncated"]:
            env_obs = env.reset(CONF)
            memory, _ = view.reset(env_obs)
        else:
            memory, _ = view.step(env_obs)


def test_the_search_over_the_heros_lines_lives_at_least_as_long_as_the_fleeing_play_out(monkeypatch):
    """Each candidate's search, against the same candidate's one fleeing line (a budget of no
    state past the first line): never shorter, and longer where the flight runs into a trap that
    another line escapes."""
    from feature.gorge_chase import lookahead

    pairs, plain = [], lookahead.Search.survives

    def compare(search, first, depth, lived):
        line = lookahead.Search(search.road, search.ground, search.monsters, search.step, search.interval,
                                search.speedup, search.buff_left, search.history, budget=0)
        pairs.append((lived, plain(line, first, depth), depth))

    _guarded_searches(monkeypatch, 5, 100, compare)
    assert all(lived >= alone for lived, alone, _ in pairs)
    assert sum(lived > alone for lived, alone, _ in pairs) >= 3, pairs
    assert any(lived < depth for lived, _, depth in pairs)  # some traps no line escapes


def test_a_kept_answer_is_the_best_line_from_its_state(monkeypatch):
    """Search.outcomes keeps a state's answer (the step, the hero's cell, each monster's cell,
    speed, last cell and axis) once its search ended within the budget, and later lines and
    candidates that meet the state read it. Checked against a search from that state with
    nothing kept and no budget: the most steps any line of the hero lives (play-outs 6 steps
    deep, so that the full search stays small; a budget of 3 states, so that searches stop at it
    and leave answers that are not kept)."""
    from feature.gorge_chase import lookahead

    monkeypatch.setattr(lookahead, "DEPTH", 6)
    monkeypatch.setattr(lookahead, "BUDGET", 3)
    checked, read = [], []
    expand = lookahead.Search._expand

    def counting(search, t, hero, monsters, history, depth, shared):
        before = search.expanded
        answer = expand(search, t, hero, monsters, history, depth, shared)
        # nothing expanded, yet neither caught (t - 1) nor at the end: a kept answer was read
        read.append(search.expanded == before and t <= answer[0] and t < depth)
        return answer

    monkeypatch.setattr(lookahead.Search, "_expand", counting)

    def best_line(search, t, hero, monsters, depth):
        """The most steps lived from the state after step t's moves, every line searched."""
        if t == depth:
            return depth
        fresh = lookahead.Search(search.road, search.ground, monsters, search.step, search.interval, search.speedup,
                                 search.buff_left, search.history)
        best = t
        for cell in fresh.moves(hero, 2 if search.buff_left - t > 0 else 1, [list(m) for m in monsters]):
            best = max(best, fresh._expand(t + 1, cell, [list(m) for m in monsters], {}, depth, False)[0])
        return best

    def check(search, first, depth, lived):
        kept_now = [(state, kept) for state, kept in search.outcomes.items() if state[0] >= 3]
        traps = [entry for entry in kept_now if entry[1] < depth][-3:]
        free = [entry for entry in kept_now if entry[1] == depth][-1:]
        for (t, hero, monsters), kept in traps * (len(checked) < 100) + free * (len(checked) < 40):
            monkeypatch.setattr(lookahead, "BUDGET", 10 ** 9)
            checked.append((kept, best_line(search, t, hero, [list(m) for m in monsters], depth)))
            monkeypatch.setattr(lookahead, "BUDGET", budget)

    budget = lookahead.BUDGET
    _guarded_searches(monkeypatch, 7, 200, check)
    assert len(checked) >= 30 and any(read)
    assert all(kept == best for kept, best in checked), [pair for pair in checked if pair[0] != pair[1]]
    assert any(best < 6 for _, best in checked), (len(checked), sum(read), checked[:20])  # some kept states are traps


def test_the_budget_is_a_features_gorge_key_that_reaches_the_search(tmp_path, monkeypatch):
    """[features_gorge] lookahead_budget: checked at load (the key and the range named), carried
    by the episode loops' view and the memory to each candidate's search, in Python and C alike."""
    from feature.gorge_chase import lookahead
    from feature.gorge_chase.observation import FeatureConfig
    from tests.conftest import REPO_ROOT
    from workflow.config import ConfigError, load_config

    run = tmp_path / "run.toml"
    for value, message in (("2001", r"\[features_gorge\] lookahead_budget must be an integer 0..2000"),
                           ("-1", r"\[features_gorge\] lookahead_budget must be an integer 0..2000"),
                           ("true", r"features_gorge.lookahead_budget: expected an integer"),
                           ("1.5", r"features_gorge.lookahead_budget: expected an integer")):
        run.write_text(f'include = ["{REPO_ROOT / "conf" / "gorge_chase.toml"}"]\n[features_gorge]\nlookahead_budget = {value}\n')
        with pytest.raises(ConfigError, match=message):
            load_config(run)
    run.write_text(f'include = ["{REPO_ROOT / "conf" / "gorge_chase.toml"}"]\n[features_gorge]\nlookahead_budget = 7\n')
    assert load_config(run).to_dict()["features_gorge"]["lookahead_budget"] == 7
    assert FeatureConfig().view_options()["lookahead_budget"] == lookahead.BUDGET

    budgets, rules = [], []
    survives, guard = lookahead.Search.survives, lookahead.guard

    def seen(search, first, depth):
        budgets.append(search.budget)
        return survives(search, first, depth)

    def seen_c(r, *args):
        rules.append(r.budget)
        return guard(r, *args)

    monkeypatch.setattr(lookahead.Search, "survives", seen)
    monkeypatch.setattr(lookahead, "guard", seen_c)
    env = make_env(protocol="gorge", seed=5)
    env_obs = env.reset(CONF)
    view = GorgeView(**FeatureConfig(lookahead_guard_training=True, lookahead_budget=7).view_options())
    memory, _ = view.reset(env_obs)
    rnd = np.random.default_rng(5)
    for _ in range(120):
        mask = legal_mask(memory)
        lookahead.guarded(memory, [float(v) for v in mask[:NUM_MOVES]],
                          [float(v) for v in mask[NUM_MOVES:2 * NUM_MOVES]], compiled=False)
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(mask[:2 * NUM_MOVES]))))
        if env_obs["terminated"] or env_obs["truncated"]:
            break
        memory, _ = view.step(env_obs)
    assert budgets and set(budgets) == {7} and rules and set(rules) == {7}
