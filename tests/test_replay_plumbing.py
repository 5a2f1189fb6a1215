"""The reverb plumbing on a real server on 127.0.0.1, in one process: chunk items, telemetry,
the model pool, the rate limiters behind Kaiwu's training trigger, and checkpoints."""
from __future__ import annotations

import time

import numpy as np
import pytest

reverb = pytest.importorskip("reverb")

from agent.agent import Agent  # noqa: E402
from workflow.adder import ChunkAdder, TelemetrySender  # noqa: E402
from workflow.checkpoint import CheckpointManager  # noqa: E402
from workflow.config import load_config  # noqa: E402
from workflow.learner import TrainTrigger  # noqa: E402
from workflow.model_pool import ModelPoolReader, ModelPublisher  # noqa: E402
from workflow.replay import SAMPLE_TABLE, TELEMETRY_TABLE, can_sample, start_server  # noqa: E402
from workflow.runs import RunError, resolve_run  # noqa: E402
from workflow.sampler import BatchSampler, TelemetryReceiver  # noqa: E402

DIM = 6


def never_stop() -> bool:
    return False


@pytest.fixture
def server_for(tmp_path):
    servers = []

    def make(*overrides):
        app = load_config(overrides=list(overrides)).app
        server = start_server(app, 0, str(tmp_path / f"replay{len(servers)}"))
        servers.append(server)
        return app, reverb.Client(f"127.0.0.1:{server.port}")

    yield make
    for server in servers:
        server.stop()


def info(client, table=SAMPLE_TABLE):
    return client.server_info(timeout=5)[table]


def test_chunks_round_trip_with_padding_removed(server_for):
    app, client = server_for("app.replay_buffer_capacity=8", "app.train_batch_size=2")
    adder = ChunkAdder(client, chunk_len=4, wait_ms=200, on_wait=never_stop)
    rows = np.arange(6 * DIM, dtype=np.float32).reshape(6, DIM)
    adder.add(rows, model_version=7)  # 6 rows -> chunks of 4 and 2
    assert adder.items_sent == 2 and adder.rows_sent == 6
    sampler = BatchSampler(client, DIM)
    batch = sampler.take(2, timeout_s=5)
    assert sorted(batch.lengths.tolist()) == [2, 4] and batch.model_versions.tolist() == [7, 7]
    assert np.array_equal(np.sort(batch.rows, axis=0), np.sort(rows, axis=0))
    sampler.close()


def test_on_policy_queue_trains_each_chunk_once_and_bounds_producers(server_for):
    app, client = server_for("app.replay_buffer_capacity=3", "app.train_batch_size=2")
    stop_after = {"waits": 0}

    def give_up_after_two_waits() -> bool:
        stop_after["waits"] += 1
        return stop_after["waits"] >= 2

    adder = ChunkAdder(client, chunk_len=2, wait_ms=100, on_wait=give_up_after_two_waits)
    for version in range(3):
        adder.add(np.full((2, DIM), version, np.float32), version)
    from workflow.adder import Stopped
    with pytest.raises(Stopped):  # a fourth chunk waits: the learner is a full queue behind
        adder.add(np.zeros((2, DIM), np.float32), 3)
    trigger = TrainTrigger(app)
    assert trigger.ready(info(client))
    batch = BatchSampler(client, DIM).take(2, timeout_s=5)
    assert batch.model_versions.tolist() == [0, 1]  # Fifo: oldest first
    assert info(client).current_size == 2  # sampled chunks left the table (the 4th got in)
    assert can_sample(info(client), 2) and not can_sample(info(client), 3)


