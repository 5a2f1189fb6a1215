"""An episode's memory of gorge_chase, built only from what the hero's observation shows (the
`observation` of env_obs: the 21×21 map_info, the monsters, the organs in view, env_info), so
the same features are computed on the platform: the map explored so far, the cells visited,
the chests and buffs seen (a chest is live while env_info's treasure_id lists it), each
monster's last known cell, and per step the monsters' path distances over the view (they chase
4-connected) and where each move and flash would take the hero.

`global_info` also reads env_obs's `extra_info.frame_state` where it arrives: every chest and
buff still on the map and both monsters' true cells (the 15.0.1 env hands it to the package's
workflow and to `exploit`, and its documentation offers it to "algorithms that need global
information"; docs/GORGE_RULES.md, "What the agent reads"). Without it, or where extra_info
lacks it, only the view is read.

`GorgeMemory().update(env_obs)` after the reset and after every step; the layout
(feature.gorge_chase.layout) and the reward (feature.gorge_chase.reward) read it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from feature.gorge_chase.constants import (CHEST_STEP_LIMIT, DIRECTIONS, FAR, FLASH_RANGE, FLASH_RANGE_DIAGONAL, GRID_SIZE,
                                           MAX_MONSTERS, NUM_MOVES, STATUS_AVAILABLE, SUB_TYPE_BUFF,
                                           SUB_TYPE_TREASURE, VIEW_RADIUS, VIEW_SIZE)
from feature.gorge_chase.paths import cells_marked, rooms_beyond, steps_from_targets

COARSE = 3  # cells per side of a coarse crop's cell
COARSE_RADIUS = COARSE * VIEW_SIZE // 2  # 31: the coarse crops cover 63 × 63 cells around the hero
PAD = COARSE_RADIUS
VISIT = 0.2  # a visit's weight on the visits map (capped at 1)
UNREACHED = FAR + 1  # a cell no monster in view reaches within FAR steps


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


def path_field(walkable: np.ndarray, sources: list[tuple[int, int]], limit: int = FAR) -> np.ndarray:
    """4-connected path length from the nearest source over `walkable` (view coordinates
    [row z, column x]; sources as (column, row)), UNREACHED beyond `limit` or where nothing reaches."""
    h, w = walkable.shape
    dist = np.full((h, w), UNREACHED, dtype=np.int32)
    frontier = cells_marked(walkable.shape, sources)
    if not frontier.any():
        return dist
    dist[frontier] = 0
    unvisited = walkable & ~frontier
    pad = np.zeros((h + 2, w + 2), dtype=bool)
    for d in range(1, limit + 1):
        pad[1:-1, 1:-1] = frontier
        frontier = (pad[:-2, 1:-1] | pad[2:, 1:-1] | pad[1:-1, :-2] | pad[1:-1, 2:]) & unvisited
        if not frontier.any():
            break
        dist[frontier] = d
        unvisited &= ~frontier
    return dist


class GorgeMemory:
    def __init__(self, global_info: bool = False):
        self.global_info = global_info  # read extra_info.frame_state's chests, buffs and monsters
        size = GRID_SIZE + 2 * PAD
        self.passable = np.zeros((size, size), dtype=np.float32)  # padded [z, x]: 1 road seen
        self.seen = np.zeros((size, size), dtype=np.float32)
        self.visits = np.zeros((size, size), dtype=np.float32)
        self.hero = (0, 0)
        self.step_no = 0
        self.view = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=bool)  # [row z, col x], True = road
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
        self.hero_field = None  # path cells from the hero over the view, while a monster is in view
        self.revisit = 0.0  # visits on the hero's cell before this step
        self._chest_steps = None  # this step's steps_from_targets over the live chests, once read
        self._rooms = None  # this step's rooms_beyond, once read
        self._move_cells = None  # this step's move_cell per direction, once read
        self._flash_cells = None  # this step's flash_cell per direction, once read

    # --- the update -----------------------------------------------------------------------------

    def update(self, env_obs: dict) -> "GorgeMemory":
        obs = env_obs.get("observation", env_obs)
        frame = obs["frame_state"]
        hero = frame["heroes"]
        self.hero = (int(hero["pos"]["x"]), int(hero["pos"]["z"]))
        self.step_no = int(obs.get("step_no", 0))
        self.flash_cooldown = int(hero.get("flash_cooldown", 0))
        self.buff_remaining = int(hero.get("buff_remaining_time", 0))
        self.env_info = obs.get("env_info") or {}
        self.chest_count = int(self.env_info.get("treasures_collected", hero.get("treasure_collected_count", 0)))
        self.buff_count = int(self.env_info.get("collected_buff", 0))
        self.legal_action = [bool(v) for v in obs.get("legal_action", self.legal_action)]
        self.view = np.asarray(obs["map_info"], dtype=bool)
        self._chest_steps = self._rooms = self._move_cells = self._flash_cells = None
        truth = ((env_obs.get("extra_info") or {}).get("frame_state") or {}) if self.global_info else {}
        self._remember_map()
        self._read_organs(frame.get("organs") or [], truth.get("organs"))
        self._read_monsters(frame.get("monsters") or [], truth.get("monsters"))
        return self

    def _window(self, array: np.ndarray, radius: int) -> np.ndarray:
        """A (2 radius + 1)² view of a padded map around the hero (a view, not a copy)."""
        x, z = self.hero[0] + PAD, self.hero[1] + PAD
        return array[z - radius:z + radius + 1, x - radius:x + radius + 1]

    def _remember_map(self) -> None:
        seen = self._window(self.seen, VIEW_RADIUS)
        self.new_cells = int(VIEW_SIZE * VIEW_SIZE - seen.sum())
        seen[:] = 1.0
        self._window(self.passable, VIEW_RADIUS)[:] = self.view
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
        self.monster_field = path_field(self.view, sources)
        self.hero_field = path_field(self.view, [(VIEW_RADIUS, VIEW_RADIUS)]) if sources else None

    # --- reading it -----------------------------------------------------------------------------

    def to_view(self, x: int, z: int) -> tuple[int, int]:
        """A map cell as (column, row) of the view."""
        return x - self.hero[0] + VIEW_RADIUS, z - self.hero[1] + VIEW_RADIUS

    def in_view(self, x: int, z: int) -> bool:
        return abs(x - self.hero[0]) <= VIEW_RADIUS and abs(z - self.hero[1]) <= VIEW_RADIUS

    def road(self, c: int, r: int) -> bool:
        """A view cell (column, row) is road (off the view: unknown, counted blocked)."""
        return 0 <= c < VIEW_SIZE and 0 <= r < VIEW_SIZE and bool(self.view[r, c])

    def move_cell(self, d: int) -> tuple[int, int] | None:
        """The view cell a one-cell move in direction d enters (a diagonal needs one of its two
        orthogonal cells open), None when it is blocked. Read by the features, the mask and the
        rooms: worked out once a step."""
        if self._move_cells is None:
            self._move_cells = [self._move_cell(i) for i in range(NUM_MOVES)]
        return self._move_cells[d]

    def flash_cell(self, d: int) -> tuple[int, int, int]:
        """(column, row, k): where a flash in direction d lands (the farthest road cell within
        its reach, passing over anything); k = 0 when none is (the hero stays). Once a step."""
        if self._flash_cells is None:
            self._flash_cells = [self._flash_cell(i) for i in range(NUM_MOVES)]
        return self._flash_cells[d]

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
        reach = FLASH_RANGE_DIAGONAL if dx and dz else FLASH_RANGE
        for k in range(reach, 0, -1):
            c, r = VIEW_RADIUS + dx * k, VIEW_RADIUS + dz * k
            if self.road(c, r) and 0 <= self.hero[0] + dx * k < GRID_SIZE and 0 <= self.hero[1] + dz * k < GRID_SIZE:
                return c, r, k
        return VIEW_RADIUS, VIEW_RADIUS, 0

    def monster_distance(self, c: int = VIEW_RADIUS, r: int = VIEW_RADIUS) -> int:
        """Path cells from the nearest monster in view to a view cell (UNREACHED: none within FAR)."""
        return int(self.monster_field[r, c])

    def hero_distance(self, x: int, z: int) -> int:
        """Path cells from the hero to a map cell in view (UNREACHED beyond FAR or with no monster in view)."""
        if self.hero_field is None or not self.in_view(x, z):
            return UNREACHED
        c, r = self.to_view(x, z)
        return int(self.hero_field[r, c])

    def chest_steps(self) -> np.ndarray:
        """3×3 [dz + 1, dx + 1]: path steps to the nearest live chest known from the hero's cell
        and its neighbours, over the explored map within the coarse crops' reach (unseen cells
        counted as road); paths.UNKNOWN_STEPS where none lies within CHEST_STEP_LIMIT."""
        if self._chest_steps is None:
            seen, road = self._window(self.seen, COARSE_RADIUS), self._window(self.passable, COARSE_RADIUS)
            walkable = (road > 0) | (seen == 0)
            hx, hz = self.hero
            targets = [(x - hx + COARSE_RADIUS, z - hz + COARSE_RADIUS) for x, z in self.live_chests()]
            self._chest_steps = steps_from_targets(walkable, targets, CHEST_STEP_LIMIT)
        return self._chest_steps

    def rooms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """This step's `rooms_beyond` of the view (feature.gorge_chase.paths), labelled from the
        move cells and the flash landings."""
        if self._rooms is None:
            starts = [cell for cell in (self.move_cell(d) for d in range(NUM_MOVES)) if cell is not None]
            starts += [self.flash_cell(d)[:2] for d in range(NUM_MOVES)]
            monsters = [self.to_view(s.x, s.z) for s in self.monsters if s.in_view]
            self._rooms = rooms_beyond(self.view, starts, monsters)
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
        """The 63 × 63 cells around the hero of a padded map, averaged over 3 × 3 blocks (21 × 21)."""
        block = self._window(array, COARSE_RADIUS)
        return block.reshape(VIEW_SIZE, COARSE, VIEW_SIZE, COARSE).mean(axis=(1, 3))

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
