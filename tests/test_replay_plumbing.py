"""The reverb plumbing on a real server on 127.0.0.1, in one process: chunk items, telemetry,
the model pool, the rate limiters behind Kaiwu's training trigger, and checkpoints."""
from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

reverb = pytest.importorskip("workflow.transport.reverb_core")  # dm-reverb's core, without TensorFlow

from agent.back_to_the_realm.ppo_agent import Agent  # noqa: E402
from workflow.checkpoints import ckpt_files  # noqa: E402
from workflow.transport.adder import ChunkAdder, TelemetrySender  # noqa: E402
from workflow.config import load_config  # noqa: E402
from workflow.learner import TrainTrigger  # noqa: E402
from workflow.transport.model_pool import ModelPoolReader, ModelPublisher  # noqa: E402
from workflow.transport.replay import SAMPLE_TABLE, TELEMETRY_TABLE, can_sample, start_server  # noqa: E402
from workflow.checkpoints.runs import RunError, resolve_run  # noqa: E402
from workflow.transport.sampler import BatchSampler, TelemetryReceiver  # noqa: E402
from fake_obs import rows_from

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
    from workflow.transport.stopped import Stopped
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


TINY_MODEL = ["model.channels=[4]", "model.kernel_sizes=[5]", "model.strides=[5]", "model.hidden_size=8"]


@pytest.fixture
def restore_platform_config():
    """Loading a package fills the process-wide CONFIG: leave it as the next test expects it."""
    from kaiwudrl.common.config.config_control import CONFIG

    saved = CONFIG.to_dict()
    yield
    CONFIG.load(saved)


@pytest.fixture
def learner_run(tmp_path, restore_platform_config):
    """`make(*overrides)`: a fresh run under tmp_path and its learner's trainee (the project's
    package), built by workflow.learner.make_trainee as the learner process builds it. Returns
    (ctx, trainee, learner_ref); `trainee_of(ctx)` builds another over the same run (a resume)."""
    from workflow.learner import make_trainee

    def make(*overrides):
        cfg = load_config(overrides=[*TINY_MODEL, f'app.run_dir="{tmp_path / "runs"}"', *overrides])
        paths = resolve_run(cfg.app, resume=False)
        ctx = SimpleNamespace(config=cfg, paths=paths, resume=False, secret=None, post=lambda kind, payload: None)
        learner_ref = []
        return ctx, make_trainee(ctx, learner_ref), learner_ref

    return make


def trainee_of(ctx, resume=True):
    from workflow.learner import make_trainee

    return make_trainee(SimpleNamespace(**{**vars(ctx), "resume": resume}), [])


def learner_of(ctx, client, trainee, learner_ref):
    from workflow.learner import Learner, RunCounters
    from workflow.metrics import MetricsWriter

    learner = Learner(ctx, client, trainee, RunCounters(), MetricsWriter(ctx.paths.metrics_csv, ctx.paths.tb))
    learner_ref.append(learner)  # the package's monitor writes through it, as in workflow.learner.main
    return learner


def weights(agent) -> dict:
    return {k: v.clone() for k, v in agent.model.state_dict().items()}


def same_weights(a: dict, b: dict) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def tiny_agent(seed=0) -> Agent:
    from agent.back_to_the_realm.ppo_config import Settings

    cfg = load_config(overrides=TINY_MODEL)
    return Agent(agent_type="learner", settings=Settings(model=cfg.model, ppo=cfg.ppo), seed=seed)


def checkpoint_files(ckpt_id: int) -> list[str]:
    """The files the project's agent writes for one checkpoint, sorted."""
    return [f"model.ckpt-{ckpt_id}.pkl", f"model.ckpt-{ckpt_id}.progress.json", f"model.ckpt-{ckpt_id}.train.pt"]


def test_checkpoints_prune_keep_best_and_skip_a_corrupt_newest(learner_run):
    ctx, trainee, _ = learner_run("app.max_ckpt_keep=2", "app.keep_best_ckpt=true", "app.user_save_mode_max_count=1")
    ckpt = ctx.paths.ckpt
    for step, score in [(10, 500.0), (20, 100.0), (30, 200.0), (40, 300.0)]:
        trainee.train_step = step
        trainee.checkpoint({"counters": {"env_steps": step * 100}}, score)
    assert sorted(p.name for p in ckpt.iterdir()) == [  # newest 2 + best, the run's counters beside them
        *checkpoint_files(10), *checkpoint_files(30), *checkpoint_files(40), "run_state.copy.json",
        "run_state.json"]
    (ckpt / "model.ckpt-40.pkl").write_bytes(b"truncated")
    assert resolve_run(ctx.config.app, resume=True).root == ctx.paths.root
    fresh = trainee_of(ctx)
    assert not same_weights(weights(fresh.agent), weights(trainee.agent))
    ckpt_id, extra = fresh.restore_newest()
    assert ckpt_id == 30 and fresh.train_step == 30 and extra["counters"] == {"env_steps": 3000}
    assert same_weights(weights(fresh.agent), weights(trainee.agent))
    for step in (1, 2):
        trainee.train_step = step
        trainee.save_user()
    user_dir = trainee.agent.framework_handler.user_dir
    assert user_dir.parent == ctx.paths.user_ckpt
    assert sorted(p.name for p in user_dir.iterdir()) == checkpoint_files(2)


