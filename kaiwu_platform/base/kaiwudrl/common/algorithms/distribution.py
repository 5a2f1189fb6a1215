"""`CategoricalDist`, named by a package's action spec. On the platform it is a TensorFlow
distribution its remote actors sample from; here a package's own Agent.predict acts, so the
class exists to be named, and building one says so."""
from __future__ import annotations


class CategoricalDist:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "CategoricalDist is the platform's TensorFlow action distribution for its remote actors; "
            "this toolkit acts through the package's own Agent.predict / exploit")
