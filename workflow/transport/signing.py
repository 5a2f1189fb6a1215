"""HMAC signatures on what travels through the replay server.

The reverb server has no authentication: anyone who reaches its port can insert. With a shared
secret, the learner signs the weights it publishes and every aisrv signs its replay items and
telemetry records (HMAC-SHA256 over the exact bytes of the payload, its version and length);
unsigned or badly signed items are dropped and counted. The secret is generated per run for a
single-machine run, or set with `app.shared_secret` / REALM_SHARED_SECRET across machines.
"""
from __future__ import annotations

import hashlib
import hmac

import numpy as np

SIGNATURE_BYTES = 32
SECRET_ENV = "REALM_SHARED_SECRET"
_UNSIGNED = np.zeros(SIGNATURE_BYTES, dtype=np.uint8)


class Signer:
    """Signs and verifies byte payloads; without a secret it signs with zeros and accepts all."""

    def __init__(self, secret: str | None):
        self._key = secret.encode() if secret else None

    @property
    def enabled(self) -> bool:
        return self._key is not None

    def _digest(self, parts) -> bytes:
        mac = hmac.new(self._key, digestmod=hashlib.sha256)
        for part in parts:
            mac.update(np.ascontiguousarray(part).tobytes())
        return mac.digest()

    def sign(self, *parts) -> np.ndarray:
        """(SIGNATURE_BYTES,) uint8 over the parts' bytes (numpy arrays or scalars)."""
        if self._key is None:
            return _UNSIGNED.copy()
        return np.frombuffer(self._digest(parts), dtype=np.uint8).copy()

    def verify(self, signature, *parts) -> bool:
        if self._key is None:
            return True
        got = np.asarray(signature, dtype=np.uint8).reshape(-1)
        return got.size == SIGNATURE_BYTES and hmac.compare_digest(got.tobytes(), self._digest(parts))
