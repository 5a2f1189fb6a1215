"""`ArraySpec`: shape, dtype and distribution class of one array (the package's conf/ specs)."""
from __future__ import annotations


class ArraySpec:
    def __init__(self, shape, dtype, pdclass="kaiwudrl.common.algorithms.distribution.CategoricalDist"):
        self._shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
        self._dtype = dtype
        self._pdclass = pdclass

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def pdclass(self):
        return self._pdclass

    def __repr__(self) -> str:
        return f"ArraySpec({self._shape})"
