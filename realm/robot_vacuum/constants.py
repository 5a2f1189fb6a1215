"""The fixed numbers of robot_vacuum 13.0.1 (docs/games/robot_vacuum.md), in one place so the env, the
reference policy, the generator, the renderer and the tests agree on them.

Coordinates are integer cells (x, z): x grows to the right, z grows downward, (0, 0) is the
top-left cell; grids are indexed [z, x]; a cell's flat id is z * 128 + x.
"""
from __future__ import annotations

GRID_SIZE = 128
NUM_CELLS = GRID_SIZE * GRID_SIZE
VIEW_RADIUS = 10  # the 21x21 view: Chebyshev distance <= 10 from the hero
VIEW_SIZE = 2 * VIEW_RADIUS + 1

NUM_ACTIONS = 8
#: action a: (dx, dz), z downward (0 right, 1 up-right, 2 up, 3 up-left, 4 left, 5 down-left, 6 down, 7 down-right)
DIRECTIONS = ((1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1))
DIRECTION_NAMES = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")
ACTION_HELP = f"an int in 0..{NUM_ACTIONS - 1} (move E, NE, N, NW, W, SW, S, SE by one cell)"

# The game's internal values (documented, not settable through train_env_conf.toml)
BATTERY_PER_STEP = 1  # every step, a blocked move too
NPC_RADIUS = 10  # an official robot stays within +-10 cells (x and z) of its spawn point: a 21x21 square
COLLISION_RANGE = 1  # the hero fails within Chebyshev distance 1 of an official robot (its 3x3)
CHARGER_SIZE = 3  # a charger's footprint is 3x3 cells
HERO_SPAWN_CLEARANCE = 5  # the hero spawns more than 5 cells from every official robot's spawn point
MAX_CHARGERS = 4  # charger sites per map
MAX_ROBOTS = 4  # official robots at most

# map_info cell values (the data protocol's 视野网格值协议)
CELL_BLOCKED = 0  # obstacle or off the map
CELL_CLEAN = 1  # walkable, clean (chargers too)
CELL_DIRT = 2  # walkable, dirty

SUB_TYPE_CHARGER = 1  # OrganState.sub_type
HIDDEN_POS = (-1, -1)  # an official robot out of the 21x21 view (npc_out_of_view = "hidden")

# usr_conf (train_env_conf.toml [env_conf]): the official defaults and ranges
OPEN_MAP_IDS = tuple(range(1, 11))
MAP_REPOSITORY = tuple(range(1, 16))  # the platform validator's ids: 10 open, 5 hidden
DEFAULT_ENV_CONF = {
    "map": list(OPEN_MAP_IDS),
    "map_random": False,
    "robot_count": 4,
    "charger_count": 4,
    "max_step": 1000,
    "battery_max": 200,
}
ROBOT_COUNT_RANGE = (1, MAX_ROBOTS)
CHARGER_COUNT_RANGE = (1, MAX_CHARGERS)
MAX_STEP_RANGE = (1, 2000)
BATTERY_MAX_RANGE = (100, 999)
