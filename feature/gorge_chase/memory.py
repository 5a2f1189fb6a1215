"""An episode's memory of gorge_chase, built only from what the hero's observation shows (the
`observation` of env_obs: the 21×21 map_info, the monsters, the organs in view, env_info), so
the same features are computed on the platform: the map explored so far, the cells visited,
the chests and buffs seen (a chest is live while env_info's treasure_id lists it), each
monster's last known cell, and per step the monsters' path distances over the view (they chase
4-connected) and where each move and flash would take the hero.

`global_info` also reads env_obs's `extra_info.frame_state` where it arrives: every chest and
buff still on the map and both monsters' true cells (the 15.0.1 env hands it to the package's
workflow and to `exploit`, and its documentation offers it to "algorithms that need global
information"; docs/games/gorge_chase.md, "What the agent reads"). Without it, or where extra_info
lacks it, only the view is read.

`GorgeMemory().update(env_obs)` after the reset and after every step; the layout
(feature.gorge_chase.layout) and the reward (feature.gorge_chase.reward) read it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from feature.bitgrid import bit_grid
from feature.gorge_chase.constants import (CHEST_STEP_LIMIT, DIRECTIONS, FLASH_RANGE, FLASH_RANGE_DIAGONAL, GRID_SIZE,
                                           MAX_MONSTERS, NUM_MOVES, STATUS_AVAILABLE, SUB_TYPE_BUFF,
                                           SUB_TYPE_TREASURE, VIEW_RADIUS, VIEW_SIZE)
from feature.gorge_chase.paths import (UNREACHED, RoomParts, path_field, path_field_bits,  # noqa: F401
                                       path_length_bits, room_parts, steps_from_target_bits)

COARSE = 3  # cells per side of a coarse crop's cell
COARSE_RADIUS = COARSE * VIEW_SIZE // 2  # 31: the coarse crops cover 63 × 63 cells around the hero
PAD = COARSE_RADIUS
TRAIL_STEPS = 12  # the hero's cells kept: monster 2 appears on its cell of 10 steps before
VISIT = 0.2  # a visit's weight on the visits map (capped at 1)
VIEW_GRID = bit_grid(VIEW_SIZE, VIEW_SIZE)  # the view as an int (feature.bitgrid)
INSIDE = np.zeros((GRID_SIZE + 2 * PAD, GRID_SIZE + 2 * PAD), dtype=bool)  # padded: the map's own cells
INSIDE[PAD:PAD + GRID_SIZE, PAD:PAD + GRID_SIZE] = True
WINDOW_GRID = bit_grid(2 * COARSE_RADIUS + 1, 2 * COARSE_RADIUS + 1)  # the coarse crops' cells as an int
#: per direction, the cells a flash may land on, farthest first: (k, column, row, bit in the view's int)
#: (a cell off the view counts as blocked, as `road` says)
FLASH_LINES = tuple(tuple((k, VIEW_RADIUS + dx * k, VIEW_RADIUS + dz * k,
                           (VIEW_RADIUS + dz * k) * VIEW_GRID.stride + VIEW_RADIUS + dx * k)
                          for k in range(FLASH_RANGE_DIAGONAL if dx and dz else FLASH_RANGE, 0, -1)
                          if 0 <= VIEW_RADIUS + dx * k < VIEW_SIZE and 0 <= VIEW_RADIUS + dz * k < VIEW_SIZE)
                    for dx, dz in DIRECTIONS)


@dataclass
class MonsterSeen:
    """One monster slot (by monster_id order) as the hero knows it."""

    present: bool = False
    in_view: bool = False
    x: int = -1
    z: int = -1
    bucket: int = 0  # hero_l2_distance, always given
    direction: int = 0  # hero_relative_direction, always given
    speed: int = 1  # last speed seen
    last_x: int = -1  # last cell seen, -1 never
    last_z: int = -1
    last_step: int = -1
    known: bool = False  # its cell is known this step (in view, or extra_info's true cell)


def block_means(window: np.ndarray) -> np.ndarray:
    """(..., 63, 63) -> (..., 21, 21): the means of 3 × 3 blocks, added in the order numpy's mean
    over both block axes adds them (each block row left to right, then the rows top to bottom), so
    every float32 is that mean's, in a fraction of its time."""
    blocks = window.reshape(*window.shape[:-2], VIEW_SIZE, COARSE, VIEW_SIZE, COARSE)
    rows = blocks[..., 0].copy()
    for i in range(1, COARSE):
        rows += blocks[..., i]
    out = rows[..., 0, :].copy()
    for i in range(1, COARSE):
        out += rows[..., i, :]
    out /= np.float32(COARSE * COARSE)
    return out


