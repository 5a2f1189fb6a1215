"""Prioritized replay on a real reverb table: items drawn in proportion to priority^alpha, the
importance-sampling weight each sample reaches Agent.learn with, and the priorities the learner
writes back when learn returns them (a tiny Kaiwu package written here, hosted by the real
KaiwuPackage / Trainee / Learner)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from workflow.transport import reverb_core as reverb
from workflow.transport.adder import ChunkAdder
from workflow.config import FrameworkConfig, load_config
from workflow.transport.model_pool import ModelPoolReader
from workflow.transport.replay import SAMPLE_TABLE, importance_weights, start_server
from workflow.checkpoints.runs import resolve_run
from workflow.transport.sampler import BatchSampler
from workflow import platforms

ALPHA, BETA = 0.6, 0.4
PRIORITIES = [1.0, 2.0, 3.0, 4.0]

TINY_PACKAGE = {
    "conf/configure_app.toml": '[app]\nalgo = "tiny"\n',
    "tiny/__init__.py": "",
    "tiny/config.py": "class Config:\n    SAMPLE_DIM = 2\n",
    "tiny/feature/__init__.py": "",
    "tiny/feature/definition.py": '''
import numpy as np
from kaiwu_agent.utils.common_func import attached, create_cls

SampleData = create_cls("SampleData", x=None, tag=None)

@attached
def SampleData2NumpyData(sample):
    return np.array([sample.x, sample.tag], dtype=np.float32)

@attached
def NumpyData2SampleData(row):
    return SampleData(x=float(row[0]), tag=float(row[1]))
''',
    "tiny/algorithm/__init__.py": "",
    "tiny/algorithm/agent.py": '''
import json
from pathlib import Path
from kaiwu_agent.agent.base_agent import (BaseAgent, exploit_wrapper, learn_wrapper, load_model_wrapper,
                                          predict_wrapper, save_model_wrapper)
from kaiwu_agent.utils.common_func import attached

@attached
class Agent(BaseAgent):
    def __init__(self, agent_type="player", device=None, logger=None, monitor=None):
        super().__init__(agent_type, device, logger, monitor)
        self.seen = []  # (x, is_weight) of every sample learned

    @predict_wrapper
    def predict(self, list_obs_data):
        return []

    @exploit_wrapper
    def exploit(self, list_obs_data):
        return []

    @learn_wrapper
    def learn(self, list_sample_data):
        self.seen += [(s.x, getattr(s, "is_weight", None)) for s in list_sample_data]
        return {"loss": 0.5, "priority": [-10.0 * s.x for s in list_sample_data]}  # the learner takes |p|

    @save_model_wrapper
    def save_model(self, path=None, id="1"):
        Path(path, f"model.ckpt-{id}.json").write_text(json.dumps({"seen": len(self.seen)}))

    @load_model_wrapper
    def load_model(self, path=None, id="1"):
        json.loads(Path(path, f"model.ckpt-{id}.json").read_text())
''',
    "tiny/train_workflow.py": "def workflow(envs, agents, logger=None, monitor=None):\n    raise RuntimeError('not run here')\n",
}


def prioritized_app(**overrides) -> FrameworkConfig:
    return FrameworkConfig(**{"algorithm_on_policy_or_off_policy": "off-policy", "reverb_sampler": "reverb.selectors.Prioritized",
                              "reverb_remover": "reverb.selectors.Fifo", "replay_buffer_capacity": 8, "preload_ratio": 2.0,
                              "train_batch_size": 4, "priority_alpha": ALPHA, "priority_beta": BETA, **overrides})


def fill(client, priorities) -> None:
    adder = ChunkAdder(client, 1, 1000, lambda: False)
    rows = np.array([[float(i), 0.0] for i in range(len(priorities))], dtype=np.float32)
    adder.add(rows, model_version=0, priorities=priorities)
    adder.close()


def expected_probabilities() -> np.ndarray:
    p = np.asarray(PRIORITIES) ** ALPHA
    return p / p.sum()


def test_items_are_drawn_by_priority_to_the_alpha_with_exact_weights(tmp_path):
    app = prioritized_app()
    server = start_server(app, 0, str(tmp_path / "replay"))
    try:
        client = reverb.Client(f"127.0.0.1:{server.port}")
        fill(client, PRIORITIES)
        sampler = BatchSampler(client, 2)
        batch = sampler.take(20_000, timeout_s=60)
        sampler.close()
        ids = batch.rows[:, 0].astype(int)
        frequencies = np.bincount(ids, minlength=4) / len(ids)
        expected = expected_probabilities()
        assert np.abs(frequencies - expected).max() < 0.015, (frequencies, expected)
        assert np.allclose(batch.probabilities, expected[ids], rtol=1e-5) and set(batch.table_sizes) == {4}
        weights = importance_weights(batch.probabilities[:4], batch.table_sizes[:4], BETA)
        by_hand = (4 * expected[ids[:4]]) ** -BETA
        assert np.allclose(weights, by_hand / by_hand.max(), rtol=1e-6) and weights.max() == 1.0
    finally:
        server.stop()


def test_beta_anneals_linearly_to_one():
    app = prioritized_app(priority_beta_steps=100)
    assert [app.priority_beta_at(s) for s in (0, 50, 100, 400)] == pytest.approx([0.4, 0.7, 1.0, 1.0])
    assert prioritized_app().priority_beta_at(10_000) == BETA  # 0 steps: constant


def test_learner_hands_weights_to_learn_and_writes_its_priorities_back(tmp_path):
    from workflow.learner import Learner, RunCounters, make_trainee
    from workflow.metrics import MetricsWriter

    package = tmp_path / "pkg"
    for name, text in TINY_PACKAGE.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    overrides = [f'app.package="{package}"', 'app.algo="tiny"', f'app.run_dir="{tmp_path / "runs"}"', "app.envs_per_aisrv=1",
                 'app.algorithm_on_policy_or_off_policy="off-policy"', 'app.reverb_sampler="reverb.selectors.Prioritized"',
                 "app.replay_buffer_capacity=8", "app.preload_ratio=2.0", "app.train_batch_size=4",
                 f"app.priority_alpha={ALPHA}", f"app.priority_beta={BETA}", "app.priority_epsilon=0.25"]
    config = tmp_path / "package_run.toml"  # the defaults: a package's run reads none of the project agents' sections
    config.write_text("")
    cfg = load_config(config, overrides)
    paths = resolve_run(cfg.app, resume=False)
    paths.make_dirs()
    ctx = SimpleNamespace(config=cfg, paths=paths, resume=False, secret=None, post=lambda kind, payload: None)
    trainee = make_trainee(ctx, [])
    server = start_server(cfg.app, 0, str(paths.replay_ckpt))
    try:
        client = reverb.Client(f"127.0.0.1:{server.port}")
        fill(client, PRIORITIES)
        learner = Learner(ctx, client, trainee, RunCounters(), MetricsWriter(paths.metrics_csv, paths.tb))
        assert learner.train_once(client.server_info()[SAMPLE_TABLE])

        seen = trainee.agent.seen
        assert len(seen) == 4
        xs = np.array([x for x, _ in seen], dtype=int)
        by_hand = (4 * expected_probabilities()[xs]) ** -BETA
        assert np.allclose([w for _, w in seen], by_hand / by_hand.max(), rtol=1e-5)

        # the learned samples now have |-10 x| + epsilon; the others kept their first priority
        infos = {}
        for sample in client.sample(SAMPLE_TABLE, 400):
            infos[int(np.asarray(sample.data[2])[0, 0])] = float(sample.info.priority)
        for x, priority in infos.items():
            assert priority == pytest.approx(10.0 * x + 0.25 if x in xs else PRIORITIES[x]), (x, infos)
        assert learner.max_priority == pytest.approx(10.0 * xs.max() + 0.25)
        learner.publish()  # new samples on the aisrv enter with the largest priority written so far
        model = ModelPoolReader(client).fetch_if_new()
        assert model.counters["max_priority"] == pytest.approx(learner.max_priority)
        learner.writer.close()
    finally:
        server.stop()


def test_a_package_returning_the_wrong_number_of_priorities_is_named(tmp_path):
    from workflow.host.kaiwu_package import PackageError
    from workflow.host.trainee import Trainee

    class Package:
        algo, sample_dim, platform = "tiny", 2, platforms.PROJECT

        @staticmethod
        def protocol(name):
            return lambda row: SimpleNamespace(x=float(row[0]))

    class Agent:
        def learn(self, samples):
            return {"priority": [1.0]}

    trainee = Trainee(Package(), Agent(), None, 0, tmp_path)
    with pytest.raises(PackageError, match="1 priorities for 3 samples"):
        trainee.learn(np.zeros((3, 2), dtype=np.float32))