def test_resume_restores_the_agents_counters_and_shuffle_rng_so_training_goes_on_identically(learner_run):
    """What the python/numpy RNG states in a checkpoint used to guarantee is now the agent's own
    training state (.train.pt): a resumed learner gives the same losses and weights as one that
    never stopped."""
    ctx, trainee, _ = learner_run("ppo.update_epochs=2", "ppo.num_minibatches=3", 'ppo.lr_schedule="linear"',
                                  "ppo.schedule_samples=100", "ppo.value_norm=true")
    batches = [rows_from(trainee.agent, n=24, seed=s) for s in (1, 2, 3)]
    trainee.learn(batches[0])
    trainee.checkpoint({"counters": {"env_steps": 24}}, None)
    shuffle_state = trainee.agent.shuffle_generator.get_state().clone()
    expected = [trainee.learn(rows) for rows in batches[1:]]

    fresh = trainee_of(ctx)
    assert fresh.restore_newest() == (1, {"counters": {"env_steps": 24}})
    agent = fresh.agent
    assert (fresh.train_step, agent.train_step, agent.samples_learned, agent.model_version) == (1, 1, 24, 1)
    assert bool((agent.shuffle_generator.get_state() == shuffle_state).all())
    assert [fresh.learn(rows) for rows in batches[1:]] == expected
    assert same_weights(weights(agent), weights(trainee.agent))


def test_the_pool_carries_the_weights_and_the_progress_record_not_the_training_state(learner_run, tmp_path):
    """An aisrv's agent loads what the pool carries: the weights and its counters (the curriculum's
    and epsilon's progress), without the optimizer moments only the learner needs."""
    ctx, trainee, _ = learner_run("app.model_pool_publish_freq=1")
    trainee.learn(rows_from(trainee.agent, n=24, seed=1))
    assert trainee.publish_due(trainee.train_step)
    item = trainee.pool_item()
    assert sorted(item) == ["model.ckpt-1.pkl", "model.ckpt-1.progress.json"]
    actor_dir = tmp_path / "actor"
    actor_dir.mkdir()
    for name, data in item.items():
        (actor_dir / name).write_bytes(data.tobytes())
    actor = tiny_agent(seed=7)
    actor.load_model(path=str(actor_dir), id=1)
    assert (actor.train_step, actor.samples_learned, actor.model_version) == (1, 24, 1)
    assert same_weights(weights(actor), weights(trainee.agent))
    assert not actor.optimizer.state_dict()["state"]


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


