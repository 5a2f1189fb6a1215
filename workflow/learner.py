"""learner: hosts the replay server, trains the agent on sampled chunks, publishes weights to the
model pool, writes checkpoints and the run's metrics.

When to train follows Kaiwu's learner (see `TrainTrigger`); the replay tables' rate limiters
(workflow.transport.replay) make the same rule hold on the server, and the learner samples only when a
batch is there, so it never blocks on an empty table.
"""
from __future__ import annotations

import csv
import random
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from loguru import logger

from workflow.transport import reverb_core as reverb
from workflow.checkpoints import ckpt_files
from workflow import metrics_keys as K
from workflow.allocator import keep_freed_memory
from workflow.checkpoints.disk import disk_space, write_error
from workflow.checkpoints.evaluations import (EVALUATIONS_FILE, METRIC_PREFIX, Evaluations, best_checkpoint, describe,
                                              read_evaluations)
from workflow.checkpoints.manager import CheckpointManager
from workflow.host.kaiwu_package import KaiwuPackage, PackageError, preload_dir
from workflow.metrics import MetricsWriter
from workflow.transport.model_pool import ModelPublisher
from workflow.supervision.processes import STATUS_INTERVAL_S, ChildContext
from workflow.transport.replay import (SAMPLE_TABLE, TELEMETRY_TABLE, can_sample, importance_weights, inserts_completed,
                             start_server)
from workflow.transport.sampler import BatchSampler, TelemetryReceiver
from workflow.transport.signing import Signer
from workflow.precision import check_device, package_bf16_ready, resolve_precision
from workflow.host.trainee import POOL_STAGING_DIR, LearnerHandler, NonFiniteWeights, Trainee, WriterMonitor
from workflow.telemetry import WARN_EVERY_S, AisrvReports, RefusalLog, RunCounters, StatsWindow

IDLE_SLEEP_S = 0.02
STOP_REQUESTED = "stop requested"
CKPT_RETRY_MAX_S = 300.0  # the longest wait between checkpoint write attempts (app.ckpt_write_retry_seconds doubles)


class CheckpointWriteError(RuntimeError):
    """Checkpoint writes keep failing: the run stops rather than train on without a way back."""


class NonFiniteLearning(RuntimeError):
    """The package's Agent.learn keeps producing NaN or infinite values: the run stops rather
    than train on weights it can neither checkpoint nor publish."""


class TrainTrigger:
    """Kaiwu's rule for when the learner trains one step:
    - learner_train_by_while_true: after sleeping learner_train_sleep_seconds, whenever a batch
      can be sampled;
    - off-policy: the table holds capacity / preload_ratio chunks and
      train_batch_size / production_consume_ratio chunks arrived since the last step;
    - on-policy: the table holds a batch.
    """

    def __init__(self, app):
        self.app = app
        self._inserts_at_last_step = 0

    def ready(self, info) -> bool:
        app = self.app
        if app.learner_train_by_while_true:
            if app.learner_train_sleep_seconds > 0:
                time.sleep(app.learner_train_sleep_seconds)
            condition = True
        elif app.algorithm_on_policy_or_off_policy == "off-policy":
            new = inserts_completed(info) - self._inserts_at_last_step
            condition = (info.current_size >= app.min_items_to_train
                         and new >= app.train_batch_size / app.production_consume_ratio)
        else:
            condition = info.current_size >= app.train_batch_size
        return condition and can_sample(info, app.train_batch_size)

    def trained(self, info) -> None:
        self._inserts_at_last_step = inserts_completed(info)


