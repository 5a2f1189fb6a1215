"""The platform's feature helpers for Back to the Realm (the same for dqn, target_dqn and diy,
which import them from `kaiwu_agent.back_to_the_realm.<algo>.feature_process`)."""
from __future__ import annotations

import math

GRID_CELLS = 128  # cells per map side
NUM_DIRECTIONS = 8  # RelativePosition.direction 1..8 (0 = none)
BUMP_DISTANCE = 500  # world units: a step that moved less than this bumped into something


def one_hot_encoding(grid_pos) -> list[float]:
    """One-hot of `grid_pos.x` (128 values) followed by one-hot of `grid_pos.z` (128): 256 floats."""
    x, z = int(grid_pos.x), int(grid_pos.z)
    if not (0 <= x < GRID_CELLS and 0 <= z < GRID_CELLS):
        raise IndexError(f"grid_pos ({x}, {z}) outside the {GRID_CELLS}x{GRID_CELLS} grid")
    out = [0.0] * (2 * GRID_CELLS)
    out[x] = 1.0
    out[GRID_CELLS + z] = 1.0
    return out


def read_relative_position(rel_pos) -> list[float]:
    """One-hot of the direction (8 values, all 0 for "none") followed by the raw grid_distance."""
    out = [0.0] * NUM_DIRECTIONS
    direction = int(rel_pos.direction)
    if direction != 0:
        out[direction - 1] = 1.0
    out.append(float(rel_pos.grid_distance))
    return out


def bump(a1, b1, a2, b2) -> bool:
    """Whether the hero moved at most BUMP_DISTANCE between two positions (x1, z1) and (x2, z2);
    False when either is the (-1, -1) placeholder."""
    if (a1, b1) == (-1, -1) or (a2, b2) == (-1, -1):
        return False
    return math.hypot(a1 - a2, b1 - b2) <= BUMP_DISTANCE
