"""The numbers of Back to the Realm v2 (`back_to_the_realm_v2`, code packages 24.0.x and 28.1.1).

Rules the public sources leave open are the simulator's choices (docs/games/back_to_the_realm_v2.md); those that
change what a package learns are env options (realm/back_to_the_realm_v2/env.py: `OPTIONS`), the rest are fixed here.
"""
from realm.back_to_the_realm.constants import CHEST_SCORE, END_BONUS, STEP_BONUS  # the scoring agrees with 2024

# Grid: integer cells (x, z), 0..127; passable[z, x] like the 2024 Map, Flags[z * 128 + x] in files.
GRID_SIZE = 128
NUM_CELLS = GRID_SIZE * GRID_SIZE
WORLD_UNITS_PER_CELL = 500  # the official `8000 // 500` flash constant

# Directions d = 0..7, d × 45° counter-clockwise from +x (E, NE, N, NW, W, SW, S, SE).
DIRECTIONS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
NUM_ACTIONS = 16  # act = move_dir + 8 * use_talent
DIRECTION_NAMES = ("East", "NorthEast", "North", "NorthWest", "West", "SouthWest", "South", "SouthEast")
DIRECTION_NONE = "RELATIVE_DIRECTION_NONE"
DISTANCE_NAMES = ("RELATIVE_DISTANCE_NONE", "VerySmall", "Small", "Medium", "Large", "VeryLarge")

# Talent: super flash (talent_type 1)
TALENT_TYPE_SUPER_FLASH = 1
FLASH_CELLS = 16  # 8000 world units / 500; a diagonal flash goes (16, 16) cells

# View: map_info is 11 rows × 11 values, map_info[i][j] = cell (x - 5 + i, z - 5 + j); the env's
# `view_size` option serves any odd size of VIEW_SIZES instead (51: the 28.1.1 preprocessor's default)
VIEW_SIZE = 11
VIEW_RADIUS = VIEW_SIZE // 2
VIEW_SIZES = range(11, 52, 2)

# map_info values
CELL_BLOCKED = 0  # wall, active obstacle, outside the 128×128 map
CELL_PASSABLE = 1
CELL_START = 2
CELL_END = 3
CELL_CHEST = 4  # a chest not yet taken
CELL_BUFF = 6  # the buff while it can be taken

# Organs: sub_type and config_id
ORGAN_CHEST, ORGAN_BUFF, ORGAN_START, ORGAN_END = 1, 2, 3, 4
BUFF_CONFIG_ID = 0
FIRST_CHEST_CONFIG_ID = 1  # chests 1..13 in treasure order
START_CONFIG_ID = 21
END_CONFIG_ID = 22
STATUS_OUT_OF_VIEW, STATUS_NOT_COLLECTABLE, STATUS_COLLECTABLE = -1, 0, 1
HIDDEN_POS = {"x": -1, "z": -1}  # the pos of an organ outside the view (and a hidden end_pos)

# Distance bands of relative_pos.l2_distance (Euclidean cells; band b when d <= thresholds[b-1])
DISTANCE_BANDS = {
    "uniform20": (20, 40, 60, 80),  # ▶ b = min(5, max(1, ceil(d / 20))): the official "distance unit 20"
    "v1": (5, 15, 30, 60),  # the 2024 thresholds (2500/7500/15000/30000 world units) in cells
}

# Episode configuration (train_env_conf.toml ranges)
MAX_TREASURES = 13
NUM_OBSTACLES = 6
MAX_STEP_RANGE = (1, 2000)
BUFF_COOLDOWN_RANGE = (1, 2000)
TALENT_COOLDOWN_RANGE = (100, 2000)
MAP_NAMES = ("map_cherry", "map_fish", "map_butterfly")

# Official default points [x, z] of each map (the packages' train_env_conf.toml).
DEFAULT_POINTS = {
    "map_cherry": {"start": (111, 83), "end": (20, 49), "buff": (57, 68)},
    "map_fish": {"start": (49, 26), "end": (80, 114), "buff": (80, 76)},
    "map_butterfly": {"start": (80, 14), "end": (70, 120), "buff": (59, 57)},
}
#: The 28.1.1 package's fixed chests on map_cherry.
CHERRY_TREASURES_28 = ((80, 50), (64, 20), (109, 52), (46, 55), (20, 84), (26, 116), (66, 97), (101, 28))

# Random placement (▶): any reachable passable cell outside the active obstacles, at least this
# Chebyshev distance from every other placed point.
RANDOM_MIN_SPACING = 4

__all__ = [name for name in dir() if name.isupper()] + ["CHEST_SCORE", "END_BONUS", "STEP_BONUS"]
