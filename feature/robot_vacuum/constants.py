"""The numbers of robot_vacuum that the features and the reward read, declared here so the
package imports nothing of the simulator: on the platform the observation comes from the real
server, and these are the rules it follows (docs/games/robot_vacuum.md).
tests/test_vacuum_agent.py checks them against the simulator's own constants."""
from __future__ import annotations

GRID_SIZE = 128  # the map is 128 × 128 cells (x right, z down)
VIEW_RADIUS = 10  # map_info: 21 rows (z) × 21 values (x), map_info[r][c] = cell (x - 10 + c, z - 10 + r)
VIEW_SIZE = 2 * VIEW_RADIUS + 1
NUM_MOVES = 8  # actions 0..7 move one cell; the package's model has 16 logits, 8..15 always illegal
#: direction d (0..7) as a cell step (dx, dz): E, NE, N, NW, W, SW, S, SE, z downward
DIRECTIONS = ((1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1))
CELL_BLOCKED, CELL_CLEAN, CELL_DIRT = 0, 1, 2  # map_info's values (chargers read 1)
SUB_TYPE_CHARGER = 1  # OrganState.sub_type of a charger
CHARGER_SIZE = 3  # a charger's footprint: 3 × 3 cells
MAX_CHARGERS = 4
MAX_ROBOTS = 4
ROBOT_RADIUS = 10  # an official robot stays within ±10 cells (x and z) of its spawn point
CONTACT_RANGE = 1  # the hero fails with an official robot within Chebyshev distance 1 after a step

# normalisers
STEP_NORM = 1000  # the official max_step
BATTERY_NORM = 200  # the official battery_max
CHARGE_NORM = 10  # charges in an episode (the reference policy makes 5-7)