class EvaluationRows:
    """The run's evaluations (the evaluator's evaluations.json, workflow.checkpoints.evaluations)
    as metrics.csv and TensorBoard rows of role "eval" at the checkpoint's train step and env
    steps: each checkpoint once, the file read again when it changed."""

    POLL_S = 2.0
    ROLE = "eval"

    def __init__(self, ckpt_dir: Path, writer: MetricsWriter, written: set[int]):
        self.path = Path(ckpt_dir) / EVALUATIONS_FILE
        self.writer = writer
        self.written = set(written)
        self._seen: tuple | None = None
        self._last_poll = 0.0

    def poll(self, force: bool = False) -> None:
        if not force and time.monotonic() - self._last_poll < self.POLL_S:
            return
        self._last_poll = time.monotonic()
        try:
            stat = self.path.stat()
        except OSError:
            return
        if (stat.st_mtime_ns, stat.st_size) == self._seen:
            return
        self._seen = (stat.st_mtime_ns, stat.st_size)
        found = read_evaluations(self.path.parent)
        for ckpt_id in sorted(set(found.checkpoints) - self.written) if found is not None else ():
            entry = found.checkpoints[ckpt_id]
            self.writer.write(self.ROLE, ckpt_id, int(entry.get("env_steps") or 0), Evaluations.metrics(entry),
                              wall_time=entry.get("wall_time"))
            self.written.add(ckpt_id)

    @staticmethod
    def in_metrics(metrics_csv: Path) -> set[int]:
        """The checkpoints whose evaluation rows metrics.csv already holds (a resumed run's)."""
        key, found = METRIC_PREFIX + "score", set()
        try:
            with Path(metrics_csv).open(newline="") as f:
                for row in csv.DictReader(f):
                    if row.get("key") == key and row.get("role") == EvaluationRows.ROLE:
                        try:
                            found.add(int(float(row["train_step"])))
                        except (TypeError, ValueError):
                            continue
        except OSError:
            pass
        return found


