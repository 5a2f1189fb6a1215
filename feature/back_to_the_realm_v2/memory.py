"""What a back_to_the_realm_v2 episode has shown so far, kept by the package (the server sends
only the view around the hero, every organ's coarse relative position, and what is in view).

It reads only what every official and competitor package reads: the talent's readiness from
`hero.talent.status` (1 ready; with no status, a `cooldown` of 0), never `legal_act`, whose content
on the real server is unknown; the view's size from `map_info` itself (11×11 on the HoK track,
51×51 in the 28.1.1 preprocessor's default: any size, centred on the hero, rows along x).

`V2Memory` is one episode's: `update(obs, extra_info)` after the reset and after every step.
It keeps
- the explored map: cells seen passable / blocked (walls and active obstacles read 0 in the
  view), cells not yet seen; and how often the hero ended a step on each cell;
- every organ as the episode knows it: a chest's cell once seen (else an estimate from the
  direction sector and 20-cell distance band of `relative_pos`), whether it is still there; the
  buff's cell, whether it can be taken (a cooling buff seen with `cooldown` N is back N steps
  later); the end's cell from `game_info.end_pos` when the server reveals it, or once in view;
- two goal fields (`GoalField`): path lengths over the explored map (unseen cells open) to the
  end and to the chest the hero is heading for, recomputed when the goal moves, or when new
  walls came into view and REFRESH_STEPS passed (a BFS over the map costs a few ms, so it is
  not run every step; between runs the field is the lower bound it was).
The features (feature.back_to_the_realm_v2.layout) and the reward (feature.back_to_the_realm_v2.reward) read it; it never sees
anything the server did not send.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from feature.bitgrid import bit_grid, path_levels
from feature.back_to_the_realm_v2.constants import (BAND_CELLS, CELL_BLOCKED, DISTANCE_NORM, DIRECTION_INDEX, DIRECTIONS, DISTANCE_BAND, FLASH_CELLS,
                                  GRID_SIZE, NUM_MOVES, ORGAN_BUFF, ORGAN_CHEST, ORGAN_END,
                                  STATUS_COLLECTABLE, STATUS_NOT_COLLECTABLE, STATUS_OUT_OF_VIEW, UNIT_VECTORS)

_W = GRID_SIZE + 2  # the BFS map has a blocked border, so a neighbour index is never out of range
CROP_RADIUS = 10  # the map channels: 21 × 21 cells centred on the hero
PAD = CROP_RADIUS
REFRESH_STEPS = 24  # a stale goal field (new walls seen) is recomputed at most this often
VISIT_INCREMENT = 0.2  # visits: +0.2 per step ended on a cell, capped at 1
SWITCH_RATIO = 0.7  # the chest target changes when another live chest is this much closer
_GRID = bit_grid(_W, _W)  # the goal fields' search (feature.bitgrid)


def _walk_cell(free: np.ndarray, x: int, z: int, d: int) -> tuple[int, int] | None:
    """The cell one step in direction d leads to on the explored map (unseen cells open), or
    None when that step is blocked (a wall, off the map, or a diagonal cutting a corner)."""
    dx, dz = DIRECTIONS[d]
    nx, nz = x + dx, z + dz
    if not free[nz + 1, nx + 1]:
        return None
    if dx and dz and not (free[z + 1, nx + 1] and free[nz + 1, x + 1]):
        return None
    return nx, nz


def _flash_cell(free: np.ndarray, x: int, z: int, d: int) -> tuple[int, int]:
    """Where the talent would land on the explored map: the farthest open cell of its ray."""
    dx, dz = DIRECTIONS[d]
    for k in range(FLASH_CELLS, 0, -1):
        nx, nz = x + dx * k, z + dz * k
        if 0 <= nx < GRID_SIZE and 0 <= nz < GRID_SIZE and free[nz + 1, nx + 1]:
            return nx, nz
    return x, z


class GoalField:
    """Path lengths (4-connected steps) from every cell to one goal cell over the explored map."""

    def __init__(self, goal: tuple[int, int], free: np.ndarray, version: int, step: int):
        self.goal, self.version, self.step = goal, version, step
        source = _GRID.bit(goal[0] + 1, goal[1] + 1)  # the goal counts at 0, open or not
        levels = path_levels(_GRID.of_mask(free > 0), source, _GRID.stride)
        self.dist = _GRID.first_index(levels, -1).astype(np.int16)

    def at(self, x: int, z: int) -> int:
        """Steps from cell (x, z) to the goal; -1: no path over the explored map."""
        return int(self.dist[z + 1, x + 1])


@dataclass
class Organ:
    """An organ as the episode knows it."""

    pos: tuple[int, int] | None = None  # its cell once seen (or revealed)
    live: bool = True  # a chest still there / the buff can be taken
    direction: int = 0  # relative_pos sector 0..7 from the hero
    band: int = 5  # relative_pos distance band 1..5
    back_at_step: int = 0  # the buff: the step it can be taken again
    guess: tuple[int, int] | None = None  # where it is taken to be while its cell is unknown

    def estimate(self, hero: tuple[int, int]) -> tuple[int, int]:
        """Its cell; else the guess, kept while it agrees with the latest sector and band (so a
        goal does not move with every step), else the middle of the band along the sector's bearing."""
        if self.pos is not None:
            return self.pos
        if self.guess is not None and _agrees(self.guess, hero, self.direction, self.band):
            return self.guess
        ux, uz = UNIT_VECTORS[self.direction]
        r = BAND_CELLS * (self.band - 0.5)
        self.guess = (int(round(min(max(hero[0] + ux * r, 0.0), GRID_SIZE - 1.0))),
                      int(round(min(max(hero[1] + uz * r, 0.0), GRID_SIZE - 1.0))))
        return self.guess

    def distance(self, hero: tuple[int, int]) -> float:
        x, z = self.estimate(hero)
        return math.hypot(x - hero[0], z - hero[1])