def test_off_policy_trigger_follows_preload_and_consume_ratio(server_for):
    app, client = server_for('app.algorithm_on_policy_or_off_policy="off-policy"', "app.learner_train_by_while_true=false",
                             "app.replay_buffer_capacity=8", "app.preload_ratio=2", "app.train_batch_size=2",
                             "app.production_consume_ratio=2", 'app.reverb_sampler="reverb.selectors.Uniform"')
    adder = ChunkAdder(client, chunk_len=1, wait_ms=200, on_wait=never_stop)
    trigger = TrainTrigger(app)
    for i in range(3):
        adder.add(np.zeros((1, DIM), np.float32), i)
    assert not trigger.ready(info(client))  # preload: capacity / preload_ratio = 4 chunks
    adder.add(np.zeros((1, DIM), np.float32), 3)
    sampler = BatchSampler(client, DIM)
    assert trigger.ready(info(client))
    trigger.trained(info(client))
    assert sampler.take(2, timeout_s=5) is not None
    assert not trigger.ready(info(client))  # batch / ratio = 1 new chunk needed
    adder.add(np.zeros((1, DIM), np.float32), 4)
    assert trigger.ready(info(client))
    sampler.close()


def test_take_times_out_instead_of_blocking(server_for):
    app, client = server_for()
    sampler = BatchSampler(client, DIM)
    start = time.monotonic()
    assert sampler.take(1, timeout_s=0.3) is None
    assert time.monotonic() - start < 2
    adder = ChunkAdder(client, chunk_len=2, wait_ms=200, on_wait=never_stop)
    adder.add(np.ones((2, DIM), np.float32), 1)
    batch = sampler.take(1, timeout_s=5)  # the pending request completes
    assert batch is not None and batch.model_versions.tolist() == [1]
    sampler.close()


def test_telemetry_round_trip_and_drain_never_waits(server_for):
    app, client = server_for()
    sender = TelemetrySender(client, "aisrv-3", wait_ms=200, on_wait=never_stop)
    receiver = TelemetryReceiver(client)
    assert receiver.drain(info(client, TELEMETRY_TABLE).current_size) == []
    sender.send("episode", {"total_score": 150.5, "reward/win": 10.0})
    sender.send("progress", {"env_steps": 64})
    records = receiver.drain(info(client, TELEMETRY_TABLE).current_size)
    assert [r["kind"] for r in records] == ["episode", "progress"]
    assert records[0]["source"] == "aisrv-3" and records[0]["values"]["reward/win"] == 10.0
    with pytest.raises(ValueError, match="exceeds"):
        sender.send("episode", {f"k{i}": i for i in range(2000)})


def test_model_pool_delivers_each_publication_once(server_for):
    app, client = server_for()
    reader = ModelPoolReader(client)
    assert reader.fetch_if_new() is None
    publisher = ModelPublisher(client)
    weights = {"a.weight": np.ones((2, 3), np.float32), "b.bias": np.arange(4, dtype=np.float64)}
    publisher.publish(weights, version=5, counters={"env_steps": 100, "episodes": 2})
    model = reader.fetch_if_new()
    assert model.version == 5 and model.counters == {"env_steps": 100, "episodes": 2}
    assert set(model.weights) == set(weights) and np.array_equal(model.weights["b.bias"], weights["b.bias"])
    assert time.time() - model.published_at < 60
    assert reader.fetch_if_new() is None
    publisher.publish(weights, version=6)
    assert reader.fetch_if_new().version == 6


def tiny_agent(seed=0) -> Agent:
    cfg = load_config(overrides=["model.channels=[4]", "model.kernel_sizes=[5]", "model.strides=[5]",
                                 "model.hidden_size=8"])
    return Agent(cfg.model, cfg.ppo, seed=seed)


def test_checkpoints_prune_keep_best_and_skip_a_corrupt_newest(tmp_path):
    agent = tiny_agent()
    ckpts = CheckpointManager(tmp_path / "ckpt", keep=2, keep_best=True, user_dir=tmp_path / "user", user_keep=1)
    for step, score in [(10, 500.0), (20, 100.0), (30, 200.0), (40, 300.0)]:
        agent.train_step = step
        ckpts.save(agent, step, {"counters": {"env_steps": step * 100}}, score)
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == [
        "model.ckpt-10.pkl", "model.ckpt-30.pkl", "model.ckpt-40.pkl"]  # newest 2 + best
    (tmp_path / "ckpt" / "model.ckpt-40.pkl").write_bytes(b"truncated")
    fresh = tiny_agent(seed=1)
    ckpt_id, extra = ckpts.restore_newest(fresh)
    assert ckpt_id == 30 and fresh.train_step == 30 and extra["counters"] == {"env_steps": 3000}
    for step in (1, 2):
        ckpts.save_user(agent, step)
    assert [p.name for p in (tmp_path / "user").iterdir()] == ["model.ckpt-2.pkl"]


