"""The v2 model's input, declared once (feature.back_to_the_realm.layout's way, for back_to_the_realm_v2).

`MAP_LAYOUT` is one 21×21 channel per entry, centred on the hero, read from the episode's
memory (feature.back_to_the_realm_v2.memory: the explored map, the hero's visits, the organs as known, the goal
fields); `STATE_LAYOUT` names the blocks of the flat state vector. A `fill` receives the
episode's `V2Memory` after the step. `agent.model` takes its input sizes from the constants
derived below (through the v2 agent), so adding a feature is one entry here.
"""
from __future__ import annotations

import math

import numpy as np

from feature.tables import MapChannel, StateBlock, state_slices  # noqa: F401 (the layout's row types)
from feature.back_to_the_realm_v2.constants import (BUFF_DURATION_NORM, GRID_SIZE, MAX_CHESTS, NUM_MOVES, STEP_NORM,
                                  TALENT_COOLDOWN_NORM)
from feature.back_to_the_realm_v2.memory import CROP_RADIUS, Organ, V2Memory

COARSE = 8  # cells per bin of the position's coarse one-hot


def _bearing(m: V2Memory, organ: Organ) -> tuple[float, float, float]:
    """(x, z) unit vector from the hero to the organ's (estimated) cell, and its distance / 128."""
    x, z = organ.estimate(m.hero)
    dx, dz = x - m.hero[0], z - m.hero[1]
    d = math.hypot(dx, dz)
    return (dx / d, dz / d, d / GRID_SIZE) if d > 0 else (0.0, 0.0, 0.0)


def _one_hot(value: int, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.float32)
    out[min(max(value, 0), size - 1)] = 1.0
    return out


def _chest_slots(m: V2Memory) -> list[float]:
    out = []
    for cid in range(1, MAX_CHESTS + 1):
        chest = m.chests.get(cid)
        if chest is None or not chest.live:
            out += [0.0, 0.0, 0.0, 0.0, 1.0]
        else:
            out += [1.0, 1.0 if chest.pos is not None else 0.0, *_bearing(m, chest)]
    return out


def _goal(m: V2Memory, field, organ: Organ | None) -> list[float]:
    """present, known cell, bearing (3), path length, walk gains (8), talent gains (8)."""
    if organ is None:
        return [0.0] * 6 + [0.0] * (2 * NUM_MOVES)
    dist, walks, flashes = m.gains(field)
    return [1.0, 1.0 if organ.pos is not None else 0.0, *_bearing(m, organ), dist, *walks, *flashes]


def _target_chest(m: V2Memory) -> Organ | None:
    return m.chests.get(m.target_chest) if m.target_chest is not None else None


MAP_LAYOUT: tuple[MapChannel, ...] = (
    MapChannel("passable", lambda m: m.crop(m.passable)),  # 1 seen passable; 0 blocked, off the map or unseen
    MapChannel("unseen", lambda m: 1.0 - m.crop(m.seen)),  # 1 not yet seen
    MapChannel("visits", lambda m: m.crop(m.visits)),  # 0.2 per step ended on the cell, capped at 1
    MapChannel("chests", lambda m: m.points_crop([c.pos for c in m.chests.values() if c.live and c.pos])),
    MapChannel("end", lambda m: m.points_crop([m.end.pos] if m.end.pos else [])),
    MapChannel("buff", lambda m: m.points_crop([m.buff.pos] if m.buff.pos and m.buff.live else [])),
    MapChannel("end_field", lambda m: m.field_crop(m.end_field)),  # path cells gained toward the end, / 10
    MapChannel("chest_field", lambda m: m.field_crop(m.chest_field)),  # ... toward the chest headed for
)

