"""The platform's modules as a package uses them, checked against the official package in
../shared/kaiwu/ where it matters (feature widths, the Agent's decorated methods)."""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from kaiwu_agent.agent.base_agent import BaseAgent, learn_wrapper, load_model_wrapper, predict_wrapper, save_model_wrapper
from kaiwu_agent.agent.protocol import protocol
from kaiwu_agent.back_to_the_realm.dqn.feature_process import bump, one_hot_encoding, read_relative_position
from kaiwu_agent.utils.common_func import Frame, attached, create_cls
from kaiwudrl.common.config.config_control import CONFIG
from tests.conftest import REPO_ROOT

KAIWU_DIR = REPO_ROOT.parent / "shared" / "kaiwu"


def test_create_cls_is_keyword_only_and_rejects_unknown_names():
    Obs = create_cls("ObsDataTest", feature=None, legal_act=None)
    obs = Obs(feature=[1, 2])
    assert obs.feature == [1, 2] and obs.legal_act is None and obs.__dict__ == {"feature": [1, 2]}
    with pytest.raises(AttributeError, match="ObsDataTest object has no attribute 'featur'"):
        Obs(featur=1)
    with pytest.raises(TypeError):
        Obs([1, 2])
    assert protocol.ObsDataTest is Obs  # registered under its name


def test_attached_registers_and_returns_the_object_and_frame_is_a_bag():
    @attached
    def observation_process_test(raw_obs, env_info=None):
        return raw_obs

    assert protocol.observation_process_test is observation_process_test
    frame = Frame(obs=1, act=2, rew=0.5)
    assert frame.__dict__ == {"obs": 1, "act": 2, "rew": 0.5}
    Sample = create_cls("SampleDataTest", obs=None, act=None, rew=None)
    assert Sample(**frame.__dict__).rew == 0.5


def test_unregistered_standard_names_say_where_to_register():
    registered = vars(protocol).pop("SampleData2NumpyData", None)  # whatever earlier tests registered
    try:
        with pytest.raises(ImportError, match="feature/definition.py"):
            protocol.SampleData2NumpyData
        with pytest.raises(AttributeError):
            protocol.no_such_name
    finally:
        if registered is not None:
            protocol.SampleData2NumpyData = registered


class Recorder:
    """A framework handler that records the calls and runs the package's method."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, kind):
        def route(agent, method, *args, **kwargs):
            self.calls.append((kind, args, kwargs))
            return method(agent, *args, **kwargs)
        return route


class TinyAgent(BaseAgent):
    def __init__(self):  # like the official agents: no BaseAgent.__init__
        self.learned = []

    @predict_wrapper
    def predict(self, list_obs_data):
        return [x * 2 for x in list_obs_data]

    @learn_wrapper
    def learn(self, list_sample_data):
        self.learned.extend(list_sample_data)

    @save_model_wrapper
    def save_model(self, path=None, id="1"):
        return (path, id)

    @load_model_wrapper
    def load_model(self, path=None, id="1"):
        return (path, id)


def test_wrappers_run_the_method_without_a_framework_and_route_through_one():
    agent = TinyAgent()
    assert agent.predict([1, 2]) == [2, 4] and agent.save_model("p", 3) == ("p", 3)
    agent.learn([5])
    assert agent.learned == [5]
    agent.framework_handler = Recorder()
    assert agent.predict(list_obs_data=[3]) == [6]
    assert agent.load_model(id="latest") == (None, "latest")
    assert [c[0] for c in agent.framework_handler.calls] == ["predict", "load_model"]
    assert TinyAgent.learn.__wrapped__.__name__ == "learn" and TinyAgent.learn.kaiwu_wrapper == "learn"
    base = BaseAgent()
    assert (base.agent_type, base.device, base.framework_handler) == ("player", "cpu", None)


def test_feature_process_helpers():
    class P:  # a Position / RelativePosition stand-in
        def __init__(self, **kw):
            self.__dict__.update(kw)

    hot = one_hot_encoding(P(x=3, z=127))
    assert len(hot) == 256 and hot[3] == 1.0 and hot[128 + 127] == 1.0 and sum(hot) == 2.0
    with pytest.raises(IndexError):
        one_hot_encoding(P(x=128, z=0))
    rel = read_relative_position(P(direction=3, grid_distance=0.25))
    assert rel == [0, 0, 1, 0, 0, 0, 0, 0, 0.25]
    assert read_relative_position(P(direction=0, grid_distance=1.0)) == [0.0] * 8 + [1.0]
    assert bump(0, 0, 300, 400) and not bump(0, 0, 300, 401) and not bump(-1, -1, 0, 0)


def test_config_reads_missing_keys_as_empty_and_is_replaced_by_load():
    saved = CONFIG.to_dict()
    try:
        CONFIG.load({"algo": "dqn"})
        assert CONFIG.algo == "dqn" and CONFIG.no_such_key == ""
        CONFIG.load({"app": "back_to_the_realm"})
        assert CONFIG.algo == "" and CONFIG.app == "back_to_the_realm"
    finally:
        CONFIG.load(saved)


@pytest.mark.parametrize("module", ["kaiwudrl.server.learner.learner", "kaiwudrl.server.aisrv.aisrv",
                                    "kaiwudrl.common.utils.common_func"])
def test_the_platforms_process_tooling_is_refused_with_what_to_run(module):
    sys.modules.pop(module, None)
    with pytest.raises(ImportError, match=r"--package DIR --train-test"):
        importlib.import_module(module)


@pytest.fixture
def official_dqn(monkeypatch):
    """The official dqn package imported as the platform imports it."""
    if not (KAIWU_DIR / "dqn").is_dir():
        pytest.skip(f"the platform's package is not at {KAIWU_DIR}")
    saved = CONFIG.to_dict()
    CONFIG.load({"algo": "dqn", "app": "back_to_the_realm"})
    monkeypatch.syspath_prepend(str(KAIWU_DIR))
    for name in [m for m in sys.modules if m == "conf" or m.startswith(("dqn", "conf."))]:
        monkeypatch.delitem(sys.modules, name)
    yield importlib.import_module("dqn.feature.definition")
    CONFIG.load(saved)


def test_every_import_of_the_official_package_resolves(official_dqn):
    for name in ("dqn.config", "dqn.model.model", "dqn.algorithm.agent", "dqn.train_workflow", "conf.usr_conf",
                 "conf.back_to_the_realm_state", "conf.back_to_the_realm_action"):
        importlib.import_module(name)


def test_the_official_features_read_the_simulators_wire_at_their_declared_width(official_dqn):
    import realm

    env = realm.make_env(map_seed=0, seed=3)
    obs = env.reset(usr_conf={"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 8}})
    first = official_dqn.observation_process(obs)
    _, obs, _, _, _, env_info = env.step(1)
    data = official_dqn.observation_process(obs, env_info)
    assert len(first.feature) == len(data.feature) == 10808 and data.legal_act == [1, 1]
    frame = Frame(obs=first.feature, _obs=data.feature, obs_legal=first.legal_act, _obs_legal=data.legal_act,
                  act=3, rew=0.5, done=False, ret=0.5)
    sample = official_dqn.sample_process([frame])[0]
    row = official_dqn.SampleData2NumpyData(sample)
    assert row.shape == (21624,) and row.dtype == np.float32
    back = official_dqn.NumpyData2SampleData(row)
    assert np.array_equal(back.obs, row[:10808]) and float(back.act) == 3.0
