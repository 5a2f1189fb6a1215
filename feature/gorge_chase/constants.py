"""The numbers of gorge_chase that the features and the reward read, declared here so the
package imports nothing of the simulator: on the platform the observation comes from the real
server, and these are the rules it follows (docs/games/gorge_chase.md). tests/test_gorge_features.py
checks them against the simulator's own constants."""
from __future__ import annotations

GRID_SIZE = 128  # the map is 128 × 128 cells (x right, z down)
VIEW_RADIUS = 10  # map_info: 21 rows (z) × 21 values (x), map_info[r][c] = cell (x - 10 + c, z - 10 + r)
VIEW_SIZE = 2 * VIEW_RADIUS + 1
NUM_MOVES = 8  # act = direction + 8 × flash
NUM_ACTIONS = 2 * NUM_MOVES
#: direction d (0..7) as a cell step (dx, dz): E, NE, N, NW, W, SW, S, SE, z downward
DIRECTIONS = ((1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1))
FLASH_RANGE, FLASH_RANGE_DIAGONAL = 10, 8  # a flash lands on the farthest walkable cell within these
MAX_MONSTERS = 2
MAX_CHESTS = 10  # treasure_count 0..10
DISTANCE_BUCKETS = 6  # hero_l2_distance: 30-cell Euclidean buckets 0..5
RELATIVE_DIRECTIONS = 9  # hero_relative_direction: 0 same cell, 1..8 E, NE, N, NW, W, SW, S, SE
SUB_TYPE_TREASURE, SUB_TYPE_BUFF = 1, 2
STATUS_AVAILABLE = 1
BUFF_DURATION = 50  # steps of +1 cell per move after a buff
CAPTURE_RADIUS = 1  # caught: a monster within Chebyshev 1 after the step

# normalisers
STEP_NORM = 1000  # the official max_step
CHEST_STEP_LIMIT = 60  # path steps searched from the chests toward the hero (the coarse crops' reach)
FAR = 20  # BFS cells beyond which a monster counts as far (the view's reach)
SPAWN_NORM = 300  # the official monster_interval
SPEEDUP_NORM = 500  # the official monster_speedup