class GorgeMemory:
    def __init__(self, global_info: bool = False, danger_guard: bool = False, lookahead_guard: bool = False,
                 lookahead_budget: int | None = None):
        self.global_info = global_info  # read extra_info.frame_state's chests, buffs and monsters
        self.danger_guard = danger_guard  # the legal mask keeps moves out of a monster's reach (layout.legal_mask)
        self.lookahead_guard = lookahead_guard  # the legal mask is the look-ahead's (layout.legal_mask)
        # the states each candidate's search expands at most (feature.gorge_chase.lookahead.BUDGET where None)
        self.lookahead_budget = lookahead_budget
        self.trail: dict[int, tuple[int, int]] = {}  # step -> the hero's cell, the last TRAIL_STEPS (the look-ahead's)
        size = GRID_SIZE + 2 * PAD
        self._maps = np.zeros((3, size, size), dtype=np.float32)  # one array: their coarse crops are one pass
        self.passable, self.seen, self.visits = self._maps  # padded [z, x]: 1 road seen; 1 seen; visits
        self._map_views = (self.passable, self.seen, self.visits)
        self.walkable = np.ones((size, size), dtype=bool)  # padded [z, x]: road seen or never seen (the chest search's ground)
        self._coarse = None  # this step's coarse crops of the three maps, once read
        self.hero = (0, 0)
        self.step_no = 0
        self.view = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=bool)  # [row z, col x], True = road
        self._view_bits = 0  # the view as VIEW_GRID's int
        self.legal_action = [True] * (2 * NUM_MOVES)
        self.env_info: dict = {}
        self.monsters = [MonsterSeen() for _ in range(MAX_MONSTERS)]
        self.chests: dict[int, tuple[int, int]] = {}  # config_id -> cell, once seen
        self.live_chest_ids: set[int] = set()
        self.buffs: dict[int, list] = {}  # config_id -> [x, z, available]
        self.flash_cooldown = 0
        self.buff_remaining = 0
        self.chest_count = 0
        self.buff_count = 0
        self.new_cells = 0
        self.monster_field = np.full((VIEW_SIZE, VIEW_SIZE), UNREACHED, dtype=np.int32)
        self._monster_in_view = False  # hero_distance answers only then
        self.revisit = 0.0  # visits on the hero's cell before this step
        self._chest_steps = None  # this step's steps_from_targets over the live chests, once read
        self._rooms = None  # this step's room_parts, once read
        self._move_cells = None  # this step's move_cell per direction, once read
        self._flash_cells = None  # this step's flash_cell per direction, once read
        self._monster_rows = None  # this step's monster_field as lists, once read

    # --- the update -----------------------------------------------------------------------------

    def update(self, env_obs: dict) -> "GorgeMemory":
        obs = env_obs.get("observation", env_obs)
        frame = obs["frame_state"]
        hero = frame["heroes"]
        self.hero = (int(hero["pos"]["x"]), int(hero["pos"]["z"]))
        self.step_no = int(obs.get("step_no", 0))
        self.trail[self.step_no] = self.hero
        self.trail.pop(self.step_no - TRAIL_STEPS, None)
        self.flash_cooldown = int(hero.get("flash_cooldown", 0))
        self.buff_remaining = int(hero.get("buff_remaining_time", 0))
        self.env_info = obs.get("env_info") or {}
        self.chest_count = int(self.env_info.get("treasures_collected", hero.get("treasure_collected_count", 0)))
        self.buff_count = int(self.env_info.get("collected_buff", 0))
        self.legal_action = [bool(v) for v in obs.get("legal_action", self.legal_action)]
        self.view = np.asarray(obs["map_info"], dtype=bool)
        self._view_bits = VIEW_GRID.of_mask(self.view)
        self._chest_steps = self._rooms = self._move_cells = self._flash_cells = self._monster_rows = None
        self._coarse = None
        truth = ((env_obs.get("extra_info") or {}).get("frame_state") or {}) if self.global_info else {}
        self._remember_map()
        self._read_organs(frame.get("organs") or [], truth.get("organs"))
        self._read_monsters(frame.get("monsters") or [], truth.get("monsters"))
        return self

    def _window(self, array: np.ndarray, radius: int) -> np.ndarray:
        """A (2 radius + 1)² view of a padded map around the hero (a view, not a copy)."""
        x, z = self.hero[0] + PAD, self.hero[1] + PAD
        return array[z - radius:z + radius + 1, x - radius:x + radius + 1]

    def search_window(self, radius: int) -> tuple[np.ndarray, np.ndarray]:
        """(road seen, cells of the map never seen) of the (2 radius + 1)² window round the hero,
        bool [row z, column x] (radius <= PAD): the look-ahead's ground."""
        inside = self._window(INSIDE, radius)
        return self._window(self.passable, radius) > 0, (self._window(self.seen, radius) == 0) & inside

    def search_planes(self, radius: int) -> tuple[np.ndarray, int, int, int, int]:
        """search_window's grids where they lie, for a reader of raw memory (the look-ahead's C
        twin): the padded maps (float32 [plane, z, x], plane 0 road seen, 1 seen), the window's
        top-left (x, z) in them, and the bounds lo <= x, z < hi of the map's own cells."""
        return self._maps, self.hero[0] + PAD - radius, self.hero[1] + PAD - radius, PAD, PAD + GRID_SIZE

    def _remember_map(self) -> None:
        seen = self._window(self.seen, VIEW_RADIUS)
        self.new_cells = int(VIEW_SIZE * VIEW_SIZE - seen.sum())
        seen[:] = 1.0
        self._window(self.passable, VIEW_RADIUS)[:] = self.view
        self._window(self.walkable, VIEW_RADIUS)[:] = self.view
        here = self._window(self.visits, 0)
        self.revisit = float(here[0, 0])
        here[0, 0] = min(1.0, here[0, 0] + VISIT)

    def _read_organs(self, organs: list, every_organ: list | None) -> None:
        for organ in organs if every_organ is None else every_organ:
            cell = (int(organ["pos"]["x"]), int(organ["pos"]["z"]))
            if organ["sub_type"] == SUB_TYPE_TREASURE:
                self.chests[int(organ["config_id"])] = cell
            elif organ["sub_type"] == SUB_TYPE_BUFF:
                self.buffs[int(organ["config_id"])] = [cell[0], cell[1], organ.get("status") == STATUS_AVAILABLE]
        remaining = self.env_info.get("treasure_id")
        if remaining is not None:
            self.live_chest_ids = {int(i) for i in remaining}
        else:  # no list: a chest is live until its cell is in view without it
            shown = {int(o["config_id"]) for o in organs if o["sub_type"] == SUB_TYPE_TREASURE}
            self.live_chest_ids = {i for i, cell in self.chests.items() if i in shown or not self.in_view(*cell)}

    def _read_monsters(self, monsters: list, true_monsters: list | None) -> None:
        ordered = sorted(monsters, key=lambda m: m.get("monster_id", 0))[:MAX_MONSTERS]
        truth = {int(m.get("monster_id", 0)): m for m in true_monsters or ()}
        sources = []
        for slot, m in zip(self.monsters, ordered):
            slot.present = True
            slot.in_view = bool(m.get("is_in_view", 0))
            slot.bucket, slot.direction = int(m.get("hero_l2_distance", 0)), int(m.get("hero_relative_direction", 0))
            seen = m if slot.in_view else truth.get(int(m.get("monster_id", 0)))
            slot.known = seen is not None
            if slot.known:
                slot.last_x, slot.last_z = int(seen["pos"]["x"]), int(seen["pos"]["z"])
                slot.last_step = self.step_no
                slot.speed = max(1, int(seen.get("speed", 1)))
            if slot.in_view:
                slot.x, slot.z = slot.last_x, slot.last_z
                sources.append(self.to_view(slot.x, slot.z))
            else:
                slot.x = slot.z = -1
        for slot in self.monsters[len(ordered):]:
            slot.present = slot.in_view = slot.known = False
        self.monster_field = path_field_bits(VIEW_GRID, self._view_bits, VIEW_GRID.of_cells(sources))
        self._monster_in_view = bool(sources)

    # --- reading it -----------------------------------------------------------------------------

    def to_view(self, x: int, z: int) -> tuple[int, int]:
        """A map cell as (column, row) of the view."""
        return x - self.hero[0] + VIEW_RADIUS, z - self.hero[1] + VIEW_RADIUS

    def in_view(self, x: int, z: int) -> bool:
        return abs(x - self.hero[0]) <= VIEW_RADIUS and abs(z - self.hero[1]) <= VIEW_RADIUS

    def road(self, c: int, r: int) -> bool:
        """A view cell (column, row) is road (off the view: unknown, counted blocked)."""
        return 0 <= c < VIEW_SIZE and 0 <= r < VIEW_SIZE and bool(self._view_bits >> (r * VIEW_GRID.stride + c) & 1)

    def move_cell(self, d: int) -> tuple[int, int] | None:
        """The view cell a one-cell move in direction d enters (a diagonal needs one of its two
        orthogonal cells open), None when it is blocked. Read by the features, the mask and the
        rooms: worked out once a step."""
        return self.move_cells()[d]

    def move_cells(self) -> list[tuple[int, int] | None]:
        """`move_cell` of every direction (this step's list: do not change it)."""
        if self._move_cells is None:
            self._move_cells = [self._move_cell(i) for i in range(NUM_MOVES)]
        return self._move_cells

    def flash_cell(self, d: int) -> tuple[int, int, int]:
        """(column, row, k): where a flash in direction d lands (the farthest road cell within
        its reach, passing over anything); k = 0 when none is (the hero stays). Once a step."""
        return self.flash_cells()[d]

    def flash_cells(self) -> list[tuple[int, int, int]]:
        """`flash_cell` of every direction (this step's list: do not change it)."""
        if self._flash_cells is None:
            self._flash_cells = [self._flash_cell(i) for i in range(NUM_MOVES)]
        return self._flash_cells

    def _move_cell(self, d: int) -> tuple[int, int] | None:
        dx, dz = DIRECTIONS[d]
        c, r = VIEW_RADIUS + dx, VIEW_RADIUS + dz
        if not self.road(c, r):
            return None
        if dx and dz and not (self.road(VIEW_RADIUS + dx, VIEW_RADIUS) or self.road(VIEW_RADIUS, VIEW_RADIUS + dz)):
            return None
        return c, r

    def _flash_cell(self, d: int) -> tuple[int, int, int]:
        dx, dz = DIRECTIONS[d]
        hx, hz = self.hero
        view = self._view_bits
        for k, c, r, bit in FLASH_LINES[d]:  # every cell of the line lies in the view
            if view >> bit & 1 and 0 <= hx + dx * k < GRID_SIZE and 0 <= hz + dz * k < GRID_SIZE:
                return c, r, k
        return VIEW_RADIUS, VIEW_RADIUS, 0

    def monster_distance(self, c: int = VIEW_RADIUS, r: int = VIEW_RADIUS) -> int:
        """Path cells from the nearest monster in view to a view cell (UNREACHED: none within FAR)."""
        if self._monster_rows is None:  # the features read it at a score of cells a step: lists index faster
            self._monster_rows = self.monster_field.tolist()
        return self._monster_rows[r][c]

    def hero_distance(self, x: int, z: int) -> int:
        """Path cells from the hero to a map cell in view (UNREACHED beyond FAR or with no monster in view)."""
        if not self._monster_in_view or not self.in_view(x, z):
            return UNREACHED
        return path_length_bits(VIEW_GRID, self._view_bits, VIEW_GRID.bit(VIEW_RADIUS, VIEW_RADIUS),
                                VIEW_GRID.bit(*self.to_view(x, z)))

    def chest_steps(self) -> np.ndarray:
        """3×3 [dz + 1, dx + 1]: path steps to the nearest live chest known from the hero's cell
        and its neighbours, over the explored map within the coarse crops' reach (unseen cells
        counted as road); UNKNOWN_STEPS (feature.bitgrid) where none lies within CHEST_STEP_LIMIT."""
        if self._chest_steps is None:
            walkable = WINDOW_GRID.of_mask(self._window(self.walkable, COARSE_RADIUS))
            hx, hz = self.hero
            targets = [(x - hx + COARSE_RADIUS, z - hz + COARSE_RADIUS) for x, z in self.live_chests()]
            self._chest_steps = steps_from_target_bits(WINDOW_GRID, walkable, WINDOW_GRID.of_cells(targets),
                                                       CHEST_STEP_LIMIT)
        return self._chest_steps

    def rooms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """This step's `rooms_beyond` of the view (feature.gorge_chase.paths), labelled from the
        move cells and the flash landings."""
        parts = self._room_parts()
        return (VIEW_GRID.first_index(parts.bits, -1), np.asarray(parts.sizes, dtype=np.int32),
                np.asarray(parts.flags, dtype=bool).reshape(-1, 2))

    def rooms_at(self, cells: list[tuple[int, int]]) -> list[tuple[int, bool, bool] | None]:
        """Per view cell (column, row), one of the move cells or flash landings: (size, runs off
        the view, holds a monster) of the `rooms` part holding it; None in no part."""
        parts = self._room_parts()
        found = [parts.of_start.get(cell) for cell in cells]
        return [None if part is None else (parts.sizes[part], *parts.flags[part]) for part in found]

    def _room_parts(self) -> RoomParts:
        if self._rooms is None:
            starts = [cell for cell in self.move_cells() if cell is not None]
            starts += [(c, r) for c, r, _ in self.flash_cells()]
            monsters = [self.to_view(s.x, s.z) for s in self.monsters if s.in_view]
            self._rooms = room_parts(VIEW_GRID, self._view_bits, starts, monsters)
        return self._rooms

    def live_chests(self) -> list[tuple[int, int]]:
        return [cell for i, cell in self.chests.items() if i in self.live_chest_ids]

    def available_buffs(self) -> list[tuple[int, int]]:
        return [(b[0], b[1]) for b in self.buffs.values() if b[2]]

    def nearest(self, cells: list[tuple[int, int]]) -> tuple[int, int] | None:
        if not cells:
            return None
        hx, hz = self.hero
        return min(cells, key=lambda p: max(abs(p[0] - hx), abs(p[1] - hz)))

    def crop(self, array: np.ndarray) -> np.ndarray:
        """The view-sized crop of a padded map around the hero."""
        return self._window(array, VIEW_RADIUS)

    def coarse(self, array: np.ndarray) -> np.ndarray:
        """The 63 × 63 cells around the hero of a padded map, averaged over 3 × 3 blocks (21 × 21).
        The memory's own three maps are averaged together once a step (this step's arrays: do
        not change them)."""
        own = [i for i, source in enumerate(self._map_views) if source is array]
        if not own:
            return block_means(self._window(array, COARSE_RADIUS))
        if self._coarse is None:
            x, z = self.hero[0] + PAD, self.hero[1] + PAD
            self._coarse = block_means(self._maps[:, z - COARSE_RADIUS:z + COARSE_RADIUS + 1,
                                                  x - COARSE_RADIUS:x + COARSE_RADIUS + 1])
        return self._coarse[own[0]]

    def coarse_points(self, cells: list[tuple[int, int]]) -> np.ndarray:
        """1 on the coarse cells holding one of `cells`."""
        out = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.float32)
        for x, z in cells:
            c, r = (x - self.hero[0] + COARSE_RADIUS) // COARSE, (z - self.hero[1] + COARSE_RADIUS) // COARSE
            if 0 <= c < VIEW_SIZE and 0 <= r < VIEW_SIZE:
                out[r, c] = 1.0
        return out

    def view_points(self, cells: list[tuple[int, int]]) -> np.ndarray:
        """1 on the view cells holding one of `cells`."""
        out = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.float32)
        for x, z in cells:
            c, r = self.to_view(x, z)
            if 0 <= c < VIEW_SIZE and 0 <= r < VIEW_SIZE:
                out[r, c] = 1.0
        return out