STATE_LAYOUT: tuple[StateBlock, ...] = (
    StateBlock("norm_pos", 2, lambda m: (m.hero[0] / GRID_SIZE, m.hero[1] / GRID_SIZE)),
    StateBlock("coarse_x", GRID_SIZE // COARSE, lambda m: _one_hot(m.hero[0] // COARSE, GRID_SIZE // COARSE)),
    StateBlock("coarse_z", GRID_SIZE // COARSE, lambda m: _one_hot(m.hero[1] // COARSE, GRID_SIZE // COARSE)),
    StateBlock("step", 1, lambda m: (min(m.step_no / STEP_NORM, 1.0),)),
    StateBlock("talent", 2, lambda m: (float(m.talent_ready), m.talent_cooldown / TALENT_COOLDOWN_NORM)),
    StateBlock("buff_state", 2, lambda m: (float(m.speed_up), m.buff_remain / BUFF_DURATION_NORM)),
    StateBlock("buff", 5, lambda m: (float(m.buff.live), 1.0 if m.buff.pos else 0.0, *_bearing(m, m.buff))),
    StateBlock("revisit", 1, lambda m: (m.revisit,)),
    StateBlock("chest_counts", 2, lambda m: (m.chest_count / MAX_CHESTS, len(m.live_chests()) / MAX_CHESTS)),
    StateBlock("end", 6 + 2 * NUM_MOVES, lambda m: _goal(m, m.end_field, m.end)),
    StateBlock("target_chest", 6 + 2 * NUM_MOVES, lambda m: _goal(m, m.chest_field, _target_chest(m))),
    StateBlock("chest_slots", 5 * MAX_CHESTS, _chest_slots),  # live, cell known, bearing (3)
)

# --- derived: never edit below, edit the tables above -------------------------------------------

MAP_CHANNELS: int = len(MAP_LAYOUT)
MAP_SIZE: int = 2 * CROP_RADIUS + 1
MAP_SHAPE: tuple[int, int, int] = (MAP_CHANNELS, MAP_SIZE, MAP_SIZE)
VISITS_CHANNEL: int = [c.name for c in MAP_LAYOUT].index("visits")


STATE_SLICES: dict[str, slice] = state_slices(STATE_LAYOUT)
STATE_DIM: int = sum(b.size for b in STATE_LAYOUT)
NUM_ACTIONS = 2 * NUM_MOVES
REVISIT_INDEX: int = STATE_SLICES["revisit"].start


def earlier_visits(state: np.ndarray) -> int:
    """How often the hero ended a step on its current cell before this one (from the state vector)."""
    return int(round(float(state[REVISIT_INDEX]) / 0.2))


def legal_mask(m: V2Memory) -> np.ndarray:
    """(NUM_ACTIONS,) float32, 1 = allowed: a move whose first cell the view shows open, a talent
    when ready (hero.talent.status; legal_act is not read: its content on the server is unknown).
    A hero boxed in on every side keeps its moves (the env plays them)."""
    mask = np.ones(NUM_ACTIONS, dtype=np.float32)
    for d in range(NUM_MOVES):
        if m.walk_blocked(d):
            mask[d] = 0.0
    if not mask[:NUM_MOVES].any():
        mask[:NUM_MOVES] = 1.0
    if not m.talent_ready:
        mask[NUM_MOVES:] = 0.0
    return mask


def end_guard(m: V2Memory, mask: np.ndarray, patience: int = 0) -> np.ndarray:
    """`mask` without the actions that would reach the known end while chests are live (the
    episode ends there, with the chests left); unchanged when that leaves no move, or once
    `patience` steps (> 0) have passed without a chest (a policy that cannot find the rest ends
    with what it has instead of running out of steps)."""
    if m.end.pos is None or not m.live_chests():
        return mask
    if patience > 0 and m.step_no - m.last_chest_step >= patience:
        return mask
    guarded = mask.copy()
    for action in np.flatnonzero(mask):
        if m.reaches_end(int(action)):
            guarded[action] = 0.0
    return guarded if guarded[:NUM_MOVES].any() else mask
