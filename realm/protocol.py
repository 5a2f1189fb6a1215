"""The Kaiwu protocol's data, as typed data classes with the SPEC's field names (SPEC §7).

`reset` returns an `Observation`; `step` returns
`(frame_no, Observation, ScoreInfo, terminated, truncated, EnvInfo)`.
The 51×51 local maps are float32 numpy arrays laid out [z][x] (row = zc offset, column = xc
offset, hero at [25][25]); the real server sends nested lists, numpy keeps a step cheap.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from realm.constants import NULL_BUCKET, NULL_GRID_DISTANCE


@dataclass(slots=True)
class Position:
    """A world point (x, z), or in `grid_pos` the axis-swapped cell (x = zc, z = xc)."""

    x: float
    z: float


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
    obstacle_map: np.ndarray  # (51, 51) 1 passable, 0 blocked or off-map
    memory_map: np.ndarray  # (51, 51) visits × 0.2 capped at 1, read before this step's increment
    treasure_map: np.ndarray  # (51, 51) 1 on cells of live chests
    end_map: np.ndarray  # (51, 51) 1 on the end's cell


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
