"""The project's episode loops on a 2025 (18.0.2) env: usr_conf as env_conf, observations read
as the 2024 ones (feature.back_to_the_realm.observation18), predict's (list, model_version) unpacked; the PPO
package trains on it through its own workflow with the real agent."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import episodes.protocol
import realm
from agent.back_to_the_realm.ppo_agent import Agent
from agent.back_to_the_realm.ppo_config import Settings
from agent.model import ModelConfig
from agent.ppo import PPOConfig
from episodes.back_to_the_realm.ppo_workflow import workflow
from episodes.protocol import act_list, env_kaiwu_version
from episodes.runner import EpisodeRunner
from feature.back_to_the_realm.curriculum import CurriculumConfig, CurriculumSampler, env_conf
from feature.back_to_the_realm.ppo_definition import SAMPLE_DIM, ActData, SampleData2NumpyData, action_process, observation_process
from feature.back_to_the_realm.layout import MAP_SHAPE, STATE_DIM
from feature.back_to_the_realm.observation18 import Realm18View
from kaiwudrl.common.config.config_control import CONFIG

TINY = ModelConfig(channels=[4], kernel_sizes=[5], strides=[4], hidden_size=16)


# --- usr_conf and predict's answer --------------------------------------------------------------

def test_a_2024_usr_conf_becomes_a_complete_env_conf():
    fixed = env_conf({"diy": {"start": 3, "end": 7, "treasure_random": 0, "treasure_num": 2, "treasure_id": [4, 9],
                              "max_step": 500, "talent_type": 1}})
    assert fixed == {"env_conf": {"start": 3, "end": 7, "treasure_random": False, "treasure_count": 2,
                                  "treasure_id": [4, 9], "talent_type": 1, "max_step": 500}}
    drawn = env_conf({"diy": {"treasure_num": 5}})["env_conf"]
    assert drawn == {"start": 2, "end": 1, "treasure_random": True, "treasure_count": 5, "treasure_id": [],
                     "talent_type": 1, "max_step": 2000}
    assert type(drawn["treasure_random"]) is bool
    assert env_conf(None) is None and env_conf({"env_conf": {"start": 2}}) == {"env_conf": {"start": 2}}
    with pytest.raises(ValueError, match="max_step"):
        env_conf({"diy": {"max_step": 2001}})
    with pytest.raises(ValueError, match="treasure_count"):
        env_conf({"diy": {"treasure_count": 3}})  # a 2025 key in a 2024 usr_conf


def test_every_curriculum_draw_is_a_valid_env_conf():
    from realm.back_to_the_realm.usr_conf import validate_env_conf

    sampler = CurriculumSampler(CurriculumConfig(chest_mode="uniform", start_mode="random", end_mode="random"), seed=3)
    for _ in range(50):
        validate_env_conf(env_conf(sampler.sample()))


def test_predicts_answer_is_unpacked_either_way():
    acts = [ActData(action=3, log_prob=0.0)]
    assert act_list(acts) is acts
    assert act_list((acts, 12)) == acts  # the 2025 aisrv's (list, model_version)


def test_the_protocol_is_the_callers_the_envs_or_the_packages(monkeypatch):
    class Says18:
        kaiwu_version = "18"

    assert env_kaiwu_version(object()) == "2024"
    assert env_kaiwu_version(Says18()) == "18" and env_kaiwu_version(object(), "18") == "18"
    monkeypatch.setattr(episodes.protocol, "KAIWU_VERSION", "18")  # what the 18.0.2 export writes
    assert env_kaiwu_version(object()) == "18"
    with pytest.raises(ValueError, match="allowed"):
        env_kaiwu_version(object(), "2025")


# --- the runner --------------------------------------------------------------------------------

def _scripted(actions, wrap):
    """An act() playing `actions` in turn; `wrap`: answer as the 2025 aisrv does."""
    it = iter(actions)

    def act(list_obs_data):
        out = [ActData(action=next(it), log_prob=0.0) for _ in list_obs_data]
        return (out, 5) if wrap else out
    return act


def test_the_runner_plays_the_same_episode_on_both_protocols():
    rng = np.random.default_rng(0)
    script = [int(a) for a in np.repeat(rng.integers(0, 8, size=40), 5)]
    diy = {"diy": {"start": 2, "end": 1, "treasure_random": 0, "treasure_id": [3, 5, 8], "max_step": 150,
                   "talent_type": 1}}
    results = {}
    for version, wrap in (("2024", False), ("18", True)):
        env = realm.make_env(map_seed=0, seed=1, **({"protocol": "18"} if version == "18" else {}))
        runner = EpisodeRunner([env], _scripted(script, wrap), observation_process, action_process, version,
                               translate=True, view=Realm18View, usr_conf_of=env_conf)  # the 2024 game's reading
        seen = []
        stats, actions = runner.play(diy, on_step=lambda t: seen.append(t))
        assert all(t.obs.feature.obstacle_map is not None and t.env_info.game_info is not None for t in seen)
        assert runner.obs_data(0).map.shape == MAP_SHAPE and runner.obs_data(0).state.shape == (STATE_DIM,)
        results[version] = (stats, actions)
    assert results["18"] == results["2024"]
    assert results["18"][0].steps == 150


def test_untranslated_a_2025_env_reaches_observation_process_as_it_comes():
    """A 2025 package's own features (its Agent's observation_process with a Preprocessor) read
    the reset's (obs, state) and each step's obs and state unchanged."""
    seen = []

    def raw_features(obs, env_info):
        seen.append((obs, env_info))
        return observation_process(*Realm18View().reset(obs[0] if isinstance(obs, tuple) else obs))

    env = realm.make_env(map_seed=0, seed=1, protocol="18")
    runner = EpisodeRunner([env], _scripted([0] * 5, True), raw_features, action_process, "18", usr_conf_of=env_conf)
    runner.reset(0, {"diy": {"treasure_num": 2, "max_step": 5}})
    runner.step()
    (reset_obs, none), (step_obs, state) = seen
    assert isinstance(reset_obs, tuple) and none is None
    assert hasattr(step_obs, "map_info") and type(state).__name__ == "State"


# --- the PPO package's own workflow ---------------------------------------------------------------

class StopLoop(BaseException):
    """Ends the workflow's endless loop, as the framework's stop does (not an Exception)."""


class Episodes:
    """An env that stops the workflow at the reset after `episodes` episodes, and counts steps."""

    def __init__(self, env, episodes: int):
        self.env, self.left, self.steps = env, episodes + 1, 0

    def reset(self, usr_conf=None):
        self.left -= 1
        if self.left == 0:
            raise StopLoop()
        return self.env.reset(usr_conf=usr_conf)

    def step(self, act):
        self.steps += 1
        return self.env.step(act)


def test_the_ppo_workflow_trains_on_a_2025_env(monkeypatch):
    """Full episodes on make_env(protocol="18") through episodes.back_to_the_realm.ppo_workflow with the real
    agent and no framework: every segment is a SAMPLE_DIM row, and learn updates the model."""
    monkeypatch.setattr(episodes.protocol, "KAIWU_VERSION", "18")  # an export for the 18.0.2 platform
    settings = Settings(model=TINY, ppo=PPOConfig(num_steps=16),
                        curriculum=CurriculumConfig(chest_num=3, max_step=40))
    CONFIG.load({"package_settings": settings})
    try:
        agent = Agent(agent_type="aisrv", seed=0)
        rows, learn = [], agent.learn

        def learn_and_keep(samples):
            rows.extend(SampleData2NumpyData(s) for s in samples)
            return learn(samples)

        agent.learn = learn_and_keep
        envs = [Episodes(realm.make_env(map_seed=0, seed=i, protocol="18"), episodes=2) for i in range(2)]
        reports = []

        class Monitor:
            def put_data(self, data):
                reports.extend(data.values())

        with pytest.raises(StopLoop):
            workflow(envs, [agent], logging.getLogger("test"), Monitor())
    finally:
        CONFIG.load({})
    assert envs[0].steps >= 2 * 1 and len(reports) >= 2  # whole episodes, reported
    assert all(r["chests_total"] == 3.0 for r in reports)
    assert rows and all(r.shape == (SAMPLE_DIM,) and r.dtype == np.float32 and np.isfinite(r).all() for r in rows)
    assert agent.train_step == len(rows) and agent.model_version == len(rows)  # the real PPO update ran


def test_the_agent_answers_the_platforms_2025_workflow_calls():
    """The official 2025 eval/exam workflows call agent.observation_process(obs, Preprocessor(),
    state) and agent.action_process(act_data[0]): the project's agent plays a whole episode so,
    and its ObsData are the runner's translated ones."""
    from feature.back_to_the_realm.observation18 import Preprocessor

    agent = Agent(agent_type="player", settings=Settings(model=TINY), seed=0)
    env = realm.make_env(map_seed=0, seed=4, protocol="18")
    usr_conf = env_conf({"diy": {"treasure_num": 3, "max_step": 60}})
    obs, state = env.reset(usr_conf=usr_conf, seed=4)
    preprocessor = Preprocessor()
    obs_data, remain_info = agent.observation_process(obs, preprocessor, state)
    translated = observation_process(*Realm18View().reset(obs))
    np.testing.assert_array_equal(obs_data.map, translated.map)
    np.testing.assert_array_equal(obs_data.state, translated.state)
    assert remain_info[0].feature.end_pos is not None
    done, steps = False, 0
    while not done:
        act_data = agent.exploit(list_obs_data=[obs_data])
        act = agent.action_process(act_data[0])
        assert type(act) is int and 0 <= act < 16
        frame_no, obs, score, terminated, truncated, state = env.step(act)
        obs_data, remain_info = agent.observation_process(obs, preprocessor, state)
        done, steps = terminated or truncated, steps + 1
    assert steps <= 60 and remain_info[1].game_info.step_no == steps