def _agrees(cell: tuple[int, int], hero: tuple[int, int], direction: int, band: int) -> bool:
    """Whether `cell` lies in the sector and distance band the server reports from `hero`."""
    dx, dz = cell[0] - hero[0], cell[1] - hero[1]
    sector = 0 if dx == 0 and dz == 0 else round(math.atan2(dz, dx) / (math.pi / 4)) % 8
    return sector == direction and min(5, max(1, math.ceil(math.hypot(dx, dz) / BAND_CELLS))) == band


def _read_relative(organ: Organ, rel: dict) -> None:
    organ.direction = DIRECTION_INDEX.get(rel.get("direction"), organ.direction)
    organ.band = DISTANCE_BAND.get(rel.get("l2_distance"), organ.band)


class V2Memory:
    """One episode's knowledge (module docstring). Read-only for everything but `update`."""

    def __init__(self):
        self.free = np.zeros((_W, _W), dtype=np.uint8)  # 1: passable or not yet seen
        self.free[1:-1, 1:-1] = 1
        size = GRID_SIZE + 2 * PAD
        self.seen = np.ones((size, size), dtype=np.float32)  # padded by PAD: off the map counts as seen, blocked
        self.seen[PAD:-PAD, PAD:-PAD] = 0
        self.passable = np.zeros((size, size), dtype=np.float32)
        self.visits = np.zeros((size, size), dtype=np.float32)
        self.version = 0  # bumped whenever a wall comes into view
        self.hero = (0, 0)
        self.step_no = 0
        self.new_cells = 0  # cells first seen by the last update
        self.revisit = 0.0  # visits on the hero's cell before this step's
        self.talent_ready = True  # hero.talent.status == 1
        self.talent_cooldown = 0
        self.speed_up = False
        self.buff_remain = 0
        self.chest_count = self.buff_count = self.talent_count = 0
        self.last_chest_step = 0  # step_no of the latest chest (0 before the first)
        self.total_score = 0.0
        self.chests: dict[int, Organ] = {}
        self.buff = Organ()
        self.end = Organ()
        self.end_field: GoalField | None = None
        self.chest_field: GoalField | None = None
        self.target_chest: int | None = None
        self.obs = None
        self.extra_info = None

    # --- reading the server ---------------------------------------------------------------------

    def update(self, obs: dict, extra_info: dict | None = None) -> "V2Memory":
        """Take in one observation (and its extra_info); returns self."""
        self.obs, self.extra_info = obs, extra_info
        frame = obs["frame_state"]
        hero = frame["heroes"][0]
        x, z = int(hero["pos"]["x"]), int(hero["pos"]["z"])
        self.hero = (x, z)
        self.step_no = int(frame.get("step_no", 0))
        self._read_talent(hero.get("talent") or {})
        self.speed_up = bool(hero["speed_up"])
        self.buff_remain = int(hero["buff_remain_time"])
        score = obs["score_info"]
        chests = int(score["treasure_collected_count"])
        if chests > self.chest_count:
            self.last_chest_step = self.step_no
        self.chest_count = chests
        self.buff_count = int(score["buff_count"])
        self.talent_count = int(score["talent_count"])
        self.total_score = float(score["total_score"])
        self._read_view(obs["map_info"], x, z)
        self.revisit = float(self.visits[z + PAD, x + PAD])
        self.visits[z + PAD, x + PAD] = min(1.0, self.revisit + VISIT_INCREMENT)
        for organ in frame["organs"]:
            self._read_organ(organ)
        if extra_info is not None:
            end_pos = extra_info.get("game_info", {}).get("end_pos")
            if end_pos is not None and end_pos["x"] >= 0:
                self.end.pos = (int(end_pos["x"]), int(end_pos["z"]))
        self._update_fields()
        return self

    def _read_talent(self, talent: dict) -> None:
        """hero.talent: ready when `status` is 1 (as every package reads it); without a status,
        when the `cooldown` (steps left, 0 when absent) is 0."""
        cooldown = talent.get("cooldown")
        self.talent_cooldown = max(int(cooldown), 0) if cooldown is not None else 0
        status = talent.get("status")
        self.talent_ready = int(status) == 1 if status is not None else self.talent_cooldown == 0

    def _read_view(self, map_info, x: int, z: int) -> None:
        """map_info[i]["values"][j] is cell (x - rows // 2 + i, z - cols // 2 + j), whatever the
        view's size (11×11, 51×51, ...); cells off the map are dropped."""
        rows = [row["values"] for row in map_info or ()]
        if not rows or not len(rows[0]):
            self.new_cells = 0
            return
        window = np.asarray(rows, dtype=np.int16).T  # [z offset, x offset]
        if window.ndim != 2:
            raise ValueError(f"map_info: expected rows of equal length, got {[len(r) for r in rows]}")
        size_z, size_x = window.shape
        z0, x0 = z - size_z // 2, x - size_x // 2
        zs, xs = slice(max(z0, 0), min(z0 + size_z, GRID_SIZE)), slice(max(x0, 0), min(x0 + size_x, GRID_SIZE))
        if zs.start >= zs.stop or xs.start >= xs.stop:
            self.new_cells = 0
            return
        inside = window[zs.start - z0:zs.stop - z0, xs.start - x0:xs.stop - x0]
        seen = self.seen[zs.start + PAD:zs.stop + PAD, xs.start + PAD:xs.stop + PAD]
        self.new_cells = int(seen.size - np.count_nonzero(seen))
        seen[...] = 1.0
        open_ = inside != CELL_BLOCKED
        self.passable[zs.start + PAD:zs.stop + PAD, xs.start + PAD:xs.stop + PAD] = open_
        free = self.free[zs.start + 1:zs.stop + 1, xs.start + 1:xs.stop + 1]
        if np.any(free & ~open_):
            free[...] = open_
            self.version += 1

    def _read_organ(self, organ: dict) -> None:
        kind, status = organ["sub_type"], organ["status"]
        if kind == ORGAN_CHEST:
            known = self.chests.setdefault(int(organ["config_id"]), Organ())
        elif kind == ORGAN_BUFF:
            known = self.buff
        elif kind == ORGAN_END:
            known = self.end
        else:
            return
        _read_relative(known, organ["relative_pos"])
        if status != STATUS_OUT_OF_VIEW:
            known.pos = (int(organ["pos"]["x"]), int(organ["pos"]["z"]))
        if kind == ORGAN_CHEST:
            if status == STATUS_NOT_COLLECTABLE:
                known.live = False
        elif kind == ORGAN_BUFF:
            if status == STATUS_COLLECTABLE:
                known.live, known.back_at_step = True, self.step_no
            elif status == STATUS_NOT_COLLECTABLE:
                known.live, known.back_at_step = False, self.step_no + int(organ["cooldown"])
            elif not known.live and self.step_no >= known.back_at_step:
                known.live = True

    # --- goal fields ------------------------------------------------------------------------------

    def live_chests(self) -> dict[int, Organ]:
        return {cid: c for cid, c in self.chests.items() if c.live}

    def _update_fields(self) -> None:
        self.end_field = self._field(self.end_field, self._goal_cell(self.end))
        live = self.live_chests()
        if self.target_chest not in live:
            self.target_chest = None
        if live:
            nearest = min(live, key=lambda cid: live[cid].distance(self.hero))
            if self.target_chest is None or (
                    live[nearest].distance(self.hero) < SWITCH_RATIO * live[self.target_chest].distance(self.hero)):
                self.target_chest = nearest
        if self.target_chest is None:
            self.chest_field = None
        else:
            self.chest_field = self._field(self.chest_field, self._goal_cell(live[self.target_chest]))

    def _goal_cell(self, organ: Organ) -> tuple[int, int]:
        return organ.estimate(self.hero)

    def _field(self, field: GoalField | None, goal: tuple[int, int]) -> GoalField:
        if field is not None and field.goal == goal:
            fresh = field.version == self.version
            if fresh or (self.step_no - field.step < REFRESH_STEPS and field.at(*self.hero) >= 0):
                return field
        return GoalField(goal, self.free, self.version, self.step_no)

    # --- what the features read -------------------------------------------------------------------

    def gains(self, field: GoalField | None) -> tuple[float, list[float], list[float]]:
        """(path length from the hero / DISTANCE_NORM or 1.0 when unknown, per direction the cells
        a walk gains toward the goal (-1 when the step is blocked), per direction the cells a talent
        gains / FLASH_CELLS)."""
        if field is None or field.at(*self.hero) < 0:
            return 1.0, [0.0] * NUM_MOVES, [0.0] * NUM_MOVES
        x, z = self.hero
        here = field.at(x, z)
        walks, flashes = [], []
        for d in range(NUM_MOVES):
            cell = _walk_cell(self.free, x, z, d)
            there = field.at(*cell) if cell is not None else -1
            walks.append(float(here - there) if there >= 0 else -1.0)
            landing = _flash_cell(self.free, x, z, d)
            there = field.at(*landing)
            flashes.append((here - there) / FLASH_CELLS if there >= 0 else -1.0)
        return here / DISTANCE_NORM, walks, flashes

    def reaches_end(self, action: int) -> bool:
        """Whether `action` (a move 0..7, or a talent 8..15) would end on or pass the end's known
        cell, as the explored map shows the way (a move of two cells while sped up)."""
        end = self.end.pos
        if end is None:
            return False
        x, z = self.hero
        if action >= len(DIRECTIONS):
            return _flash_cell(self.free, x, z, action - len(DIRECTIONS)) == end
        for _ in range(2 if self.speed_up else 1):
            cell = _walk_cell(self.free, x, z, action)
            if cell is None:
                return False
            if cell == end:
                return True
            x, z = cell
        return False

    def walk_blocked(self, d: int) -> bool:
        """Whether a move in direction d is blocked at its first cell (the view shows it exactly)."""
        return _walk_cell(self.free, *self.hero, d) is None

    def crop(self, array: np.ndarray) -> np.ndarray:
        """The (21, 21) window of a padded [z, x] array centred on the hero."""
        x, z = self.hero
        return array[z + PAD - CROP_RADIUS:z + PAD + CROP_RADIUS + 1, x + PAD - CROP_RADIUS:x + PAD + CROP_RADIUS + 1]

    def points_crop(self, cells) -> np.ndarray:
        """A (21, 21) window with 1 on each of `cells` that falls inside it."""
        out = np.zeros((2 * CROP_RADIUS + 1, 2 * CROP_RADIUS + 1), dtype=np.float32)
        x, z = self.hero
        for cx, cz in cells:
            row, col = cz - z + CROP_RADIUS, cx - x + CROP_RADIUS
            if 0 <= row <= 2 * CROP_RADIUS and 0 <= col <= 2 * CROP_RADIUS:
                out[row, col] = 1.0
        return out

    def field_crop(self, field: GoalField | None) -> np.ndarray:
        """A (21, 21) window of (path length here − there) / CROP_RADIUS, clipped to [-1, 1]; 0 where unknown."""
        size = 2 * CROP_RADIUS + 1
        if field is None or field.at(*self.hero) < 0:
            return np.zeros((size, size), dtype=np.float32)
        x, z = self.hero
        padded = np.full((_W + 2 * CROP_RADIUS, _W + 2 * CROP_RADIUS), -1, dtype=np.int32)
        padded[CROP_RADIUS:-CROP_RADIUS, CROP_RADIUS:-CROP_RADIUS] = field.dist
        window = padded[z + 1:z + 1 + size, x + 1:x + 1 + size]
        out = np.clip((field.at(x, z) - window) / CROP_RADIUS, -1.0, 1.0).astype(np.float32)
        out[window < 0] = 0.0
        return out

