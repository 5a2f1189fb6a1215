"""The Kaiwu protocol's data, as typed data classes with the SPEC's field names (SPEC §7).

`reset` returns an `Observation`; `step` returns
`(frame_no, Observation, ScoreInfo, terminated, truncated, EnvInfo)`.
The four 51×51 local maps travel as the platform's protobuf `repeated` fields do: flat
sequences of 2601 numbers in row-major [z][x] order (`RepeatedScalar`), read with `len`,
indexing, iteration, `list(...)` and `np.asarray(...).reshape(51, 51)`. Positions are int32 world
units or cells, as the protocol's `Position` is; `norm_pos` is the only float position.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from realm.back_to_the_realm.constants import NULL_BUCKET, NULL_GRID_DISTANCE


class RepeatedScalar(Sequence):
    """A read-only protobuf-style `repeated` number field over a 2-D window, flattened row-major.

    The window is wrapped, not copied, so a step stays cheap; every conversion (`list`,
    `np.asarray`, a slice) returns fresh values, never a view into the env's state. Integer
    windows yield Python ints, float windows Python floats, as protobuf's int32 / float fields do.
    """

    __slots__ = ("_grid", "_width")

    def __init__(self, grid: np.ndarray):
        self._grid = grid
        self._width = grid.shape[1]

    def __len__(self) -> int:
        return self._grid.size

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._grid.ravel().tolist()[index]  # protobuf slices are plain lists too
        i = operator.index(index)
        n = self._grid.size
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"repeated field index {index} out of range (length {n})")
        return self._grid[i // self._width, i % self._width].item()

    def __iter__(self):
        return iter(self._grid.ravel().tolist())

    def __array__(self, dtype=None, copy=None):
        return np.array(self._grid, dtype=dtype, copy=True).reshape(-1)

    def __eq__(self, other):
        if isinstance(other, RepeatedScalar):
            return np.array_equal(self._grid, other._grid)
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # mutable-looking sequence: unhashable, like protobuf containers

    def __repr__(self) -> str:
        head = ", ".join(str(v) for v in self[:8])
        return f"RepeatedScalar([{head}, ...], len={len(self)})"


def as_grid(field, dtype=np.float32) -> np.ndarray:
    """A flat 2601-long map field as a fresh (51, 51) array, [z][x]."""
    flat = np.asarray(field, dtype=dtype)
    side = int(round(flat.size ** 0.5))
    return flat.reshape(side, side)


@dataclass(slots=True)
class Position:
    """A world point (x, z) in int32 world units, or in `grid_pos` the axis-swapped cell
    (x = zc, z = xc). `norm_pos` reuses it with floats (x / 64000, z / 64000)."""

    x: int
    z: int


@dataclass(slots=True, frozen=True)
class RelativePosition:
    """Where an object lies from the hero.

    direction: 0 none, 1 East, 2 NE, 3 North, 4 NW, 5 West, 6 SW, 7 South, 8 SE.
    l2_distance / path_distance: buckets 1..5. grid_distance: BFS cells / 256.
    """

    direction: int
    l2_distance: int
    path_distance: int
    grid_distance: float

    @property
    def is_null(self) -> bool:
        return self.direction == 0


#: The value of an absent, collected or unreachable object.
NULL_RELATIVE_POSITION = RelativePosition(0, NULL_BUCKET, NULL_BUCKET, NULL_GRID_DISTANCE)


@dataclass(slots=True)
class RealmFeature:
    norm_pos: Position  # (x / 64000, z / 64000)
    grid_pos: Position  # axis-swapped: x = zc, z = xc (SPEC §1)
    start_pos: RelativePosition
    end_pos: RelativePosition
    buff_pos: RelativePosition
    treasure_pos: list[RelativePosition]  # 15 entries, index i <-> position id i + 1
    # 2601 values each, row-major [z][x] (index = row × 51 + column), hero at index 1300
    obstacle_map: RepeatedScalar  # int: 1 passable, 0 blocked or off-map
    memory_map: RepeatedScalar  # float: visits × 0.2 capped at 1, read before this step's increment
    treasure_map: RepeatedScalar  # int: 1 on cells of live chests
    end_map: RepeatedScalar  # int: 1 on the end's cell


@dataclass(slots=True)
class Observation:
    legal_act: list[int]  # [1, flash_ready]: moves always allowed, flashes when ready
    feature: RealmFeature


@dataclass(slots=True)
class ScoreInfo:
    score: float  # running chest score (100 per chest)
    total_score: float  # = score until the end, then the final score (0 on timeout)
    treasure_count: int
    buff_count: int
    talent_count: int


@dataclass(slots=True)
class Talent:
    talent_type: int
    status: int  # 1 ready, 0 cooling down
    cooldown: int  # ms left


@dataclass(slots=True)
class HeroState:
    hero_id: int
    pos: Position  # world
    speed_up: int  # 1 while the buff is active
    talent: Talent


@dataclass(slots=True)
class Organ:
    sub_type: int  # 1 chest, 2 buff
    config_id: int  # position id
    status: int  # 1 collectable
    pos: Position  # world
    cooldown: int  # ms until it reappears (buff), 0 otherwise


@dataclass(slots=True)
class FrameState:
    frame_no: int  # the number `step` returns: 1 after reset, +3 per step
    heroes: list[HeroState]
    organs: list[Organ]


@dataclass(slots=True)
class GameInfo:
    score: float
    total_score: float
    step_no: int
    pos: Position  # world
    treasure_count: int
    treasure_score: float
    buff_count: int
    talent_count: int
    buff_remain_time: int  # ms of speed-up left
    buff_duration: int  # ms a buff lasts


@dataclass(slots=True)
class EnvInfo:
    frame_state: FrameState
    game_info: GameInfo


@dataclass(slots=True)
class EpisodeConfig:
    """A validated `usr_conf["diy"]` with the chest ids of this episode resolved."""

    start: int
    end: int
    treasure_random: int
    treasure_num: int
    treasure_id: list[int]
    max_step: int
    talent_type: int
