"""The 2025 Kaiwu protocol's data (code package 18.0.2), as typed data classes.

Field names and order are the proto's (`custom.proto` of `arena.back_to_the_realm`), so code
written against the platform's protobuf messages reads these unchanged: `reset` returns
`(Observation, State)`, `step` returns `(frame_no, Observation, ScoreInfo, terminated,
truncated, State)`. Fields the proto types int32 hold Python ints; `GameInfo.score` and
`GameInfo.total_score` are the proto's only floats.
"""
from __future__ import annotations

from dataclasses import dataclass

from realm.back_to_the_realm.protocol import HeroState, Organ, Position, Talent  # noqa: F401  (the proto's names too)


@dataclass(slots=True)
class RealmHero(HeroState):
    """The proto's hero: the 2024 protocol's fields (hero_id, pos, speed_up, talent)."""


@dataclass(slots=True)
class RealmOrgan(Organ):
    """The proto's organ: the 2024 protocol's fields (sub_type, config_id, status, pos, cooldown)."""


@dataclass(slots=True)
class FrameState:
    frame_no: int
    heroes: list[RealmHero]
    organs: list[RealmOrgan]  # only the organs within the 51×51 view


@dataclass(slots=True)
class GameInfo:
    score: float  # running chest score
    total_score: float  # = score until the end, then the final score (0 on timeout)
    step_no: int
    pos: Position  # the hero, world
    start_pos: Position  # the start position, world
    end_pos: Position  # the end position, world
    treasure_collected_count: int  # chests collected so far
    treasure_score: int
    treasure_count: int  # the episode's total chest count
    buff_count: int
    talent_count: int
    buff_remain_time: int  # ms of speed-up left
    buff_duration: int  # ms a buff lasts


@dataclass(slots=True)
class MapInfo:
    """One row of the 51×51 local obstacle map: 1 passable, 0 blocked or outside the map."""

    values: list[int]


@dataclass(slots=True)
class Observation:
    frame_state: FrameState
    game_info: GameInfo
    map_info: list[MapInfo]  # 51 rows of 51 values
    legal_act: list[int]  # [1, flash_ready]


@dataclass(slots=True)
class ScoreInfo:
    score: int  # int32 on the wire: the platform truncates the game's float score
    total_score: int
    treasure_count: int  # chests collected so far
    buff_count: int
    talent_count: int


@dataclass(slots=True)
class State:
    """The proto's empty `State` message."""
