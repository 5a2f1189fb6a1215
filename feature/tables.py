"""The one mechanism behind every game's model inputs: a game's layout module declares its map
channels and state blocks as tables of these, and the sizes (channels, state slices, STATE_DIM)
follow from the tables, so a new feature is one row."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

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
