"""The game's numbers the features and the reward read, and the helpers they need to read the
protocol, declared here so this package imports nothing of the simulator: on the platform the
observation comes from the real server, and these are the rules it follows (SPEC.md).
tests/test_features.py checks every value against the simulator's own constants.
"""
from __future__ import annotations

import math

import numpy as np

# Grid and coordinates
CELL_WIDTH = 500  # world units per grid cell
ORIGIN_X = -2250  # world x of the grid's lower-left corner
ORIGIN_Z = -5250  # world z of the grid's lower-left corner
WORLD_SIZE = 64000  # norm_pos = world position / WORLD_SIZE
NUM_POSITIONS = 16  # special positions 0..15 (0 is the buff)
NUM_TREASURE_SLOTS = 15  # treasure_pos index i <-> position id i + 1

# Movement and the flash
STEP_LENGTH = 700
BUFF_STEP_LENGTH = 1000
FLASH_DISTANCE = 8000
TALENT_TYPE_SUPER_FLASH = 1
NUM_ACTIONS = 16  # 0..7 move in direction d, 8..15 flash in direction d - 8
_DIAGONAL = math.sqrt(0.5)
#: Direction d (0..7) as a world (x, z) unit vector, d × 45° counter-clockwise from +x.
UNIT_VECTORS = ((1.0, 0.0), (_DIAGONAL, _DIAGONAL), (0.0, 1.0), (-_DIAGONAL, _DIAGONAL),
                (-1.0, 0.0), (-_DIAGONAL, -_DIAGONAL), (0.0, -1.0), (_DIAGONAL, -_DIAGONAL))

# Episodes
DEFAULT_MAX_STEP = 2000

# Observations
VIEW_SIZE = 51  # the local maps are VIEW_SIZE × VIEW_SIZE cells centred on the hero
VIEW_RADIUS = 25
GRID_DISTANCE_SCALE = 256  # RelativePosition.grid_distance = BFS cells / GRID_DISTANCE_SCALE
GRID_SIZE = 128  # the map is GRID_SIZE × GRID_SIZE cells
MEMORY_INCREMENT = 0.2  # memory_map: added per step ended in a cell, capped at 1
L2_BUCKETS = (2500, 7500, 15000, 30000)  # RelativePosition.l2_distance: world units -> buckets 1..5
PATH_BUCKETS = (5, 15, 30, 60)  # RelativePosition.path_distance: BFS cells -> buckets 1..5
NULL_BUCKET = 5  # a null RelativePosition's l2_distance and path_distance
NULL_GRID_DISTANCE = 1.0  # a null RelativePosition's grid_distance
ORGAN_CHEST = 1  # frame_state.organs[i].sub_type
ORGAN_BUFF = 2
MS_PER_STEP = 200  # organ and talent cooldowns are in ms; one step is 3 frames of ~66 ms


def is_null(rel) -> bool:
    """A RelativePosition of an object that is absent, collected or unreachable (direction 0)."""
    return int(rel.direction) == 0


def as_grid(field, dtype=np.float32) -> np.ndarray:
    """A local map as the wire gives it (a flat repeated field of VIEW_SIZE² values, row-major
    [z][x]) -> a fresh (VIEW_SIZE, VIEW_SIZE) array."""
    return np.asarray(field, dtype=dtype).reshape(VIEW_SIZE, VIEW_SIZE)


def cell_of(x: float, z: float) -> tuple[int, int]:
    """World point -> (xc, zc) grid cell (may fall outside the map)."""
    return int((x - ORIGIN_X) // CELL_WIDTH), int((z - ORIGIN_Z) // CELL_WIDTH)
