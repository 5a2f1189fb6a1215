"""An episode's memory of robot_vacuum, built from what the hero's observation shows (the
`observation` of env_obs: the 21×21 map_info, the robots in view, the chargers, env_info), so
the same features are computed on the platform: the map explored so far (road, dirt as last
seen, what was never in view), the cells the hero stood on, where official robots were seen,
the chargers' cells, and per step the path lengths to the nearest charger and the nearest
known dirt and where each move would take the hero.

`global_info` also reads env_obs's `extra_info.frame_state` where it arrives: every official
robot's true cell (the 13.0.1 env lists it, docs/games/robot_vacuum.md, "The wire"). Without
it, or where extra_info lacks it, only the view is read.

A charger's `pos` is its footprint's top-left cell or its centre (the sources disagree;
docs/games/robot_vacuum.md, option `charger_pos`): `charger_pos` "either" takes only the 2 × 2
cells both readings share, so a path to them always ends on the charger; "top_left" and
"centre" take the 3 × 3 of that reading. A step that ends on a full battery marks the hero's
cell a charger cell for certain, whatever the reading.

`VacuumMemory().update(env_obs)` after the reset and after every step; the layout
(feature.robot_vacuum.layout) and the reward (feature.robot_vacuum.reward) read it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from feature.bitgrid import UNKNOWN_STEPS, bit_grid, steps_near
from feature.robot_vacuum.constants import (CELL_BLOCKED, CELL_DIRT, CHARGER_SIZE, DIRECTIONS, GRID_SIZE,
                                            MAX_ROBOTS, NUM_MOVES, SUB_TYPE_CHARGER, VIEW_RADIUS, VIEW_SIZE)

COARSE = 3  # cells per side of a near crop's cell
COARSE_RADIUS = COARSE * VIEW_SIZE // 2  # 31: the near crops cover 63 × 63 cells around the hero
PAD = COARSE_RADIUS
VISIT = 0.2  # a step's weight on the visits map (capped at 1)
#: the global maps' 21 blocks per side over the 128 cells (6 or 7 cells each)
GLOBAL_STARTS = np.linspace(0, GRID_SIZE, VIEW_SIZE + 1).round().astype(np.int64)
GLOBAL_BLOCK = np.repeat(np.arange(VIEW_SIZE), np.diff(GLOBAL_STARTS))  # a map coordinate's block
#: (21, 128): row i averages the coordinates of block i, so P @ layer @ P.T is the blocks' means
GLOBAL_POOL = ((GLOBAL_BLOCK[None, :] == np.arange(VIEW_SIZE)[:, None]) / np.diff(GLOBAL_STARTS)[:, None]).astype(
    np.float32)
GRID = bit_grid(GRID_SIZE, GRID_SIZE)
CHARGER_LIMIT = 2 * GRID_SIZE  # path steps searched toward a charger (farther reads as this far)
DIRT_LIMIT = 64  # path steps searched toward known dirt
ROBOT_KEEP_OUT = 2  # Chebyshev cells around an official robot a route keeps out of (its next step's contact)
FAR_ROBOT = 99  # the Chebyshev gap read when no official robot's cell is known
CHARGER_READINGS = ("either", "top_left", "centre")
#: the footprint cells (dx, dz) from a charger's pos under each reading
FOOTPRINT = {
    "either": tuple((dx, dz) for dz in (0, 1) for dx in (0, 1)),
    "top_left": tuple((dx, dz) for dz in range(CHARGER_SIZE) for dx in range(CHARGER_SIZE)),
    "centre": tuple((dx, dz) for dz in (-1, 0, 1) for dx in (-1, 0, 1)),
}
ROAD, DIRT, SEEN, TRAIL, VISITS = range(5)  # the layers of the memory's maps
NEAR_LAYERS = slice(ROAD, SEEN + 1)  # road, dirt, seen: the near crops
GLOBAL_LAYERS = slice(DIRT, TRAIL + 1)  # dirt, seen, trail: the global maps


@dataclass
class RobotSeen:
    """One official robot (by npc_id, in the order first listed) as the hero knows it."""

    npc_id: str
    known: bool = False  # its cell is known this step (in view, or extra_info's true cell)
    in_view: bool = False
    x: int = -1  # its cell this step when known
    z: int = -1
    last_x: int = -1  # the last cell known, -1 never
    last_z: int = -1
    last_step: int = -1


class VacuumMemory:
    def __init__(self, global_info: bool = False, charger_pos: str = "either", battery_guard: bool = False,
                 robot_guard: bool = False, unseen_slack: float = 20.0):
        if charger_pos not in CHARGER_READINGS:
            raise ValueError(f"charger_pos must be one of {', '.join(CHARGER_READINGS)}, got {charger_pos!r}")
        self.global_info = global_info
        self.charger_pos = charger_pos
        self.battery_guard = battery_guard  # the legal mask keeps the way to a charger (layout.legal_mask)
        self.robot_guard = robot_guard  # the legal mask keeps out of a robot's next reach (layout.legal_mask)
        self.unseen_slack = unseen_slack  # the battery guard's spare over a route not yet seen (layout.guarded_moves)
        size = GRID_SIZE + 2 * PAD
        self._maps = np.zeros((5, size, size), dtype=np.float32)  # padded [z, x] layers: ROAD .. VISITS
        self._maps[SEEN] = 1.0  # off the map counts as seen and blocked
        self._maps[SEEN, PAD:PAD + GRID_SIZE, PAD:PAD + GRID_SIZE] = 0.0
        self.road, self.dirt, self.seen, self.trail, self.visits = self._maps
        self.hero = (0, 0)
        self.previous_hero: tuple[int, int] | None = None  # the hero's cell before this step (None at the reset)
        self._updated = False
        self.step_no = 0
        self.max_step = 1
        self.battery = 0
        self.battery_max = 1
        self.score = 0
        self.total_dirt = 1
        self.charge_count = 0
        self.view = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.int8)  # map_info [row z, column x]
        self.legal_action = [True] * NUM_MOVES
        self.env_info: dict = {}
        self.robots: list[RobotSeen] = []
        self.chargers: dict[int, tuple[int, int]] = {}  # config_id -> pos as the wire gives it
        self.charger_cells: set[tuple[int, int]] = set()  # cells that charge, by the reading and by experience
        self._charger_bits = 0
        self.new_cells = 0
        self.revisit = 0.0  # visits on the hero's cell before this step
        self.known_dirt = 0  # dirt cells as last seen, on the whole map
        self.seen_cells = 0  # map cells ever in view
        self._step_cache: dict = {}

    # --- the update -----------------------------------------------------------------------------

    def update(self, env_obs: dict) -> "VacuumMemory":
        obs = env_obs.get("observation", env_obs)
        if not isinstance(obs, dict) or "frame_state" not in obs or "map_info" not in obs:
            extra = env_obs.get("extra_info") or {}
            raise ValueError(f"env_obs['observation'] must hold frame_state and map_info, got {type(obs).__name__} "
                             f"(an error env_obs? result_code {extra.get('result_code')}: {extra.get('result_message')})")
        frame = obs["frame_state"]
        hero = frame["heroes"]
        info = obs.get("env_info") or {}
        self.env_info = info
        self.previous_hero = self.hero if self._updated else None
        self._updated = True
        self.hero = (int(hero["pos"]["x"]), int(hero["pos"]["z"]))
        self.step_no = int(obs.get("step_no", 0))
        self.battery = int(info.get("remaining_charge", hero.get("battery", 0)))
        self.battery_max = max(int(info.get("battery_max", hero.get("battery_max", 1))), 1)
        self.max_step = max(int(info.get("max_step", self.max_step)), 1)
        self.score = int(info.get("total_score", hero.get("dirt_cleaned", 0)))
        self.total_dirt = max(int(info.get("total_dirt", self.total_dirt)), 1)
        self.charge_count = int(info.get("charge_count", 0))
        legal = obs.get("legal_action", obs.get("legal_act"))
        self.legal_action = [bool(v) for v in legal] if legal is not None else [True] * NUM_MOVES
        self.view = np.asarray(obs["map_info"], dtype=np.int8)
        self._step_cache = {}
        truth = ((env_obs.get("extra_info") or {}).get("frame_state") or {}) if self.global_info else {}
        self._remember_map()
        self._read_chargers(frame.get("organs") or [])
        self._read_robots(frame.get("npcs") or [], truth.get("npcs"))
        return self

    def window(self, array: np.ndarray, radius: int) -> np.ndarray:
        """A (2 radius + 1)² view of a padded map around the hero (a view, not a copy)."""
        x, z = self.hero[0] + PAD, self.hero[1] + PAD
        return array[..., z - radius:z + radius + 1, x - radius:x + radius + 1]

    def _remember_map(self) -> None:
        seen = self.window(self.seen, VIEW_RADIUS)
        self.new_cells = int(VIEW_SIZE * VIEW_SIZE - seen.sum())
        self.seen_cells += self.new_cells
        dirt = self.window(self.dirt, VIEW_RADIUS)
        self.known_dirt -= int(dirt.sum())
        seen[:] = 1.0
        self.window(self.road, VIEW_RADIUS)[:] = self.view != CELL_BLOCKED
        dirt[:] = self.view == CELL_DIRT
        self.known_dirt += int(dirt.sum())
        here = self.window(self.visits, 0)
        self.revisit = float(here[0, 0])
        here[0, 0] = min(1.0, here[0, 0] + VISIT)

    def _read_chargers(self, organs: list) -> None:
        for organ in organs:
            if organ.get("sub_type") != SUB_TYPE_CHARGER:
                continue
            config_id, pos = int(organ["config_id"]), (int(organ["pos"]["x"]), int(organ["pos"]["z"]))
            if self.chargers.get(config_id) != pos:
                self.chargers[config_id] = pos
                self._add_charger_cells((pos[0] + dx, pos[1] + dz) for dx, dz in FOOTPRINT[self.charger_pos])
        if self.on_charger:  # a full battery after a step: the hero stands on a charger
            self._add_charger_cells([self.hero])

    def _add_charger_cells(self, cells) -> None:
        for x, z in cells:
            if 0 <= x < GRID_SIZE and 0 <= z < GRID_SIZE and (x, z) not in self.charger_cells:
                self.charger_cells.add((x, z))
                self._charger_bits |= GRID.bit(x, z)

    def _read_robots(self, npcs: list, true_npcs: list | None) -> None:
        truth = {str(n.get("npc_id")): n for n in true_npcs or ()}
        by_id = {r.npc_id: r for r in self.robots}
        for robot in self.robots:
            robot.known = robot.in_view = False
            robot.x = robot.z = -1
        for npc in npcs:
            key = str(npc.get("npc_id"))
            robot = by_id.get(key)
            if robot is None:
                if len(self.robots) >= MAX_ROBOTS:
                    continue
                robot = by_id[key] = RobotSeen(key)
                self.robots.append(robot)
            shown = int((npc.get("pos") or {}).get("x", -1)) >= 0  # out of view: pos -1, -1 (or the true pos)
            robot.in_view = shown and bool(npc.get("is_in_view", 1))
            source = npc if shown else truth.get(key)
            if source is not None and int(source["pos"]["x"]) >= 0:
                robot.known = True
                robot.x, robot.z = int(source["pos"]["x"]), int(source["pos"]["z"])
                robot.last_x, robot.last_z, robot.last_step = robot.x, robot.z, self.step_no
                self.trail[robot.z + PAD, robot.x + PAD] = 1.0

    # --- reading it -----------------------------------------------------------------------------

    @property
    def on_charger(self) -> bool:
        """A step ended on a charger: the battery refills there and drops everywhere else."""
        return self.step_no > 0 and self.battery >= self.battery_max

    def known_robots(self) -> list[tuple[int, int]]:
        """The official robots' cells known this step."""
        return [(r.x, r.z) for r in self.robots if r.known]

    def robot_gap(self, x: int, z: int) -> int:
        """Chebyshev distance from a cell to the nearest official robot known this step
        (FAR_ROBOT with none known); contact is a gap of 1 or less after the robots move."""
        return min((max(abs(rx - x), abs(rz - z)) for rx, rz in self.known_robots()), default=FAR_ROBOT)

    def to_view(self, x: int, z: int) -> tuple[int, int]:
        """A map cell as (column, row) of the view."""
        return x - self.hero[0] + VIEW_RADIUS, z - self.hero[1] + VIEW_RADIUS

    def in_view(self, x: int, z: int) -> bool:
        return abs(x - self.hero[0]) <= VIEW_RADIUS and abs(z - self.hero[1]) <= VIEW_RADIUS

    def _open(self, c: int, r: int) -> bool:
        return 0 <= c < VIEW_SIZE and 0 <= r < VIEW_SIZE and self.view[r, c] != CELL_BLOCKED

    def move_cells(self) -> list[tuple[int, int] | None]:
        """Per direction, the map cell a move enters (a diagonal needing one of its two straight
        cells open), None when the view shows it blocked. This step's list: do not change it."""
        cells = self._step_cache.get("moves")
        if cells is None:
            cells = []
            for dx, dz in DIRECTIONS:
                c, r = VIEW_RADIUS + dx, VIEW_RADIUS + dz
                ok = self._open(c, r) and (not (dx and dz) or self._open(c, VIEW_RADIUS) or self._open(VIEW_RADIUS, r))
                cells.append((self.hero[0] + dx, self.hero[1] + dz) if ok else None)
            self._step_cache["moves"] = cells
        return cells

    def _bits(self, name: str, mask) -> int:
        bits = self._step_cache.get(name)
        if bits is None:
            bits = self._step_cache[name] = GRID.of_mask(mask())
        return bits

    def _inner(self, layer: np.ndarray) -> np.ndarray:
        return layer[PAD:PAD + GRID_SIZE, PAD:PAD + GRID_SIZE]

    def charger_steps(self) -> tuple[np.ndarray, bool]:
        """(3 × 3 [dz + 1, dx + 1] path steps from the hero's cell and its neighbours to the
        nearest charger cell, whether the route runs over road seen). The route over road seen
        is the one the battery can count on; while none is known the steps are the optimistic
        guess (cells never seen counted as road). UNKNOWN_STEPS beyond CHARGER_LIMIT."""
        found = self._step_cache.get("charger")
        if found is None:
            road = self._bits("road", lambda: self._inner(self.road) > 0)
            steps = steps_near(GRID, road, self._charger_bits, self.hero, CHARGER_LIMIT)
            known = steps[1, 1] != UNKNOWN_STEPS
            if not known:
                steps = steps_near(GRID, self._ground(), self._charger_bits, self.hero, CHARGER_LIMIT)
            found = self._step_cache["charger"] = (steps, bool(known))
        return found

    def charger_steps_around_robots(self) -> np.ndarray | None:
        """3 × 3 path steps to the nearest charger over road seen keeping out of every known
        official robot's reach (cells within Chebyshev ROBOT_KEEP_OUT of it): the detour a robot
        in the corridor costs. None when no robot is known or the hero itself is in a reach."""
        if not self.known_robots() or self.robot_gap(*self.hero) <= ROBOT_KEEP_OUT:
            return None
        found = self._step_cache.get("charger_around_robots")
        if found is None:
            span = range(-ROBOT_KEEP_OUT, ROBOT_KEEP_OUT + 1)
            reach = GRID.of_cells((x + dx, z + dz) for x, z in self.known_robots() for dx in span for dz in span)
            road = self._bits("road", lambda: self._inner(self.road) > 0) & ~reach
            found = self._step_cache["charger_around_robots"] = steps_near(GRID, road, self._charger_bits, self.hero,
                                                                           CHARGER_LIMIT)
        return found

    def dirt_steps(self) -> np.ndarray:
        """3 × 3 [dz + 1, dx + 1] path steps from the hero's cell and its neighbours to the nearest
        dirt known (as last seen), cells never seen counted as road; UNKNOWN_STEPS where none lies
        within DIRT_LIMIT."""
        steps = self._step_cache.get("dirt")
        if steps is None:
            dirt = self._bits("dirt", lambda: self._inner(self.dirt) > 0)
            steps = self._step_cache["dirt"] = steps_near(GRID, self._ground(), dirt, self.hero, DIRT_LIMIT)
        return steps

    def _ground(self) -> int:
        """Road seen or never seen: the optimistic ground of a search."""
        return self._bits("ground", lambda: (self._inner(self.road) > 0) | (self._inner(self.seen) == 0))

    def near_crops(self) -> np.ndarray:
        """(3, 21, 21): road seen, dirt known, seen, as shares of the 3 × 3 blocks of the 63 × 63
        cells around the hero. This step's array: do not change it."""
        crops = self._step_cache.get("near")
        if crops is None:
            window = self.window(self._maps[NEAR_LAYERS], COARSE_RADIUS)
            crops = window.reshape(3, VIEW_SIZE, COARSE, VIEW_SIZE, COARSE).mean(axis=(2, 4))
            self._step_cache["near"] = crops
        return crops

    def global_maps(self) -> np.ndarray:
        """(3, 21, 21): dirt known, seen, robots' trail, as shares of the whole map's 21 × 21
        blocks (6 or 7 cells a side). This step's array: do not change it."""
        maps = self._step_cache.get("global")
        if maps is None:
            inner = self._maps[GLOBAL_LAYERS, PAD:PAD + GRID_SIZE, PAD:PAD + GRID_SIZE]
            maps = self._step_cache["global"] = GLOBAL_POOL @ inner @ GLOBAL_POOL.T
        return maps

    def global_points(self, cells) -> np.ndarray:
        """1 on the global map's blocks holding one of `cells`."""
        out = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.float32)
        for x, z in cells:
            if 0 <= x < GRID_SIZE and 0 <= z < GRID_SIZE:
                out[GLOBAL_BLOCK[z], GLOBAL_BLOCK[x]] = 1.0
        return out

    def view_points(self, cells) -> np.ndarray:
        """1 on the view cells holding one of `cells`."""
        out = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.float32)
        for x, z in cells:
            c, r = self.to_view(x, z)
            if 0 <= c < VIEW_SIZE and 0 <= r < VIEW_SIZE:
                out[r, c] = 1.0
        return out

    def crop(self, array: np.ndarray) -> np.ndarray:
        """The view-sized crop of a padded map around the hero."""
        return self.window(array, VIEW_RADIUS)