def test_rng_states_are_restored(tmp_path):
    agent = tiny_agent()
    ckpts = CheckpointManager(tmp_path / "ckpt", keep=1, keep_best=False, user_dir=tmp_path / "u", user_keep=1)
    ckpts.save(agent, 1, {}, None)
    expected = (np.random.rand(), agent.shuffle_generator.get_state().clone())
    fresh = tiny_agent(seed=3)
    np.random.rand(5)
    ckpts.restore_newest(fresh)
    assert np.random.rand() == expected[0]
    assert bool((fresh.shuffle_generator.get_state() == expected[1]).all())


def test_run_naming_and_resume_selection(tmp_path):
    app = load_config(overrides=[f'app.run_dir="{tmp_path}"']).app
    with pytest.raises(RunError, match="no run with checkpoints"):
        resolve_run(app, resume=True)
    first = resolve_run(app, resume=False, now=0)
    (first.ckpt).mkdir(parents=True)
    (first.ckpt / "model.ckpt-3.pkl").write_bytes(b"x")
    second = resolve_run(app, resume=False, now=0)
    assert second.name != first.name  # same second: a suffix, never the same directory
    assert resolve_run(app, resume=True).root == first.root
    named = load_config(overrides=[f'app.run_dir="{tmp_path}"', f'app.run_name="{first.name}"']).app
    with pytest.raises(RunError, match="add --resume"):
        resolve_run(named, resume=False)
    assert resolve_run(named, resume=True).root == first.root