class Learner:
    def __init__(self, ctx: ChildContext, client: reverb.Client, trainee, counters: RunCounters, writer: MetricsWriter):
        self.ctx = ctx
        self.app = ctx.config.app
        self.client = client
        self.trainee = trainee
        self.writer = writer
        signer = Signer(ctx.secret)
        self.publisher = ModelPublisher(client, signer)
        self.sampler = BatchSampler(client, trainee.sample_dim, signer)
        self.reports = AisrvReports(counters, writer, lambda: trainee.train_step, self.save_user)
        self.telemetry = TelemetryReceiver(client, signer=signer)
        self.trigger = TrainTrigger(self.app)
        self.window = StatsWindow()
        self.started = time.monotonic()
        # (train step, counters) of the newest checkpoint: the final one is written when either moved
        self.last_saved = (trainee.train_step, asdict(counters)) if ctx.resume else (-1, {})
        self.buffer_size = 0
        self._window_start = (time.monotonic(), counters.env_steps, counters.consumed_rows, trainee.train_step)
        self._last_status = 0.0
        self.max_priority = 1.0  # the largest replay priority written back (prioritized replay)
        self.write_failures = 0  # checkpoint writes that failed in a row
        self.retry_at: float | None = None  # when a failed checkpoint write is tried again
        self.nonfinite_streak = 0  # train steps in a row that left NaN/inf (statistics or weights)
        self.nonfinite_steps = 0  # such train steps in this session (metric system/nonfinite_train_steps)
        self.nonfinite_checkpoints = 0  # checkpoints not written because the weights were not finite
        self._last_warning: dict[str, float] = {}  # kind -> when last warned (warn_at_most_every)
        self.eval_rows = (EvaluationRows(trainee.ckpts.ckpt_dir, writer,
                                         EvaluationRows.in_metrics(ctx.paths.metrics_csv) if ctx.resume else set())
                          if ctx.config.eval.enabled else None)

    # --- model pool and checkpoints ---------------------------------------------------------------

    def publish(self, first: bool = False) -> None:
        """Hand the newest model to the model pool. Files that cannot be read or staged (the disk
        failing) skip this publication, loudly; the aisrv keep the model they have. The `first`
        publication has no such fallback (the aisrv have no model yet): its failure is raised."""
        counters = {**asdict(self.counters), "max_priority": self.max_priority}  # new samples enter with it
        try:
            item = self.trainee.pool_item()
        except OSError as e:
            if first:
                raise
            self.publication_failed(e)
            return
        self.publisher.publish(item, self.trainee.model_version, counters)

    def publish_if_due(self, step: int) -> None:
        try:
            due = self.trainee.publish_due(step)  # stages the model when due by the step count
        except OSError as e:
            self.publication_failed(e)
            return
        if due:
            self.publish()

    def publication_failed(self, e: OSError) -> None:
        self.warn_at_most_every("publish", f"model pool publication at train step {self.trainee.train_step} failed "
                                f"({type(e).__name__}: {e}); training goes on, the aisrv keep the model they have",
                                level="ERROR")

    def write_priorities(self, keys: np.ndarray, priorities: np.ndarray) -> None:
        """Prioritized replay: the samples' new priorities |p| + epsilon (items evicted meanwhile
        are skipped by reverb)."""
        values = priorities + self.app.priority_epsilon
        self.client.mutate_priorities(SAMPLE_TABLE, updates={int(k): float(v) for k, v in zip(keys, values)})
        self.max_priority = max(self.max_priority, float(values.max()))
        self.window.add({K.PRIORITY_MEAN: float(values.mean())})

    def checkpoint(self, final: bool = False) -> bool:
        """Write a checkpoint. A failed write (disk full, read-only, gone; whatever the package's
        save_model raised, workflow.host.trainee) does not stop training: it is retried on a back-off
        schedule (`checkpoint_due`), loudly (learner.log and the terminal, naming the error and the
        disk), and only app.ckpt_write_max_failures in a row end the run. Weights that are not
        finite are not written (the newest checkpoint stays the last sound one). True when written."""
        step, app = self.trainee.train_step, self.app
        what = "final checkpoint" if final else "checkpoint"
        try:
            path = self.trainee.checkpoint({"counters": asdict(self.counters)}, self.mean_recent_score())
        except NonFiniteWeights as e:
            self.nonfinite_checkpoints += 1
            self.retry_at = None  # nothing sound to write: the next one is due by dump_model_freq
            self.warn_at_most_every("checkpoint", f"{what} at train step {step} not written: {e}; the newest "
                                    f"checkpoint stays {self.newest_written()}{self.nonfinite_counts()}")
            return False
        except OSError as e:
            self.write_failures += 1
            last = self.write_failures >= app.ckpt_write_max_failures
            delay = min(CKPT_RETRY_MAX_S, app.ckpt_write_retry_seconds * 2 ** (self.write_failures - 1))
            error = f"{write_error(e)}; {disk_space(self.trainee.ckpts.ckpt_dir)}"
            retry = ("" if final else "training goes on, ") + f"retrying in {delay:g} s"
            message = (f"{what} at train step {step} failed: {error}; {'no retry left' if last else retry} "
                       f"({self.write_failures}/{app.ckpt_write_max_failures} failures in a row)")
            logger.error(message)
            self.ctx.post("warning", {"message": message})
            if last:
                raise CheckpointWriteError(f"{self.write_failures} checkpoint writes in a row failed "
                                           f"(app.ckpt_write_max_failures); last: {error}") from e
            self.retry_at = time.monotonic() + delay
            return False
        self.write_failures, self.retry_at = 0, None
        self.last_saved = (step, asdict(self.counters))
        logger.info(f"checkpoint {path.name} (env steps {self.counters.env_steps}, episodes {self.counters.episodes})")
        return True

    def newest_written(self) -> str:
        step = self.last_saved[0]
        return ckpt_files.ckpt_name(step) if step >= 0 else "none yet"

    def checkpoint_due(self, step: int) -> bool:
        """Every dump_model_freq train steps; after a failed write only when its retry is due, so
        the back-off the log announces holds however fast the train steps come."""
        if self.retry_at is not None:
            return self.retry_due()
        return step % self.app.dump_model_freq == 0

    def retry_due(self) -> bool:
        return self.retry_at is not None and time.monotonic() >= self.retry_at

    # --- telemetry from aisrv (workflow.telemetry) -------------------------------------------------

    @property
    def counters(self) -> RunCounters:
        return self.reports.counters

    @property
    def refused(self) -> RefusalLog:
        return self.reports.refused

    def handle(self, record) -> None:
        self.reports.handle(record)

    def mean_recent_score(self) -> float | None:
        return self.reports.mean_recent_score()

    def save_user(self, source: str | None) -> None:
        """An aisrv agent's save_model: the learner writes the user save."""
        path = self.trainee.save_user()
        logger.info(f"user save requested by {source}: {path}")

    def write_learner(self, values: dict) -> None:
        self.writer.write("learner", self.trainee.train_step, self.counters.env_steps, values)

    # --- training -----------------------------------------------------------------------------------

    def train_once(self, info) -> bool:
        batch = self.sampler.take(self.app.train_batch_size, timeout_s=self.app.rate_limiter_timeout_ms / 1000)
        if batch is None:
            return False
        # Each aisrv sends its env steps before the samples that hold them: counting what came in
        # up to now keeps the run's env steps at or above the frames learned, whoever died when.
        self.drain_telemetry()
        self.trigger.trained(info)
        for reason, count in batch.dropped.items():
            self.refused.add("replay", reason, None, count)
        if len(batch.rows) == 0:
            return True
        behaviour_lag = self.trainee.model_version - batch.model_versions
        weights = None
        if self.app.prioritized:
            beta = self.app.priority_beta_at(self.trainee.train_step)
            weights = importance_weights(batch.probabilities, batch.table_sizes, beta)
            self.window.add({K.PRIORITY_BETA: beta})
        stats, priorities = self.trainee.learn(batch.rows, weights)
        if self.app.prioritized and priorities is not None and len(batch.keys) == len(priorities):
            self.write_priorities(batch.keys, priorities)
        self.counters.consumed_rows += len(batch.rows)
        self.window.add({K.learner_key(k): v for k, v in stats.items()})
        self.window.add({K.POLICY_LAG: float(np.mean(behaviour_lag))})
        self.window.lag_max = max(self.window.lag_max, int(np.max(behaviour_lag)))
        self.check_finite(stats)
        step = self.trainee.train_step
        if self.checkpoint_due(step):
            self.checkpoint()
        self.publish_if_due(step)
        return True

    def check_finite(self, stats: dict[str, float]) -> None:
        """Count a train step whose statistics or weights hold NaN or inf, warn, and end the run
        after app.max_nonfinite_train_steps of them in a row (NonFiniteLearning names the
        package's learn)."""
        bad = [key for key, value in stats.items() if not np.isfinite(value)] + self.trainee.non_finite_weights()
        if not bad:
            self.nonfinite_streak = 0
            return
        self.nonfinite_streak += 1
        self.nonfinite_steps += 1
        limit, step = self.app.max_nonfinite_train_steps, self.trainee.train_step
        learn = self.trainee.package.learn_name
        what = ", ".join(bad[:4]) + (f" and {len(bad) - 4} more" if len(bad) > 4 else "")
        if limit and self.nonfinite_streak >= limit:
            self.maybe_report(force=True)
            raise NonFiniteLearning(f"{learn} left NaN or infinite values on {self.nonfinite_streak} train steps in a "
                                    f"row (app.max_nonfinite_train_steps = {limit}; last, at train step {step}: {what}); "
                                    f"the newest checkpoint is the last sound one: {self.newest_written()}")
        self.warn_at_most_every("step", f"train step {step}: {learn} left NaN or infinite values ({what}); "
                                f"{self.nonfinite_streak} step(s) in a row"
                                + (f", the run ends at {limit}" if limit else "") + self.nonfinite_counts())

    def nonfinite_counts(self) -> str:
        return (f" ({self.nonfinite_steps} non-finite train steps, {self.nonfinite_checkpoints} checkpoints "
                "not written so far)")

    def warn_at_most_every(self, kind: str, message: str, level: str = "WARNING") -> None:
        """Log `message` at most once per WARN_EVERY_S per kind: what repeats every train step
        stays readable (the counts go to the metrics)."""
        if time.monotonic() - self._last_warning.get(kind, -float("inf")) >= WARN_EVERY_S:
            self._last_warning[kind] = time.monotonic()
            logger.log(level, message)

    def limit_reached(self) -> str | None:
        app = self.app
        if app.max_train_steps and self.trainee.train_step >= app.max_train_steps:
            return f"max_train_steps {app.max_train_steps} reached"
        if app.max_env_steps and self.counters.env_steps >= app.max_env_steps:
            return f"max_env_steps {app.max_env_steps} reached"
        if app.max_minutes and time.monotonic() - self.started >= app.max_minutes * 60:
            return f"max_minutes {app.max_minutes} reached"
        return None

    def drain_telemetry(self):
        """Handle every telemetry record the table holds; returns the server info it read."""
        info = self.client.server_info(timeout=10)
        refused_before = self.telemetry.refused
        for record in self.telemetry.drain(info[TELEMETRY_TABLE].current_size):
            self.handle(record)
        if self.telemetry.refused > refused_before:
            self.refused.add("telemetry", "unsigned, badly signed or not JSON", None, self.telemetry.refused - refused_before)
        return info

    def run(self) -> str:
        """Train until asked to stop or a limit is reached; returns why it stopped."""
        while True:
            self.ctx.beat()
            if self.ctx.should_stop():
                return STOP_REQUESTED
            info = self.drain_telemetry()
            reason = self.limit_reached()
            if reason:
                return reason
            sample_info = info[SAMPLE_TABLE]
            self.buffer_size = int(sample_info.current_size)
            trained = (self.sampler.pending or self.trigger.ready(sample_info)) and self.train_once(sample_info)
            if not trained:
                time.sleep(IDLE_SLEEP_S)
            self.maybe_report()

    # --- reporting ----------------------------------------------------------------------------------

    def maybe_report(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.eval_rows is not None:
            self.eval_rows.poll(force)
        if force or now - self._last_status >= STATUS_INTERVAL_S:
            self._last_status = now
            self.ctx.post("status", self.status())
        t0, env0, rows0, step0 = self._window_start
        if force or now - t0 >= self.app.metrics_interval_seconds:
            seconds = max(now - t0, 1e-6)
            values = self.window.means()
            values.update({
                K.ENV_SPS: (self.counters.env_steps - env0) / seconds,
                K.CONSUMED_SPS: (self.counters.consumed_rows - rows0) / seconds,
                K.TRAIN_STEPS_PER_S: (self.trainee.train_step - step0) / seconds,
                K.BUFFER_SIZE: self.buffer_size,
                K.BUFFER_FILL: self.buffer_size / self.app.replay_buffer_capacity,
                K.MODEL_VERSION: self.trainee.model_version,
            })
            if K.POLICY_LAG in values:
                values[K.POLICY_LAG_MAX] = self.window.lag_max
            values.update(self.refused.totals())
            values.update({K.NONFINITE_TRAIN_STEPS: self.nonfinite_steps,
                           K.NONFINITE_CHECKPOINTS: self.nonfinite_checkpoints})
            score = self.mean_recent_score()
            if score is not None:
                values[K.MEAN_SCORE_RECENT] = score
            if self.reports.recent_wins:
                values[K.WIN_RATE_RECENT] = float(np.mean(self.reports.recent_wins))
            self.write_learner(values)
            self.window = StatsWindow()
            self._window_start = (now, self.counters.env_steps, self.counters.consumed_rows, self.trainee.train_step)

    def status(self) -> dict:
        return {**asdict(self.counters), "train_step": self.trainee.train_step, "model_version": self.trainee.model_version,
                "buffer_size": self.buffer_size, "buffer_capacity": self.app.replay_buffer_capacity,
                "mean_score": self.mean_recent_score(), "uptime_s": time.monotonic() - self.started}

    def finish(self, reason: str) -> None:
        """The final checkpoint, after the stopped aisrv's last reports are counted."""
        self.drain_telemetry()
        self.final_checkpoint()
        self.publish()
        self.maybe_report(force=True)
        self.writer.close()
        self.sampler.close()
        logger.info(f"learner stopped ({reason}) at train step {self.trainee.train_step}, "
                    f"{self.counters.env_steps} env steps, {self.counters.episodes} episodes")
        self.ctx.post("done", {"reason": reason, **self.status()})

    def final_checkpoint(self) -> None:
        """The final state, unless already saved: a failed write is retried on the same schedule
        as in training until written or app.ckpt_write_max_failures end the run. Weights that are
        not finite are not written (the newest checkpoint stays the last sound one)."""
        while self.last_saved != (self.trainee.train_step, asdict(self.counters)):
            if self.retry_at is not None and not self.retry_due():
                self.ctx.beat()
                time.sleep(min(IDLE_SLEEP_S * 10, max(0.0, self.retry_at - time.monotonic())))
            elif self.checkpoint(final=True) or self.retry_at is None:
                return  # written, or refused for its weights (nothing to retry)

    def wait_for_aisrv_to_stop(self, reason: str) -> None:
        """A stop limit was reached: training stops now, but the aisrv still play and report. Tell
        the launcher, which stops them first, and keep counting their reports until it says stop."""
        self.ctx.post("stopping", {"reason": reason})
        while not self.ctx.should_stop():
            self.ctx.beat()
            self.drain_telemetry()
            self.maybe_report()
            time.sleep(IDLE_SLEEP_S * 5)


def best_evaluated(ckpt_dir: Path) -> str | None:
    """'best by evaluation: model.ckpt-40 (score ..., ratio ...)' when the run has evaluations."""
    found = best_checkpoint(ckpt_dir)
    return f"best by evaluation: {describe(found[0].id, found[1])}" if found else None


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_trainee(ctx: ChildContext, learner_ref: list) -> Trainee:
    """The trainee of this run: the package's Agent (`app.package`, or the project's own)."""
    cfg, app, paths = ctx.config, ctx.config.app, ctx.paths
    ckpts = CheckpointManager(paths.ckpt, app.max_ckpt_keep, app.keep_best_ckpt, paths.user_ckpt,
                              app.user_save_mode_max_count, paths.metrics_csv, evaluated=cfg.eval.enabled)
    check_device(app.device)
    package = KaiwuPackage.of_run(cfg, "learner", paths)
    monitor = WriterMonitor(lambda values: learner_ref[0].write_learner(values) if learner_ref else None)
    agent = package.make_agent("learner", logger, monitor, device=app.device)
    trainee = Trainee(package, agent, ckpts, app.model_pool_publish_freq, paths.root / "pool" / POOL_STAGING_DIR,
                      device=app.device)
    precision = resolve_precision(app.precision, app.device, package_bf16_ready(package.agent_class))
    logger.info(f"learner precision: {precision}")
    agent.framework_handler = LearnerHandler(paths.user_ckpt / f"{app.app}_{package.algo}", app.user_save_mode_max_count,
                                             lambda: trainee.train_step, precision, app.device)
    return trainee


def main(ctx: ChildContext) -> None:
    app, paths = ctx.config.app, ctx.paths
    torch.set_num_threads(app.torch_num_threads)
    memory = keep_freed_memory()  # before the first tensor: the update's minibatches reuse their pages
    seed_everything(app.seed)
    paths.make_dirs()
    logger.info(memory)
    writer = MetricsWriter(paths.metrics_csv, paths.tb)
    learner_ref: list[Learner] = []  # the package's monitor writes through the learner once it exists
    trainee = make_trainee(ctx, learner_ref)
    counters = RunCounters()
    if ctx.resume:
        ckpt_id, extra = trainee.restore_newest()
        counters = RunCounters.from_dict(extra.get("counters", {}))
        resumed = (f"resumed from {ckpt_files.ckpt_name(ckpt_id)}: train step {trainee.train_step}, "
                   f"{counters.env_steps} env steps, {counters.episodes} episodes")
        logger.info(resumed)
        for note in trainee.resume_notes:  # what was passed over, counters reset: on the terminal too
            ctx.post("warning", {"message": note})
        ctx.post("notice", {"message": resumed})
        best = best_evaluated(paths.ckpt)
        if best:
            logger.info(best)
            ctx.post("notice", {"message": best})
    elif app.preload_model:
        model_dir = preload_dir(app, trainee.package.root, trainee.package.layout)
        loaded = trainee.preload(model_dir, app.preload_model_id)
        logger.info(f"preloaded {ckpt_files.ckpt_name(loaded)} from {model_dir}")
    server = start_server(app, app.reverb_port, str(paths.replay_ckpt))
    client = reverb.Client(f"127.0.0.1:{server.port}")
    learner = Learner(ctx, client, trainee, counters, writer)
    learner_ref.append(learner)
    if not ctx.resume:
        learner.checkpoint()  # model.ckpt-0, as the platform writes before training: the aisrv's first model
    learner.publish(first=True)
    logger.info(f"replay server on port {server.port} (all interfaces); train step {trainee.train_step}")
    ctx.post("ready", {"port": server.port, "train_step": trainee.train_step})
    try:
        reason = learner.run()
    except BaseException as e:
        learner.writer.close()  # keep the metrics written so far; no checkpoint of a failed state
        failure = trainee.package.failure(e)  # the innermost cause, not the workflow's wrapper of it
        if failure:
            raise PackageError(f"package code failed at {failure}") from e
        raise
    if reason != STOP_REQUESTED:
        learner.wait_for_aisrv_to_stop(reason)
    learner.finish(reason)
    server.stop()
