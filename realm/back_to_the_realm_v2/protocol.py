"""The v2 wire: what `env.reset` / `env.step` hand a package (plain dicts, as the packages
subscript them: `obs["frame_state"]["heroes"][0]["pos"]["x"]`).

    obs = {
        "frame_state": {"step_no", "heroes": [HERO], "organs": [ORGAN, ...]},
        "score_info": {"score", "total_score", "step_no", "treasure_collected_count",
                       "treasure_score", "buff_count", "talent_count"},
        "map_info": [{"values": [11 ints]}] * 11,   # map_info[i]["values"][j] = cell (x-5+i, z-5+j)
        "legal_act": [1, talent_ready],
    }
    HERO = {"hero_id": 1, "pos": {"x", "z"}, "speed_up": 0 | 1,
            "talent": {"talent_type": 1, "status": 1 ready | 0 cooling, "cooldown": steps left},
            "buff_remain_time": steps left}
    ORGAN = {"sub_type": 1 chest | 2 buff | 3 start | 4 end,
             "config_id": 1..13 chest | 0 buff | 21 start | 22 end,
             "status": 1 collectable | 0 not collectable | -1 outside the view,
             "pos": {"x", "z"} ({"x": -1, "z": -1} outside the view),
             "cooldown": steps until the buff is back (0 otherwise),
             "relative_pos": {"direction": "East".."SouthEast", "l2_distance": "VerySmall".."VeryLarge"}}
    extra_info = {"result_code": 0, "result_message": "", "frame_state": obs["frame_state"],
                  "game_info": {"score", "total_score", "step_no", "pos", "start_pos", "end_pos",
                                "treasure_collected_count", "treasure_score", "treasure_count",
                                "buff_count", "talent_count", "buff_remain_time", "buff_duration",
                                "map_info", "obstacle_id"}}

Positions are grid cells (ints 0..127), scores floats, everything else ints. Names of directions
and distance bands are the proto enums' names (`RelativeDirection`, `RelativeDistance`).
Dicts that do not change between steps are shared: treat what the env returns as read-only.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from functools import lru_cache

from realm.back_to_the_realm_v2.constants import DIRECTION_NAMES, DISTANCE_BANDS, DISTANCE_NAMES

OBS_KEYS = ("frame_state", "score_info", "map_info", "legal_act")
FRAME_STATE_KEYS = ("step_no", "heroes", "organs")
HERO_KEYS = ("hero_id", "pos", "speed_up", "talent", "buff_remain_time")
ORGAN_KEYS = ("sub_type", "config_id", "status", "pos", "cooldown", "relative_pos")
SCORE_INFO_KEYS = ("score", "total_score", "step_no", "treasure_collected_count", "treasure_score", "buff_count", "talent_count")
EXTRA_INFO_KEYS = ("result_code", "result_message", "frame_state", "game_info")
GAME_INFO_KEYS = ("score", "total_score", "step_no", "pos", "start_pos", "end_pos", "treasure_collected_count",
                  "treasure_score", "treasure_count", "buff_count", "talent_count", "buff_remain_time", "buff_duration",
                  "map_info", "obstacle_id")
#: The proto enums as the official packages' dicts hold them (name -> value).
RELATIVE_DIRECTION = {"RELATIVE_DIRECTION_NONE": 0, **{name: i + 1 for i, name in enumerate(DIRECTION_NAMES)}}
RELATIVE_DISTANCE = {name: i for i, name in enumerate(DISTANCE_NAMES)}


def direction_sector(dx: int, dz: int) -> int:
    """0..7: the 45° sector around the bearing (dx, dz); ▶ 0 (East) for (0, 0), as in 2024."""
    if dx == 0 and dz == 0:
        return 0
    return round(math.atan2(dz, dx) / (math.pi / 4)) % 8


def distance_band(distance: float, bands: str) -> int:
    """1..5: the band of a Euclidean distance in cells (d <= first threshold -> 1, beyond the last -> 5)."""
    return bisect_left(DISTANCE_BANDS[bands], distance) + 1


@lru_cache(maxsize=None)
def relative_pos(dx: int, dz: int, bands: str) -> dict:
    """`relative_pos` of an object (dx, dz) cells from the hero (a shared, read-only dict)."""
    return {"direction": DIRECTION_NAMES[direction_sector(dx, dz)],
            "l2_distance": DISTANCE_NAMES[distance_band(math.hypot(dx, dz), bands)]}


def position(x: int, z: int) -> dict:
    return {"x": int(x), "z": int(z)}
