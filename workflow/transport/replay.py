"""The replay server's tables and the reverb helpers every role shares.

Three tables live on one reverb server (hosted by the learner process):
  sample      trajectory chunks from aisrv; how it is sampled and rate limited follows
              Kaiwu's [app] keys (see `sample_table`)
  model_pool  the newest published weights (one item) that aisrv pull
  telemetry   small JSON records (episode metrics, progress) from aisrv to the learner;
              lossy when full, so a slow learner never blocks an env

Importing this module loads reverb's native core (workflow.transport.reverb_core, without
TensorFlow's Python): only the processes that talk to the server import it.
"""
from __future__ import annotations

import json

import numpy as np

from workflow.transport import reverb_core as reverb

SAMPLE_TABLE = "sample"
MODEL_TABLE = "model_pool"
TELEMETRY_TABLE = "telemetry"
TELEMETRY_CAPACITY = 100_000

_SELECTORS = {
    "reverb.selectors.Uniform": reverb.selectors.Uniform,
    "reverb.selectors.Fifo": reverb.selectors.Fifo,
    "reverb.selectors.Lifo": reverb.selectors.Lifo,
    "reverb.selectors.MaxHeap": reverb.selectors.MaxHeap,
    "reverb.selectors.MinHeap": reverb.selectors.MinHeap,
}
PRIORITIZED = "reverb.selectors.Prioritized"


def selector(name: str, priority_exponent: float = 1.0):
    """A reverb selector from its dotted name in the config ("reverb.selectors.Fifo");
    Prioritized samples with P(i) ∝ priority_i^priority_exponent."""
    if name == PRIORITIZED:
        return reverb.selectors.Prioritized(priority_exponent=priority_exponent)
    if name not in _SELECTORS:
        raise ValueError(f"unknown reverb selector {name!r}; allowed: {', '.join([*_SELECTORS, PRIORITIZED])}")
    return _SELECTORS[name]()


def importance_weights(probabilities: np.ndarray, table_size: np.ndarray, beta: float) -> np.ndarray:
    """Prioritized replay's importance-sampling weights, (N·P(i))^-β / max_j (N·P(j))^-β over the
    batch: 1 for the least likely sample, smaller for the ones drawn more often than uniform."""
    scaled = (np.asarray(table_size, dtype=np.float64) * np.asarray(probabilities, dtype=np.float64)) ** -beta
    return (scaled / scaled.max()).astype(np.float32) if scaled.size else scaled.astype(np.float32)


def sample_rate_limiter(app) -> reverb.rate_limiters.RateLimiter:
    """Kaiwu's training trigger expressed as a reverb rate limiter.

    on-policy: a bounded queue (each chunk sampled once; producers wait when the learner is
      `replay_buffer_capacity` chunks behind, which bounds the policy lag).
    off-policy, learner_train_by_while_true: MinSize(capacity / preload_ratio); the learner's
      sleep sets the pace, as in Kaiwu.
    off-policy otherwise: SampleToInsertRatio(production_consume_ratio) once the preload size
      is reached: a batch may be sampled after train_batch_size / production_consume_ratio
      new inserts; producers may run a full buffer ahead before they wait.
    """
    if app.algorithm_on_policy_or_off_policy == "on-policy":
        return reverb.rate_limiters.RateLimiter(samples_per_insert=1.0, min_size_to_sample=1, min_diff=0.0,
                                                max_diff=float(app.replay_buffer_capacity))
    min_size = app.min_items_to_train
    if app.learner_train_by_while_true:
        return reverb.rate_limiters.MinSize(min_size)
    spi = app.production_consume_ratio
    offset = spi * min_size
    return reverb.rate_limiters.SampleToInsertRatio(
        samples_per_insert=spi, min_size_to_sample=min_size,
        error_buffer=(offset - app.train_batch_size, offset + spi * app.replay_buffer_capacity))


def sample_table(app) -> reverb.Table:
    on_policy = app.algorithm_on_policy_or_off_policy == "on-policy"
    return reverb.Table(
        name=SAMPLE_TABLE,
        sampler=selector(app.reverb_sampler, app.priority_alpha),
        remover=selector(app.reverb_remover),
        max_size=app.replay_buffer_capacity,
        max_times_sampled=1 if on_policy else 0,
        rate_limiter=sample_rate_limiter(app),
    )


def model_table() -> reverb.Table:
    return reverb.Table(name=MODEL_TABLE, sampler=reverb.selectors.Fifo(), remover=reverb.selectors.Fifo(),
                        max_size=1, max_times_sampled=0, rate_limiter=reverb.rate_limiters.MinSize(1))


def telemetry_table() -> reverb.Table:
    return reverb.Table(name=TELEMETRY_TABLE, sampler=reverb.selectors.Fifo(), remover=reverb.selectors.Fifo(),
                        max_size=TELEMETRY_CAPACITY, max_times_sampled=1,
                        rate_limiter=reverb.rate_limiters.MinSize(1))


def start_server(app, port: int, checkpoint_dir: str) -> reverb.Server:
    """Serve the three tables on `port` (0 = any free port) on every interface, unauthenticated."""
    checkpointer = reverb.checkpointers.DefaultCheckpointer(path=checkpoint_dir)
    return reverb.Server(tables=[sample_table(app), model_table(), telemetry_table()], port=port or None,
                         checkpointer=checkpointer)


def can_sample(info, num: int) -> bool:
    """Whether `num` items can be sampled now without waiting on the rate limiter.

    Only the learner samples the sample and telemetry tables, so a yes stays true until it
    samples (inserts only ever add room); this keeps the learner from ever blocking.
    """
    limiter = info.rate_limiter_info
    if info.current_size < max(1, limiter.min_size_to_sample):
        return False
    if info.max_times_sampled == 1 and info.current_size < num:
        return False
    diff = limiter.insert_stats.completed * limiter.samples_per_insert - limiter.sample_stats.completed
    return diff - num >= limiter.min_diff


def inserts_completed(info) -> int:
    return int(info.rate_limiter_info.insert_stats.completed)


# --- JSON records as uint8 arrays (reverb moves tensors, not strings) --------------------------

def encode_json(record: dict) -> np.ndarray:
    return np.frombuffer(json.dumps(record, separators=(",", ":")).encode(), dtype=np.uint8).copy()


def decode_json(array: np.ndarray) -> dict:
    return json.loads(np.asarray(array, dtype=np.uint8).reshape(-1).tobytes().decode())