def test_learner_turns_telemetry_into_counters_metrics_and_user_saves(server_for, tmp_path):
    import csv
    from types import SimpleNamespace

    from workflow.learner import Learner, RunCounters
    from workflow.metrics import MetricsWriter
    from workflow.trainee import PPOTrainee

    cfg = load_config(overrides=["model.channels=[4]", "model.kernel_sizes=[5]", "model.strides=[5]",
                                 "model.hidden_size=8", "app.user_save_mode_max_count=2"])
    app, client = server_for()
    ctx = SimpleNamespace(config=cfg, resume=False, secret=None, post=lambda kind, payload: None)
    ckpts = CheckpointManager(tmp_path / "ckpt", keep=2, keep_best=True, user_dir=tmp_path / "user", user_keep=2)
    trainee = PPOTrainee(Agent(cfg.model, cfg.ppo, seed=0), ckpts, publish_freq=1)
    learner = Learner(ctx, client, trainee, RunCounters(), MetricsWriter(tmp_path / "metrics.csv", tmp_path / "tb"))
    learner.handle({"kind": "progress", "values": {"env_steps": 300, "episodes": 2, "env_errors": 1}})
    for score, win in ((150.0, 1.0), (0.0, 0.0)):
        learner.handle({"kind": "episode", "source": "aisrv-0", "values": {"total_score": score, "win": win,
                                                                         "reward/step": -1.5}})
    learner.handle({"kind": "model", "values": {"version": 4, "pickup_latency_s": 0.25}})
    learner.handle({"kind": "monitor", "source": "aisrv-0", "values": {"q_value": 2.5}})
    for step in (1, 2, 3):
        trainee.agent.train_step = step
        learner.handle({"kind": "save_model", "source": "aisrv-1", "values": {}})
    assert (learner.counters.env_steps, learner.counters.episodes, learner.counters.env_errors) == (300, 2, 1)
    assert learner.mean_recent_score() == 75.0
    assert sorted(p.name for p in (tmp_path / "user").iterdir()) == ["model.ckpt-2.pkl", "model.ckpt-3.pkl"]
    learner.maybe_report(force=True)
    learner.writer.close()
    with open(tmp_path / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    values = {(r["role"], r["key"]): float(r["value"]) for r in rows}
    assert values[("aisrv", "episode/reward/step")] == -1.5
    assert values[("aisrv", "model/pickup_latency_s")] == 0.25 and values[("aisrv", "aisrv/env_errors")] == 1
    assert values[("learner", "episode/win_rate_recent")] == 0.5
    assert values[("aisrv", "monitor/q_value")] == 2.5
    assert {r["env_steps"] for r in rows if r["role"] == "learner"} == {"300"}


def test_preload_starts_from_weights_with_fresh_counters(tmp_path):
    from workflow.checkpoint import preload

    trained = tiny_agent(seed=5)
    trained.train_step = trained.model_version = 40
    trained.save_model(tmp_path, 40)
    fresh = tiny_agent(seed=9)
    assert preload(fresh, str(tmp_path), "latest") == 40
    assert fresh.train_step == 0 and fresh.model_version == 0
    for key, value in trained.get_weights().items():
        assert np.array_equal(fresh.get_weights()[key], value), key


def test_a_failed_checkpoint_write_is_retried_and_only_repeated_failures_end_the_run(server_for, tmp_path, monkeypatch):
    from types import SimpleNamespace

    from workflow import ckpt_files
    from workflow import learner as learner_module
    from workflow.learner import CheckpointWriteError, Learner, RunCounters
    from workflow.metrics import MetricsWriter
    from workflow.trainee import PPOTrainee

    cfg = load_config(overrides=["model.channels=[4]", "model.kernel_sizes=[5]", "model.strides=[5]", "model.hidden_size=8"])
    app, client = server_for()
    ckpt_dir = tmp_path / "ckpt"
    trainee = PPOTrainee(Agent(cfg.model, cfg.ppo, seed=0),
                         CheckpointManager(ckpt_dir, keep=2, keep_best=False, user_dir=tmp_path / "user", user_keep=2), 1)
    ctx = SimpleNamespace(config=cfg, resume=False, secret=None, post=lambda kind, payload: None)
    learner = Learner(ctx, client, trainee, RunCounters(), MetricsWriter(tmp_path / "metrics.csv", tmp_path / "tb"))
    monkeypatch.setattr(learner_module, "CKPT_RETRY_FIRST_S", 0.0)
    ckpt_dir.write_text("the disk is not what it was")  # every write into ckpt_dir now fails (OSError)
    trainee.agent.train_step = 5
    assert learner.checkpoint() is False and learner.write_failures == 1 and learner.retry_due()
    ckpt_dir.unlink()  # the disk recovers: the retry writes and the failure count resets
    assert learner.checkpoint() is True and learner.write_failures == 0 and not learner.retry_due()
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [5]
    ckpt_dir.rename(tmp_path / "moved")
    ckpt_dir.write_text("broken again")
    for _ in range(learner_module.CKPT_WRITE_MAX_FAILURES - 1):
        assert learner.checkpoint() is False
    with pytest.raises(CheckpointWriteError, match="checkpoint writes in a row failed"):
        learner.checkpoint()
    learner.writer.close()


def test_bad_replay_items_and_telemetry_are_dropped_and_counted_never_fatal(server_for, tmp_path):
    """What anyone who reaches the port (or a faulty SampleData2NumpyData) can send: a row with
    NaN, a row of the wrong width, a record with a non-numeric field. The learner trains on the
    good rows only, counts the rest, and keeps going."""
    from types import SimpleNamespace

    from feature.definition import SAMPLE_DIM
    from workflow.learner import Learner, RunCounters
    from workflow.metrics import MetricsWriter
    from workflow.trainee import PPOTrainee

    cfg = load_config(overrides=["model.channels=[4]", "model.kernel_sizes=[5]", "model.strides=[5]",
                                 "model.hidden_size=8", "app.replay_buffer_capacity=8", "app.train_batch_size=4"])
    app, client = server_for("app.replay_buffer_capacity=8", "app.train_batch_size=4")
    trainee = PPOTrainee(tiny_agent(), CheckpointManager(tmp_path / "ckpt", keep=2, keep_best=False,
                                                         user_dir=tmp_path / "user", user_keep=2), 1)
    ctx = SimpleNamespace(config=cfg, resume=False, secret=None, post=lambda kind, payload: None)
    learner = Learner(ctx, client, trainee, RunCounters(), MetricsWriter(tmp_path / "metrics.csv", tmp_path / "tb"))
    good = np.zeros((2, SAMPLE_DIM), dtype=np.float32)
    nan = good.copy()
    nan[1, 5] = np.nan
    ChunkAdder(client, chunk_len=2, wait_ms=200, on_wait=never_stop).add(good, model_version=0)
    ChunkAdder(client, chunk_len=2, wait_ms=200, on_wait=never_stop).add(good, model_version=0)
    ChunkAdder(client, chunk_len=2, wait_ms=200, on_wait=never_stop).add(nan, model_version=0)
    ChunkAdder(client, chunk_len=2, wait_ms=200, on_wait=never_stop).add(np.zeros((2, 7), np.float32), model_version=0)
    telemetry = TelemetrySender(client, "intruder", 200, never_stop)
    telemetry.send("episode", {"total_score": "lots", "win": [1]})
    telemetry.send("progress", {"env_steps": "x"})
    telemetry.send("episode", {"total_score": 5.0, "win": 1.0})
    learner.drain_telemetry()
    assert learner.train_once(client.server_info()[SAMPLE_TABLE]) is True
    assert trainee.train_step == 1 and learner.counters.consumed_rows == 4  # the two good chunks
    assert learner.refused.counts == {"replay": 2, "telemetry": 2}
    assert learner.counters.episodes == 1 and learner.mean_recent_score() == 5.0
    learner.maybe_report(force=True)
    learner.writer.close()
    assert "refused/replay,2.0" in (tmp_path / "metrics.csv").read_text()


def test_a_minibatch_with_a_non_finite_loss_is_skipped_not_applied():
    import torch

    from feature.definition import SAMPLE_DIM, SAMPLE_SLICES

    agent = tiny_agent()
    before = {k: v.clone() for k, v in agent.model.state_dict().items()}
    rows = np.zeros((8, SAMPLE_DIM), dtype=np.float32)
    rows[:, SAMPLE_SLICES["ret"]] = 3e38  # finite, but its squared error overflows to inf
    stats = agent.learn(rows)
    assert stats["skipped_minibatches"] > 0 and stats["minibatches"] == 0
    assert all(torch.equal(before[k], v) for k, v in agent.model.state_dict().items())


def test_signed_runs_refuse_forged_weights_replay_items_and_telemetry(server_for):
    """Someone on the network writes straight into the tables: a forged model (version 1e9, zero
    weights), a replay item and a telemetry record, signed with the wrong key or not at all."""
    from workflow.signing import Signer

    app, client = server_for("app.replay_buffer_capacity=8", "app.train_batch_size=2")
    run, intruder = Signer("the run's secret"), Signer("a guess")
    weights = {"w": np.ones(3, np.float32)}
    ModelPublisher(client, run).publish(weights, version=1)
    reader = ModelPoolReader(client, run)
    assert reader.fetch_if_new().version == 1
    for forger in (intruder, Signer(None)):
        ModelPublisher(client, forger).publish({"w": np.zeros(3, np.float32)}, version=10**9)
        assert reader.fetch_if_new() is None
    assert reader.forged == 2
    ModelPublisher(client, run).publish(weights, version=2)
    assert reader.fetch_if_new().version == 2  # the run's own next publication is adopted again

    rows = np.ones((2, DIM), np.float32)
    ChunkAdder(client, chunk_len=2, wait_ms=200, on_wait=never_stop, signer=run).add(rows, model_version=3)
    ChunkAdder(client, chunk_len=2, wait_ms=200, on_wait=never_stop, signer=intruder).add(rows * 7, model_version=3)
    batch = BatchSampler(client, DIM, run).take(2, timeout_s=5)
    assert batch.dropped == {"signature": 1} and np.array_equal(batch.rows, rows)

    TelemetrySender(client, "aisrv-0", 200, never_stop, run).send("progress", {"env_steps": 5})
    TelemetrySender(client, "intruder", 200, never_stop, intruder).send("progress", {"env_steps": 10**9})
    receiver = TelemetryReceiver(client, signer=run)
    records = receiver.drain(info(client, TELEMETRY_TABLE).current_size)
    assert [r["values"] for r in records] == [{"env_steps": 5}] and receiver.refused == 1
