"""The game's numbers in one place (SPEC.md). Rules marked with ▶ in the SPEC are the
simulator's own choices: change them here only."""

# Grid and coordinates (SPEC §1)
GRID_SIZE = 128
CELL_WIDTH = 500
ORIGIN_X = -2250  # world x of the grid's lower-left corner
ORIGIN_Z = -5250  # world z of the grid's lower-left corner
WORLD_SIZE = 64000  # norm_pos divides by this
NUM_POSITIONS = 16  # special positions 0..15
BUFF_ID = 0
NUM_TREASURE_SLOTS = 15  # treasure_pos index i <-> position id i + 1

# Time (SPEC §4)
FRAMES_PER_STEP = 3
MS_PER_STEP = 200  # ≈ 3 frames of 66 ms
SUB_STEPS = 3  # ▶ movement integrated in 3 sub-steps

# Movement (SPEC §4)
STEP_LENGTH = 700
BUFF_STEP_LENGTH = 1000
STEP_JITTER_RANGE = (660, 711)
BUFF_STEP_JITTER_RANGE = (900, 1100)

# Super flash (SPEC §5)
FLASH_DISTANCE = 8000
FLASH_COOLDOWN_STEPS = 606
FLASH_BLOCKED_RULES = ("fail", "nearest")  # ▶ default "fail" (2024 rule)
TALENT_TYPE_SUPER_FLASH = 1

# Objects and scoring (SPEC §6)
PICKUP_RADIUS = 1000  # ▶ checked after every sub-step
CHEST_SCORE = 100
BUFF_DURATION_STEPS = 50
BUFF_RESPAWN_STEPS = 454
END_BONUS = 150
STEP_BONUS = 0.2  # per unused step
DEFAULT_MAX_STEP = 2000
MAX_MAX_STEP = 2000  # ▶ the longest episode usr_conf may ask for (the platform evaluates at 2000)

# Observations (SPEC §7)
VIEW_SIZE = 51
VIEW_RADIUS = 25
MEMORY_INCREMENT = 0.2
GRID_DISTANCE_SCALE = 256
L2_BUCKETS = (2500, 7500, 15000, 30000)  # ▶ world units -> 1..5
PATH_BUCKETS = (5, 15, 30, 60)  # ▶ cells -> 1..5
NULL_BUCKET = 5
NULL_GRID_DISTANCE = 1.0

# Organ sub-types in env_info.frame_state.organs
ORGAN_CHEST = 1
ORGAN_BUFF = 2

# Simulator choices the SPEC leaves open (▶), used by realm/back_to_the_realm/env.py. Beside the numbers below:
# - the step length is fixed when the step starts (a buff taken mid-step speeds up the next one);
# - reaching the end stops the hero at that sub-step; chests taken in the same sub-step count;
# - timers (flash cooldown, buff duration and respawn) start in the step of their event and count
#   down at the end of each later step: a timer of N covers exactly the N following steps;
# - wall sliding tries the x component first at an outer corner, and a sub-step may not cut a cell
#   corner whose two side cells are both blocked (movement stays 4-connected like BFS);
# - flash_blocked="nearest" lands on the centre of the passable cell whose centre is nearest to the
#   target (ties: lowest (zc, xc));
# - RelativePosition is measured from the hero's cell centre (realm/back_to_the_realm/lookups.py);
# - reset is not a step: it does not mark the memory map.
END_REACH_RADIUS = PICKUP_RADIUS  # ▶ the end is reached within the pick-up radius, checked like a pick-up
DEFAULT_FLASH_BLOCKED = "fail"
HERO_ID = 1  # frame_state.heroes[0].hero_id
BUFF_DURATION_MS = BUFF_DURATION_STEPS * MS_PER_STEP
NUM_ACTIONS = 16  # 0..7 move in direction d, 8..15 flash in direction d - 8
