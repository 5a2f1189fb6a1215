"""The one mechanism behind every game's model inputs: a game's layout module declares its map
channels and state blocks as tables of these, and the sizes (channels, state slices, STATE_DIM)
follow from the tables, so a new feature is one row."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

Fill = Callable[..., Any]  # the game's observation (and what else its layout hands) -> numbers


@dataclass(frozen=True)
class MapChannel:
    name: str
    fill: Fill  # -> a (map size, map size) array


@dataclass(frozen=True)
class StateBlock:
    name: str
    size: int
    fill: Fill  # -> `size` numbers


def state_slices(blocks: Sequence[StateBlock]) -> dict[str, slice]:
    """Each block's slice of the state vector, in table order; ValueError on a name declared twice."""
    out, start = {}, 0
    for b in blocks:
        if b.name in out:
            raise ValueError(f"state block {b.name!r} is declared twice")
        out[b.name] = slice(start, start + b.size)
        start += b.size
    return out


def fill_tables(source, map_layout: Sequence[MapChannel], map_shape: tuple, state_layout: Sequence[StateBlock],
                state_slices: dict[str, slice], state_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(map tensor, state vector), float32, of `source` (what the fills read) by a game's tables;
    ValueError naming a block that filled a different number of values than it declares. When
    every block fills a flat list of its size, in the state's order, the state is one conversion
    of their concatenation rather than one per block (the same float32 numbers)."""
    map_tensor = np.empty(map_shape, dtype=np.float32)
    for i, channel in enumerate(map_layout):
        map_tensor[i] = channel.fill(source)
    filled = [block.fill(source) for block in state_layout]
    start = 0
    for block, values in zip(state_layout, filled):
        if type(values) is not list or len(values) != block.size or state_slices[block.name].start != start:
            break
        start += block.size
    else:
        if start == state_dim:
            try:
                return map_tensor, np.array([v for values in filled for v in values], dtype=np.float32)
            except (TypeError, ValueError):  # a nested value: the per-block conversion below names its block
                pass
    state = np.empty(state_dim, dtype=np.float32)
    for block, values in zip(state_layout, filled):
        values = np.asarray(values, dtype=np.float32).reshape(-1)
        if values.size != block.size:
            raise ValueError(f"state block {block.name!r} filled {values.size} numbers, declared {block.size}")
        state[state_slices[block.name]] = values
    return map_tensor, state