def test_learner_turns_telemetry_into_counters_metrics_and_user_saves(server_for, learner_run):
    import csv

    ctx, trainee, learner_ref = learner_run("app.user_save_mode_max_count=2")
    app, client = server_for()
    learner = learner_of(ctx, client, trainee, learner_ref)
    learner.handle({"kind": "progress", "values": {"env_steps": 300, "episodes": 2, "env_errors": 1}})
    for score, win in ((150.0, 1.0), (0.0, 0.0)):
        learner.handle({"kind": "episode", "source": "aisrv-0", "values": {"total_score": score, "win": win,
                                                                         "reward/step": -1.5}})
    learner.handle({"kind": "model", "values": {"version": 4, "pickup_latency_s": 0.25}})
    learner.handle({"kind": "monitor", "source": "aisrv-0", "values": {"q_value": 2.5}})
    assert trainee.agent.monitor.put_data({0: {"grad_scale": 0.5}})  # the package's own monitor on the learner
    for step in (1, 2, 3):
        trainee.train_step = step
        learner.handle({"kind": "save_model", "source": "aisrv-1", "values": {}})
    assert (learner.counters.env_steps, learner.counters.episodes, learner.counters.env_errors) == (300, 2, 1)
    assert learner.mean_recent_score() == 75.0
    user_dir = ctx.paths.user_ckpt / f"{ctx.config.app.app}_{trainee.package.algo}"
    assert sorted(p.name for p in user_dir.iterdir()) == checkpoint_files(2) + checkpoint_files(3)
    learner.maybe_report(force=True)
    learner.writer.close()
    with open(ctx.paths.metrics_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    values = {(r["role"], r["key"]): float(r["value"]) for r in rows}
    assert values[("aisrv", "episode/reward/step")] == -1.5
    assert values[("aisrv", "model/pickup_latency_s")] == 0.25 and values[("aisrv", "aisrv/env_errors")] == 1
    assert values[("learner", "episode/win_rate_recent")] == 0.5
    assert values[("aisrv", "monitor/q_value")] == 2.5
    assert values[("learner", "monitor/grad_scale")] == 0.5
    assert {r["env_steps"] for r in rows if r["role"] == "learner"} == {"300"}


def test_preload_starts_from_weights_with_fresh_counters(learner_run, tmp_path):
    """Kaiwu's preload_model: the other run's model (for the project's agent with its optimizer
    and schedule progress, docs/TRAINING.md); the new run's own counters start at 0 and its first
    checkpoint is model.ckpt-0."""
    _, trained, _ = learner_run()
    for seed in (1, 2):
        trained.learn(rows_from(trained.agent, seed=seed))
    trained.agent.save_model(path=str(tmp_path / "other_run"), id=40)
    ctx, fresh, _ = learner_run()
    assert not same_weights(weights(fresh.agent), weights(trained.agent))
    assert fresh.preload(str(tmp_path / "other_run"), "latest") == 40
    assert fresh.train_step == 0 and fresh.model_version == 0
    assert same_weights(weights(fresh.agent), weights(trained.agent))
    assert fresh.agent.samples_learned == trained.agent.samples_learned == 32
    fresh.checkpoint({"counters": {}}, None)
    assert [c.id for c in ckpt_files.list_checkpoints(ctx.paths.ckpt)] == [0]


def test_a_failed_checkpoint_write_is_retried_and_only_repeated_failures_end_the_run(server_for, learner_run,
                                                                                      tmp_path):
    from workflow.learner import CheckpointWriteError

    ctx, trainee, learner_ref = learner_run("app.max_ckpt_keep=2", "app.keep_best_ckpt=false", "app.dump_model_freq=1",
                                            "app.ckpt_write_retry_seconds=0.05", "app.ckpt_write_max_failures=3")
    app, client = server_for()
    learner = learner_of(ctx, client, trainee, learner_ref)
    ckpt_dir = ctx.paths.ckpt
    ckpt_dir.parent.mkdir(parents=True)
    ckpt_dir.write_text("the disk is not what it was")  # every write into ckpt_dir now fails (OSError)
    trainee.train_step = 5
    assert learner.checkpoint_due(5) and learner.checkpoint() is False and learner.write_failures == 1
    assert not learner.checkpoint_due(6)  # dump_model_freq came round, the retry is not due yet: no attempt
    time.sleep(0.06)
    assert learner.checkpoint_due(6)
    ckpt_dir.unlink()  # the disk recovers: the retry writes and the failure count resets
    assert learner.checkpoint() is True and learner.write_failures == 0 and not learner.retry_due()
    assert [c.id for c in ckpt_files.list_checkpoints(ckpt_dir)] == [5]
    ckpt_dir.rename(tmp_path / "moved")
    ckpt_dir.write_text("broken again")
    for _ in range(2):
        assert learner.checkpoint() is False
    with pytest.raises(CheckpointWriteError, match="3 checkpoint writes in a row failed"):
        learner.checkpoint()
    learner.writer.close()


def test_a_publication_whose_files_are_gone_is_skipped_and_training_goes_on(server_for, learner_run, tmp_path):
    """A package's publications are its checkpoint files (model_pool_publish_freq = 0): when the
    checkpoint directory goes away, a publication fails, is logged, and does not end the run."""
    ctx, trainee, learner_ref = learner_run("app.model_pool_publish_freq=0", "app.dump_model_freq=1")
    app, client = server_for()
    learner = learner_of(ctx, client, trainee, learner_ref)
    trainee.learn(rows_from(trainee.agent, n=8, seed=1))
    assert learner.checkpoint() is True
    ctx.paths.ckpt.rename(tmp_path / "moved")
    ctx.paths.ckpt.write_text("not a directory")
    from loguru import logger

    errors = []
    sink = logger.add(errors.append, level="ERROR")
    try:
        learner.publish()  # the files it would send cannot be read: skipped
        learner.publish_if_due(trainee.train_step)
    finally:
        logger.remove(sink)
    assert len(errors) == 1 and "model pool publication at train step 1 failed" in errors[0]  # logged once
    learner.writer.close()


def test_bad_replay_items_and_telemetry_are_dropped_and_counted_never_fatal(server_for, learner_run):
    """What anyone who reaches the port (or a faulty SampleData2NumpyData) can send: a row with
    NaN, a row of the wrong width, a record with a non-numeric field. The learner trains on the
    good rows only, counts the rest, and keeps going."""
    limits = ("app.replay_buffer_capacity=8", "app.train_batch_size=6")  # samples: one item each, as aisrv send them
    ctx, trainee, learner_ref = learner_run(*limits)
    app, client = server_for(*limits)
    learner = learner_of(ctx, client, trainee, learner_ref)
    good = rows_from(trainee.agent, n=4, segment=1)
    nan = good[:1].copy()
    nan[0, 5] = np.nan
    for rows in (good, nan, np.zeros((1, 7), np.float32)):  # a writer per sender: a column keeps one shape
        ChunkAdder(client, chunk_len=1, wait_ms=200, on_wait=never_stop).add(rows, model_version=0)
    telemetry = TelemetrySender(client, "intruder", 200, never_stop)
    telemetry.send("episode", {"total_score": "lots", "win": [1]})
    telemetry.send("progress", {"env_steps": "x"})
    telemetry.send("episode", {"total_score": 5.0, "win": 1.0})
    learner.drain_telemetry()
    assert learner.train_once(client.server_info()[SAMPLE_TABLE]) is True
    assert trainee.train_step == 1 and learner.counters.consumed_rows == 4  # the four good samples
    assert learner.refused.counts == {"replay": 2, "telemetry": 2}
    assert learner.counters.episodes == 1 and learner.mean_recent_score() == 5.0
    learner.maybe_report(force=True)
    learner.writer.close()
    assert "refused/replay,2.0" in ctx.paths.metrics_csv.read_text()


def test_a_minibatch_with_a_non_finite_loss_is_skipped_not_applied():
    import torch

    from feature.back_to_the_realm.ppo_definition import SAMPLE_DIM, SAMPLE_SLICES, NumpyData2SampleData

    agent = tiny_agent()
    before = {k: v.clone() for k, v in agent.model.state_dict().items()}
    rows = np.zeros((8, SAMPLE_DIM), dtype=np.float32)
    first_frame = SAMPLE_SLICES["mask"].start, SAMPLE_SLICES["reward"].start  # one-frame segments
    rows[:, first_frame[0]] = 1.0
    rows[:, first_frame[1]] = 3e38  # finite, and so is its return, but the return's squared error overflows to inf
    stats = agent.learn([NumpyData2SampleData(row) for row in rows])
    assert stats["ppo/skipped_minibatches"] > 0 and stats["ppo/minibatches"] == 0
    assert all(torch.equal(before[k], v) for k, v in agent.model.state_dict().items())


def test_signed_runs_refuse_forged_weights_replay_items_and_telemetry(server_for):
    """Someone on the network writes straight into the tables: a forged model (version 1e9, zero
    weights), a replay item and a telemetry record, signed with the wrong key or not at all."""
    from workflow.transport.signing import Signer

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


def test_a_send_waits_on_a_full_table_and_gives_up_only_once_the_server_stops_answering(tmp_path, monkeypatch):
    """A full table that answers is waited on (the learner is behind), however long; a server
    that stops answering is ReplayUnreachable once it has missed UNANSWERED_LIMIT_S of asks."""
    from workflow.transport import adder as adder_module
    from workflow.transport.adder import ReplayUnreachable
    from workflow.transport.stopped import Stopped

    monkeypatch.setattr(adder_module, "UNANSWERED_LIMIT_S", 1.0)
    app = load_config(overrides=["app.replay_buffer_capacity=3", "app.train_batch_size=2"]).app
    server = start_server(app, 0, str(tmp_path / "replay"))
    client = reverb.Client(f"127.0.0.1:{server.port}")
    waits = {"n": 0, "stop_at": 15}

    def on_wait() -> bool:
        waits["n"] += 1
        return waits["n"] >= waits["stop_at"]

    adder = ChunkAdder(client, chunk_len=2, wait_ms=100, on_wait=on_wait)
    for version in range(3):
        adder.add(np.full((2, DIM), version, np.float32), version)
    with pytest.raises(Stopped):  # 15 waits of 100 ms on a full queue: past the limit, never unreachable
        adder.add(np.zeros((2, DIM), np.float32), 3)
    assert waits["n"] == 15

    server.stop()
    waits.update(n=0, stop_at=10**6)
    with pytest.raises(ReplayUnreachable, match=r"has not answered for \d+ s"):
        adder.add(np.zeros((2, DIM), np.float32), 4)
    assert waits["n"] >= 2  # it asked more than once before giving up
