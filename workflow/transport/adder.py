"""aisrv side of the replay: trajectory chunks and telemetry records into reverb.

One item per chunk: `rows` (chunk_len, SAMPLE_DIM) float32 zero-padded past `length`, the
true `length`, the `model_version` that produced the chunk (for the learner's policy-lag
metric) and `sig`, the run's HMAC over the three (workflow.transport.signing; zeros when unsigned). Padding keeps every item the same shape, which reverb's writer requires of a column;
the learner drops the padding. Each item is flushed at once, so nothing waits in a client buffer.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from workflow.transport import reverb_core as reverb
from workflow.transport.replay import SAMPLE_TABLE, TELEMETRY_TABLE, encode_json
from workflow.transport.signing import Signer
from workflow.transport.stopped import Stopped


TELEMETRY_RECORD_BYTES = 8192  # fixed payload size (a column keeps one shape); records are ~1 KB
#: While a send waits, the server is asked "are you there" (each ask waits PROBE_TIMEOUT_S); it is
#: gone once it has not answered for UNANSWERED_LIMIT_S: a learner busy on a loaded machine
#: (resuming, writing its first checkpoint) misses an ask or two, a gone one misses them all.
PROBE_TIMEOUT_S = 1
UNANSWERED_LIMIT_S = 15.0


class ReplayUnreachable(ConnectionError):
    """The replay server stopped answering while we waited to send."""


class _FlushingWriter:
    """A reverb trajectory writer whose every item is flushed at once. While the server makes it
    wait (a full rate limiter), `on_wait()` runs each `wait_ms`: it returns True to give up
    (Stopped); a server that no longer answers raises ReplayUnreachable instead of waiting forever."""

    def __init__(self, client: reverb.Client, wait_ms: int, on_wait: Callable[[], bool]):
        self._client = client
        self._wait_ms = max(1, wait_ms)
        self._on_wait = on_wait
        self._writer = client.trajectory_writer(num_keep_alive_refs=1)
        self.seconds_waited = 0.0

    def write(self, table: str, step: dict, priority: float = 1.0) -> None:
        self._writer.append(step)
        history = self._writer.history
        self._writer.create_item(table, priority=float(priority), trajectory={key: history[key][-1] for key in step})
        start = time.monotonic()
        unanswered_since = None
        while True:
            try:
                self._writer.flush(timeout_ms=self._wait_ms)
                break
            except reverb.errors.DeadlineExceededError:
                if self._on_wait():
                    raise Stopped()
                try:
                    self._client.server_info(timeout=PROBE_TIMEOUT_S)
                    unanswered_since = None
                except reverb.errors.DeadlineExceededError as e:
                    now = time.monotonic()
                    unanswered_since = now if unanswered_since is None else unanswered_since
                    if now - unanswered_since >= UNANSWERED_LIMIT_S:
                        raise ReplayUnreachable(f"replay server {self._client.server_address} has not answered "
                                                f"for {now - unanswered_since:.0f} s") from e
        self.seconds_waited += time.monotonic() - start

    def close(self) -> None:
        try:
            self._writer.close()
        except Exception:  # the server may already be gone at shutdown
            pass


class ChunkAdder:
    def __init__(self, client: reverb.Client, chunk_len: int, wait_ms: int, on_wait: Callable[[], bool],
                 signer: Signer | None = None):
        self._chunk_len = chunk_len
        self._signer = signer or Signer(None)
        self._writer = _FlushingWriter(client, wait_ms, on_wait)
        self.items_sent = 0
        self.rows_sent = 0

    @property
    def seconds_waited(self) -> float:
        """Time spent waiting for the replay's rate limiter (the learner is behind)."""
        return self._writer.seconds_waited

    def add(self, rows: np.ndarray, model_version: int, priorities=None) -> None:
        """Send `rows` (N, SAMPLE_DIM) as ceil(N / chunk_len) items; `priorities`: one per item
        (a Prioritized table samples by them), default 1."""
        rows = np.asarray(rows, dtype=np.float32)
        for i, start in enumerate(range(0, len(rows), self._chunk_len)):
            self._send(rows[start:start + self._chunk_len], model_version,
                       1.0 if priorities is None else float(priorities[i]))

    def _send(self, rows: np.ndarray, model_version: int, priority: float = 1.0) -> None:
        padded = np.zeros((self._chunk_len, rows.shape[1]), dtype=np.float32)
        padded[:len(rows)] = rows
        length, version = np.int32(len(rows)), np.int64(model_version)
        self._writer.write(SAMPLE_TABLE, {"rows": padded, "length": length, "model_version": version,
                                          "sig": self._signer.sign(length, version, padded)}, priority)
        self.items_sent += 1
        self.rows_sent += len(rows)

    def close(self) -> None:
        self._writer.close()


class TelemetrySender:
    """Small JSON records (episode reports, progress, requests) for the learner, one item each,
    zero-padded to TELEMETRY_RECORD_BYTES."""

    def __init__(self, client: reverb.Client, source: str, wait_ms: int, on_wait: Callable[[], bool],
                 signer: Signer | None = None):
        self._source = source
        self._signer = signer or Signer(None)
        self._writer = _FlushingWriter(client, wait_ms, on_wait)

    def send(self, kind: str, values: dict) -> None:
        record = {"kind": kind, "source": self._source, "time": time.time(), "values": values}
        payload = encode_json(record)
        if len(payload) > TELEMETRY_RECORD_BYTES:
            raise ValueError(f"telemetry record of {len(payload)} bytes exceeds {TELEMETRY_RECORD_BYTES}: "
                             f"{kind} with keys {sorted(values)}")
        padded = np.zeros(TELEMETRY_RECORD_BYTES, dtype=np.uint8)
        padded[:len(payload)] = payload
        length = np.int32(len(payload))
        self._writer.write(TELEMETRY_TABLE, {"json": padded, "length": length, "sig": self._signer.sign(padded, length)})

    def close(self) -> None:
        self._writer.close()
