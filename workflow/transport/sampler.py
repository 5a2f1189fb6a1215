"""Learner side of the replay: batches of chunks and telemetry records out of reverb.

Sampling happens on one worker thread and the learner waits for it with a timeout, so the
learner's loop keeps beating its heartbeat, draining telemetry and honouring stop requests even
if the server makes a sample wait (rate limiter) longer than expected.
"""
from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass

import numpy as np

from workflow.transport import reverb_core as reverb
from workflow.transport.replay import SAMPLE_TABLE, TELEMETRY_TABLE, decode_json
from workflow.transport.signing import Signer


@dataclass
class Batch:
    rows: np.ndarray  # (N, SAMPLE_DIM) float32, padding removed; (0, SAMPLE_DIM) when every item was bad
    model_versions: np.ndarray  # (items,) version that produced each chunk
    lengths: np.ndarray  # (items,) rows per chunk
    dropped: dict[str, int]  # items refused, by reason
    keys: np.ndarray = None  # (items,) uint64 reverb keys (to write priorities back)
    probabilities: np.ndarray = None  # (items,) the probability each was sampled with
    table_sizes: np.ndarray = None  # (items,) the table's size when each was sampled


def item_problem(data, row_width: int, signer: Signer) -> str | None:
    """Why a sampled chunk item cannot be trained on (None: it can). Anyone who reaches the port,
    or a package's faulty SampleData2NumpyData, can put anything in the table."""
    if len(data) != 4:  # sorted keys: length, model_version, rows, sig
        return "layout"
    length, padded = np.asarray(data[0]), np.asarray(data[2])
    if length.shape != () or not np.issubdtype(length.dtype, np.integer) or not np.issubdtype(np.asarray(data[1]).dtype, np.integer):
        return "layout"
    if padded.ndim != 2 or padded.dtype != np.float32:
        return "dtype"
    if not signer.verify(data[3], data[0], data[1], data[2]):
        return "signature"
    if padded.shape[1] != row_width:
        return "width"
    if not 1 <= int(length) <= padded.shape[0]:
        return "length"
    if not np.isfinite(padded[:int(length)]).all():
        return "non-finite"
    return None


def _to_batch(samples: list, row_width: int, signer: Signer) -> Batch:
    rows, versions, lengths, dropped, keys, probabilities, sizes = [], [], [], {}, [], [], []
    for sample in samples:
        data = sample.data  # flat columns in sorted key order: length, model_version, rows
        problem = item_problem(data, row_width, signer)
        if problem is not None:
            dropped[problem] = dropped.get(problem, 0) + 1
            continue
        length, version, padded = int(data[0]), int(data[1]), data[2]
        rows.append(padded[:length])
        versions.append(version)
        lengths.append(length)
        keys.append(int(sample.info.key))
        probabilities.append(float(sample.info.probability))
        sizes.append(int(sample.info.table_size))
    return Batch(rows=np.concatenate(rows) if rows else np.zeros((0, row_width), np.float32),
                 model_versions=np.asarray(versions, dtype=np.int64), lengths=np.asarray(lengths, dtype=np.int64),
                 dropped=dropped, keys=np.asarray(keys, dtype=np.uint64),
                 probabilities=np.asarray(probabilities, dtype=np.float64), table_sizes=np.asarray(sizes, dtype=np.int64))


class BatchSampler:
    def __init__(self, client: reverb.Client, row_width: int, signer: Signer | None = None):
        self._client = client
        self._row_width = row_width
        self._signer = signer or Signer(None)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="reverb-sampler")
        self._pending: concurrent.futures.Future | None = None

    @property
    def pending(self) -> bool:
        """A sample request timed out earlier and is still in flight: its items are already
        taken from the table, so the next `take` must collect them whatever the trigger says."""
        return self._pending is not None

    def take(self, num_items: int, timeout_s: float) -> Batch | None:
        """A batch of `num_items` chunks, or None if it did not arrive within timeout_s
        (the request stays pending and the next call picks it up)."""
        if self._pending is None:
            self._pending = self._pool.submit(self._sample, num_items)
        try:
            samples = self._pending.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            return None
        self._pending = None
        return _to_batch(samples, self._row_width, self._signer)

    def _sample(self, num_items: int) -> list:
        return list(self._client.sample(SAMPLE_TABLE, num_items))

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class TelemetryReceiver:
    """Drains the telemetry table, never waiting for more than it holds; records that fail their
    signature or do not decode are counted in `refused`."""

    def __init__(self, client: reverb.Client, max_items: int = 10_000, signer: Signer | None = None):
        self._client = client
        self._max_items = max_items
        self._signer = signer or Signer(None)
        self.refused = 0

    def drain(self, available: int) -> list[dict]:
        """Take `available` records (the table's current size, from a fresh server_info); only the
        learner samples this table, so that many are there and sampling them cannot wait."""
        count = min(self._max_items, int(available))
        if count <= 0:
            return []
        records = []
        for sample in self._client.sample(TELEMETRY_TABLE, count):
            data = sample.data  # sorted keys: json, length, sig
            try:
                if len(data) != 3 or not self._signer.verify(data[2], data[0], data[1]):
                    raise ValueError("unsigned or badly signed")
                record = decode_json(np.asarray(data[0])[:int(data[1])])
                if not isinstance(record, dict):
                    raise ValueError("not a record")
                records.append(record)
            except (ValueError, TypeError, UnicodeDecodeError):
                self.refused += 1
        return records
