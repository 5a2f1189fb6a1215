"""A SampleData class as flat float32 rows: the platform's SampleData2NumpyData /
NumpyData2SampleData for any list of (field, shape).

Each algorithm's definition.py declares its sample fields once as a `RowLayout`; the row width
(`Config.SAMPLE_DIM`), the converters and the learner's zero-copy batch view all follow from it.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


class RowLayout:
    def __init__(self, fields: Sequence[tuple[str, tuple[int, ...]]], int_fields: Sequence[str] = ()):
        """`fields`: (name, shape) in row order, () for a scalar; `int_fields` come back as int
        (an int64 array for a field with a shape)."""
        self.fields = tuple((name, tuple(shape)) for name, shape in fields)
        self.shapes = dict(self.fields)
        if len(self.shapes) != len(self.fields):
            raise ValueError("a sample field is declared twice")
        self.int_fields = frozenset(int_fields)
        self.slices: dict[str, slice] = {}
        start = 0
        for name, shape in self.fields:
            size = int(np.prod(shape, dtype=np.int64))
            self.slices[name] = slice(start, start + size)
            start += size
        self.dim = start

    def to_row(self, sample) -> np.ndarray:
        """A sample -> (dim,) float32 in field order; a field of the wrong shape is an error."""
        out = np.empty(self.dim, dtype=np.float32)
        for name, shape in self.fields:
            value = np.asarray(getattr(sample, name), dtype=np.float32)
            if value.shape != shape:
                raise ValueError(f"SampleData.{name}: shape {value.shape}, layout declares {shape}")
            out[self.slices[name]] = value.reshape(-1)
        return out

    def from_row(self, arr: np.ndarray, make: Callable):
        """Exact inverse of to_row (arrays are copies, not views of `arr`); `make(**fields)`. A row
        may come as a torch tensor on the learner's device (the 2025 platforms hand them so)."""
        arr = arr.detach().cpu().numpy() if callable(getattr(arr, "detach", None)) else np.asarray(arr)
        if arr.shape != (self.dim,) or arr.dtype != np.float32:
            raise ValueError(f"expected a ({self.dim},) float32 row, got {arr.shape} {arr.dtype}")
        fields = {}
        for name, shape in self.fields:
            part = arr[self.slices[name]]
            fields[name] = part.reshape(shape).copy() if shape else part[0]
        for name in self.int_fields:
            fields[name] = fields[name].astype(np.int64) if self.shapes[name] else int(fields[name])
        return make(**fields)

    def stack(self, samples: Sequence) -> dict[str, np.ndarray]:
        """A list of samples -> {field: (N, *shape) float32}, one copy per field."""
        return {name: np.stack([np.asarray(getattr(s, name), dtype=np.float32) for s in samples])
                for name, _ in self.fields}


def protocol_converters(layout: RowLayout, sample_class: type) -> tuple[Callable, Callable]:
    """The platform's `SampleData2NumpyData` (a sample -> (dim,) float32 in field order) and
    `NumpyData2SampleData` (its exact inverse, copies rather than views) for one layout, named
    so that `@attached` registers them under the platform's names."""
    def SampleData2NumpyData(sample) -> np.ndarray:
        return layout.to_row(sample)

    def NumpyData2SampleData(arr: np.ndarray):
        return layout.from_row(arr, sample_class)

    return SampleData2NumpyData, NumpyData2SampleData
