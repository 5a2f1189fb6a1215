"""The fixed numbers of gorge_chase 15.0.1 (docs/games/gorge_chase.md), in one place so the env, the
reference policy, the renderer and the tests agree on them.

Coordinates are integer cells (x, z): x grows to the right, z grows downward, (0, 0) is the
top-left cell; grids are indexed [z, x].
"""
from __future__ import annotations

GRID_SIZE = 128
NUM_CELLS = GRID_SIZE * GRID_SIZE
VIEW_RADIUS = 10  # the 21x21 view: Chebyshev distance <= 10 from the hero
VIEW_SIZE = 2 * VIEW_RADIUS + 1

NUM_ACTIONS = 16
NUM_MOVES = 8
#: direction d (action d = move, action 8 + d = flash): (dx, dz), z downward
DIRECTIONS = ((1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1))
DIRECTION_NAMES = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")
ACTION_HELP = f"an int in 0..{NUM_ACTIONS - 1} (0..7 move E,NE,N,NW,W,SW,S,SE; 8..15 flash in direction act - 8)"

FLASH_RANGE = 10  # orthogonal flash
FLASH_RANGE_DIAGONAL = 8  # diagonal flash

STEP_SCORE = 1.5  # per step survived (the catching step counts)
TREASURE_SCORE = 100  # per chest

# Internal fixed values of the game script (not settable through train_env_conf.toml)
BUFF_DURATION = 50  # steps of +1 cell per move after a pick-up
BUFF_EXTRA_SPEED = 1
HERO_SPEED = 1
MONSTER_SPEED = 1  # monster_init_speed
MONSTER_COUNT = 2
TREASURE_MIN_DISTANCE = 15.0  # chests: Euclidean distance must be > 15 (first 200 tries)
BUFF_MIN_DISTANCE = 10.0  # buffs: Euclidean distance must be >= 10 (first 200 tries)
SPAWN_TRIES = 200
SPAWN_FALLBACK_TRIES = 50
SPAWN_MIN, SPAWN_MAX = 5, GRID_SIZE - 5  # chests and buffs: x, z drawn in 5..123
MONSTER2_HISTORY_STEPS = 10  # monster 2 spawns where the hero stood 10 steps earlier
SPAWN_SEARCH_RADIUS = 10  # fallback search radius for an occupied monster-2 cell
HISTORY_LENGTH = 32
BACK_STEP_PENALTY = 0.25
SAME_AXIS_PENALTY = 0.05
TIE_EPS = 1e-6

# Organs
SUB_TYPE_TREASURE = 1
SUB_TYPE_BUFF = 2
STATUS_AVAILABLE = 1
STATUS_REFRESHING = 0

HIDDEN_POS = (-1, -1)  # a monster out of view

# Derived fields (SPEC §3.4)
DISTANCE_BUCKETS = 6  # hero_l2_distance = clamp(floor(euclid * 6 / 180), 0, 5)
DISTANCE_SCALE = 180.0


def distance_bucket(dx: int, dz: int) -> int:
    """hero_l2_distance of an offset: 30-cell Euclidean buckets 0..5."""
    bucket = int((dx * dx + dz * dz) ** 0.5 * DISTANCE_BUCKETS / DISTANCE_SCALE)
    return min(max(bucket, 0), DISTANCE_BUCKETS - 1)


def relative_direction(dx: int, dz: int) -> int:
    """hero_relative_direction of an offset (target - hero) by the signs only: 0 same cell,
    1 E, 2 NE, 3 N, 4 NW, 5 W, 6 SW, 7 S, 8 SE (z downward, so N is dz < 0)."""
    sx = (dx > 0) - (dx < 0)
    sz = (dz > 0) - (dz < 0)
    return _SIGN_DIRECTION[(sx, sz)]


_SIGN_DIRECTION = {(0, 0): 0, (1, 0): 1, (1, -1): 2, (0, -1): 3, (-1, -1): 4, (-1, 0): 5, (-1, 1): 6, (0, 1): 7,
                   (1, 1): 8}

# usr_conf (train_env_conf.toml [env_conf]): the official defaults and ranges (SPEC §5)
OPEN_MAP_IDS = tuple(range(1, 11))
DEFAULT_ENV_CONF = {
    "map": list(OPEN_MAP_IDS),
    "map_random": False,
    "treasure_count": 10,
    "buff_count": 2,
    "buff_cooldown": 200,
    "talent_cooldown": 100,
    "monster_interval": 300,
    "monster_speedup": 500,
    "max_step": 1000,
}
TREASURE_COUNT_RANGE = (0, 10)
BUFF_COUNT_RANGE = (0, 2)
BUFF_COOLDOWN_RANGE = (1, 500)
TALENT_COOLDOWN_RANGE = (50, 2000)
MONSTER_INTERVAL_RANGE = (11, 2000)  # or -1 (random in the range), -2 (no second monster: the script's extension)
MONSTER_SPEEDUP_RANGE = (1, 2000)  # or -1 (random in the range)
MAX_STEP_RANGE = (1, 2000)
RANDOM_VALUE = -1
NO_SECOND_MONSTER = -2
