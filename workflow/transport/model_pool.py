"""The model pool: the learner publishes its newest model (the package's checkpoint files, each a
uint8 array named by its file name) into a one-item reverb table, and every aisrv pulls it when
the table's insert count moves and loads it with the package's own load_model.

A reverb table (not a shared directory) so that aisrv on other machines see the same pool.
Checking for news costs one small `server_info` call; the files travel only when they changed.
Item layout: [version int64, publish wall time float64, meta (JSON as uint8: the arrays' names
and the learner's run counters), sig (the run's HMAC over all the rest), *arrays]. A reader
with the run's secret adopts nothing else (`forged` counts what it refused).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from loguru import logger

from workflow.transport.replay import MODEL_TABLE, decode_json, encode_json, inserts_completed
from workflow.transport.signing import Signer


@dataclass
class PublishedModel:
    version: int
    published_at: float  # wall time on the learner's clock
    weights: dict[str, np.ndarray]
    counters: dict  # the learner's run-wide counters at publication (env_steps, episodes, ...)


class ModelPublisher:
    """Learner side: replaces the pool's item with the given weights."""

    def __init__(self, client, signer: Signer | None = None):
        self._client = client
        self._signer = signer or Signer(None)

    def publish(self, weights: dict[str, np.ndarray], version: int, counters: dict | None = None) -> float:
        names = list(weights)
        published_at = time.time()
        meta = {"names": names, "counters": counters or {}}
        head = [np.int64(version), np.float64(published_at), encode_json(meta)]
        arrays = [np.asarray(weights[name]) for name in names]
        item = head + [self._signer.sign(*head, *arrays)] + arrays
        self._client.insert(item, {MODEL_TABLE: 1.0})
        return published_at


class ModelPoolReader:
    """aisrv side: `fetch_if_new()` returns the pool's model once per publication, else None."""

    def __init__(self, client, signer: Signer | None = None):
        self._client = client
        self._signer = signer or Signer(None)
        self._seen_inserts = -1
        self.forged = 0  # pool items refused: unsigned, badly signed or malformed

    def fetch_if_new(self) -> PublishedModel | None:
        info = self._client.server_info(timeout=10)[MODEL_TABLE]
        inserts = inserts_completed(info)
        if inserts == self._seen_inserts or info.current_size == 0:
            return None
        sample = next(self._client.sample(MODEL_TABLE, 1))
        self._seen_inserts = inserts
        try:
            return unpack_model(sample.data, self._signer)
        except (ValueError, TypeError, KeyError, IndexError) as e:
            self.forged += 1
            logger.warning(f"model pool item refused ({e}); {self.forged} refused so far")
            return None


def unpack_model(flat: list[np.ndarray], signer: Signer) -> PublishedModel:
    """Inverse of the publisher's item layout (each column carries a leading length-1 axis)."""
    columns = [np.asarray(c)[0] for c in flat]
    if len(columns) < 4:
        raise ValueError("not a model pool item")
    if not signer.verify(columns[3], *columns[:3], *columns[4:]):
        raise ValueError("unsigned or badly signed")
    meta = decode_json(columns[2])
    names = meta["names"]
    if len(names) != len(columns) - 4:
        raise ValueError(f"model pool item has {len(columns) - 4} arrays for {len(names)} names")
    return PublishedModel(version=int(columns[0]), published_at=float(columns[1]),
                          weights=dict(zip(names, columns[4:])), counters=meta.get("counters", {}))
