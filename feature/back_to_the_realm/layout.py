"""The model's input, declared once.

Two tables say what the network sees and how each part is read from an observation:
`MAP_LAYOUT` (one 51×51 channel per entry) and `STATE_LAYOUT` (named blocks of the flat state
vector). `feature.back_to_the_realm.observation.observation_process` fills the arrays by walking these tables, and
`agent.model` takes its input sizes from the constants derived below, so adding a feature is one
new entry here: the model, the sample layout and the checkpoints follow.

A `fill` function receives the observation's `feature` and the step's `env_info` (None after
a reset, which returns the observation alone) and returns the block's numbers.
The maps arrive flat (2601 values, row-major [z][x], as on the wire); `as_grid` makes a
channel of one.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from feature.segments import NUM_ACTIONS, NUM_FLASHES, NUM_MOVES  # noqa: F401 (every game's: 8 moves, 8 flashes)
from feature.tables import MapChannel, StateBlock, state_slices  # noqa: F401 (the layout's row types)
from feature.back_to_the_realm.constants import NUM_ACTIONS as GAME_NUM_ACTIONS
from feature.back_to_the_realm.constants import VIEW_SIZE, as_grid, is_null



# Chest slots the state vector tracks: the default chest ids of SPEC §2 (1 is the end, 2 the
# start). A curriculum that moves start/end elsewhere puts chests on ids 1 and 2: widen this to
# range(1, 16) and STATE_DIM follows.
CHEST_SLOT_IDS: tuple[int, ...] = tuple(range(3, 16))


def _present(rel) -> float:
    return 0.0 if is_null(rel) else 1.0


def _direction(rel) -> tuple[float, float]:
    """The protocol's 8-way direction from the hero to the object (1 East, 2 NE, ... 8 SE) as a
    unit vector (x, z); (0, 0) when the object is absent. Which way to go, where the BFS distance
    only says how far."""
    if is_null(rel):
        return 0.0, 0.0
    angle = (int(rel.direction) - 1) * math.pi / 4
    return math.cos(angle), math.sin(angle)


MAP_LAYOUT: tuple[MapChannel, ...] = (
    MapChannel("obstacle", lambda f, info: as_grid(f.obstacle_map)),  # 1 passable, 0 blocked / off-map
    MapChannel("memory", lambda f, info: as_grid(f.memory_map)),  # 0.2 per earlier visit, capped at 1
    MapChannel("treasure", lambda f, info: as_grid(f.treasure_map)),  # 1 on live chests
    MapChannel("end", lambda f, info: as_grid(f.end_map)),  # 1 on the end's cell
)

STATE_LAYOUT: tuple[StateBlock, ...] = (
    StateBlock("norm_pos", 2, lambda f, info: (f.norm_pos.x, f.norm_pos.z)),
    StateBlock("chest_present", len(CHEST_SLOT_IDS),
               lambda f, info: [_present(f.treasure_pos[i - 1]) for i in CHEST_SLOT_IDS]),
    StateBlock("chest_distance", len(CHEST_SLOT_IDS),  # BFS cells / 256; 1.0 when absent
               lambda f, info: [f.treasure_pos[i - 1].grid_distance for i in CHEST_SLOT_IDS]),
    StateBlock("buff_present", 1, lambda f, info: (_present(f.buff_pos),)),
    StateBlock("buff_distance", 1, lambda f, info: (f.buff_pos.grid_distance,)),
    StateBlock("end_distance", 1, lambda f, info: (f.end_pos.grid_distance,)),
    StateBlock("chest_direction", 2 * len(CHEST_SLOT_IDS),  # (x, z) unit vector per slot; 0 when absent
               lambda f, info: [v for i in CHEST_SLOT_IDS for v in _direction(f.treasure_pos[i - 1])]),
    StateBlock("buff_direction", 2, lambda f, info: _direction(f.buff_pos)),
    StateBlock("end_direction", 2, lambda f, info: _direction(f.end_pos)),
)

# --- derived: never edit below, edit the tables above -------------------------------------------

MAP_CHANNELS: int = len(MAP_LAYOUT)
MEMORY_CHANNEL: int = [c.name for c in MAP_LAYOUT].index("memory")
MAP_SIZE: int = VIEW_SIZE
MAP_SHAPE: tuple[int, int, int] = (MAP_CHANNELS, MAP_SIZE, MAP_SIZE)


STATE_SLICES: dict[str, slice] = state_slices(STATE_LAYOUT)
STATE_DIM: int = sum(b.size for b in STATE_LAYOUT)

#: (map channels, map size, state size): the network's input (agent.model) for these features
INPUT_SHAPE: tuple[int, int, int] = (MAP_CHANNELS, MAP_SIZE, STATE_DIM)
assert NUM_ACTIONS == GAME_NUM_ACTIONS, "the action layout must cover the game's actions exactly"


def earlier_visits(map_tensor: np.ndarray) -> int:
    """How often the hero ended a step on its current cell before (the memory map adds 0.2 per
    visit, capped at 1, and the window is read before this step's visit is added)."""
    return int(round(float(map_tensor[MEMORY_CHANNEL, VIEW_SIZE // 2, VIEW_SIZE // 2]) / 0.2))


def legal_mask(legal_act: Sequence[int]) -> np.ndarray:
    """(NUM_ACTIONS,) float32, 1 = allowed: the 8 moves always, the 8 flashes when
    `legal_act[1] == 1` (flash ready; `legal_act = [1, flash_ready]`, SPEC §7)."""
    mask = np.ones(NUM_ACTIONS, dtype=np.float32)
    if legal_act[1] != 1:
        mask[NUM_MOVES:] = 0.0
    return mask
