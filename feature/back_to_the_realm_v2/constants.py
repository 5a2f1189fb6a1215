"""The numbers of back_to_the_realm_v2 (the 2025 competition's game) that the v2 features and
reward read, declared here so the package imports nothing of the simulator: on the platform the
observation comes from the real server, and these are the rules it follows (docs/games/back_to_the_realm_v2.md).
tests/test_features_v2.py checks them against the simulator's own constants.
"""
from __future__ import annotations

import math

GRID_SIZE = 128  # the map is 128 × 128 integer cells (x, z)
#: map_info's size on the HoK track: 11 rows × 11 values, map_info[i]["values"][j] = cell (x - 5 + i,
#: z - 5 + j). The package takes the size from map_info itself (feature.back_to_the_realm_v2.memory), so a 51×51 view
#: (the 28.1.1 preprocessor's default) reads the same way, centred on the hero.
VIEW_SIZE = 11
VIEW_RADIUS = VIEW_SIZE // 2
#: Direction d (0..7) as a cell step (dx, dz), d × 45° counter-clockwise from +x.
DIRECTIONS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
_DIAGONAL = math.sqrt(0.5)
UNIT_VECTORS = ((1.0, 0.0), (_DIAGONAL, _DIAGONAL), (0.0, 1.0), (-_DIAGONAL, _DIAGONAL),
                (-1.0, 0.0), (-_DIAGONAL, -_DIAGONAL), (0.0, -1.0), (_DIAGONAL, -_DIAGONAL))
NUM_MOVES = 8  # act = move_dir + 8 * use_talent
FLASH_CELLS = 16  # the talent's reach; a diagonal goes (16, 16)
MAX_CHESTS = 13  # chest config_ids 1..13

# map_info values
CELL_BLOCKED = 0  # wall, active obstacle, off the map
CELL_CHEST = 4  # a chest not yet taken
CELL_BUFF = 6  # the buff while it can be taken

# organs
ORGAN_CHEST, ORGAN_BUFF, ORGAN_START, ORGAN_END = 1, 2, 3, 4
STATUS_OUT_OF_VIEW, STATUS_NOT_COLLECTABLE, STATUS_COLLECTABLE = -1, 0, 1
#: relative_pos's names (the proto enums'): direction name -> d (0..7), distance band name -> 1..5
DIRECTION_INDEX = {name: d for d, name in enumerate(
    ("East", "NorthEast", "North", "NorthWest", "West", "SouthWest", "South", "SouthEast"))}
DISTANCE_BAND = {name: b for b, name in enumerate(("VerySmall", "Small", "Medium", "Large", "VeryLarge"), start=1)}
BAND_CELLS = 20  # a band is 20 cells wide (the official "distance unit 20"): band b covers (20 (b-1), 20 b]

# normalisers
STEP_NORM = 2000  # the official packages normalise step_no by the largest max_step
TALENT_COOLDOWN_NORM = 100  # ... and the talent's cooldown by its default
BUFF_DURATION_NORM = 50
DISTANCE_NORM = 256  # path lengths in cells
