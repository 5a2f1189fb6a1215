"""The 2025 protocol (code package 18.0.2) read as the 2024 one, so the features and the
reward (feature.back_to_the_realm.layout, feature.back_to_the_realm.observation, feature.back_to_the_realm.unpack, feature.back_to_the_realm.reward) serve both.

A 2025 server sends much less: the hero (frame_state.heroes), the organs within the 51×51
view, game_info (with the start and end world positions and the episode's chest total) and
the obstacle window (map_info); no memory map, no relative positions. `Realm18View` keeps
what an episode has shown and builds from each 2025 Observation the 2024 `Observation`
(`legal_act`, `feature`: norm_pos, grid_pos, start/end/buff/treasure RelativePositions, the
four maps as flat row-major sequences) and `EnvInfo` (frame_state, game_info) with the
attribute names, layouts and numbers of SPEC §7 (grid_pos axis-swapped, direction 1..8,
buckets 1..5, grid_distance = cells / 256, null = (0, 5, 5, 1.0)).

What it reproduces exactly: obstacle_map (the window as sent), memory_map (its own 128×128
map, +0.2 per step ended in a cell, capped at 1, the window read before the increment; a
reset is not a step), treasure_map and end_map (every organ inside the window is in view),
norm_pos and grid_pos (from the hero's int position), direction and l2_distance of every
object whose position it knows. Where 2025 data cannot give the 2024 value, a stand-in:
- grid_distance / path_distance: a BFS over the map as the episode's windows have shown it,
  unseen ground open (feature.back_to_the_realm.explored_map): the 2024 length once the ground between has
  been seen, a lower bound before; null only when seen walls leave no path;
- chests: known from the first step one is in view; until then null (2024: every chest of
  the episode from the start). A known chest stays live until a view holds its cell without
  it live (collected);
- the buff: known once seen; taken, it counts as back after the cooldown it showed then
  (2024's organ cooldown); in a view without it, null until seen again;
- env_info.frame_state.organs: the chests and buff known so far (2024: all of them).
Start and end are always known (game_info), so their RelativePositions are never null
unless seen walls cut them off. norm_pos comes from the int position the protocol sends
(2024: the exact float, < 1 unit apart); a hero within half a unit of a cell edge may then be
placed in the neighbouring cell, as in any 2025 package.

The view assumes map_info is centred on the hero's cell, as the official guide defines it.
Cost: ~1.3 ms a step on the simulator (the BFS; the 2025 env's own step is ~0.03 ms).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from feature.back_to_the_realm.constants import (CELL_WIDTH, GRID_DISTANCE_SCALE, GRID_SIZE, L2_BUCKETS, MEMORY_INCREMENT, MS_PER_STEP,
                               NULL_BUCKET, NULL_GRID_DISTANCE, NUM_TREASURE_SLOTS, ORGAN_BUFF, ORGAN_CHEST,
                               ORIGIN_X, ORIGIN_Z, PATH_BUCKETS, VIEW_RADIUS, VIEW_SIZE, WORLD_SIZE, cell_of)
from feature.back_to_the_realm.explored_map import ExploredMap

# --- the 2024 protocol's shapes (SPEC §7), as the features read them ----------------------------


@dataclass(slots=True)
class Position:
    x: float
    z: float


@dataclass(slots=True, frozen=True)
class RelativePosition:
    direction: int  # 0 none, 1 East, 2 NE, ... 8 SE
    l2_distance: int  # bucket 1..5
    path_distance: int  # bucket 1..5
    grid_distance: float  # BFS cells / 256

    @property
    def is_null(self) -> bool:
        return self.direction == 0


NULL_RELATIVE_POSITION = RelativePosition(0, NULL_BUCKET, NULL_BUCKET, NULL_GRID_DISTANCE)


@dataclass(slots=True)
class RealmFeature:
    norm_pos: Position  # world / 64000
    grid_pos: Position  # axis-swapped: x = zc, z = xc
    start_pos: RelativePosition
    end_pos: RelativePosition
    buff_pos: RelativePosition
    treasure_pos: list  # 15 RelativePositions, index i <-> position id i + 1
    obstacle_map: np.ndarray  # flat 2601 int32, row-major [z][x]: 1 passable
    memory_map: np.ndarray  # flat 2601 float32
    treasure_map: np.ndarray  # flat 2601 int32: 1 on live chests
    end_map: np.ndarray  # flat 2601 int32: 1 on the end's cell


@dataclass(slots=True)
class Observation:
    legal_act: list
    feature: RealmFeature


@dataclass(slots=True)
class Organ:
    sub_type: int  # 1 chest, 2 buff
    config_id: int
    status: int  # 1 collectable
    pos: Position  # world
    cooldown: int  # ms


@dataclass(slots=True)
class FrameState:
    frame_no: int
    heroes: list  # the 2025 RealmHero objects as sent (hero_id, pos, speed_up, talent)
    organs: list  # Organs known so far


@dataclass(slots=True)
class GameInfo:
    score: float
    total_score: float
    step_no: int
    pos: Position
    treasure_count: int  # collected (2025: treasure_collected_count)
    treasure_score: float
    buff_count: int
    talent_count: int
    buff_remain_time: int
    buff_duration: int


@dataclass(slots=True)
class EnvInfo:
    frame_state: FrameState
    game_info: GameInfo


# --- the view ----------------------------------------------------------------------------------


def relative_position(hero_cell: tuple[int, int], target: tuple[float, float], cells: int | None) -> RelativePosition:
    """The 2024 RelativePosition of a world point from the centre of the hero's cell (xc, zc),
    `cells` to walk (None: null)."""
    if cells is None:
        return NULL_RELATIVE_POSITION
    dx = target[0] - (hero_cell[0] * CELL_WIDTH + ORIGIN_X + CELL_WIDTH / 2)
    dz = target[1] - (hero_cell[1] * CELL_WIDTH + ORIGIN_Z + CELL_WIDTH / 2)
    direction = round(math.atan2(dz, dx) / (math.pi / 4)) % 8 + 1
    l2 = 1 + sum(math.hypot(dx, dz) > edge for edge in L2_BUCKETS)
    path = 1 + sum(cells > edge for edge in PATH_BUCKETS)
    return RelativePosition(direction, l2, path, cells / GRID_DISTANCE_SCALE)


def _window(obs) -> np.ndarray:
    rows = [list(row.values) for row in obs.map_info]
    grid = np.asarray(rows, dtype=np.int32)
    if grid.shape != (VIEW_SIZE, VIEW_SIZE):
        raise ValueError(f"map_info must be {VIEW_SIZE} rows of {VIEW_SIZE} values, got shape {grid.shape}")
    return grid


class Realm18View:
    """One env's episodes in the 2024 shapes: `reset(obs)` at an episode's start, `step(obs)`
    after every step; each returns `(Observation, EnvInfo)` of the 2024 protocol."""

    def __init__(self):
        self._clear()

    def _clear(self) -> None:
        self._memory = np.zeros((GRID_SIZE + 2 * VIEW_RADIUS,) * 2, dtype=np.float32)  # padded like the window
        self._explored = ExploredMap()
        self._chests: dict[int, tuple[float, float]] = {}  # every chest seen: id -> world (x, z)
        self._live: set[int] = set()
        self._buff: tuple[float, float] | None = None
        self._buff_id = 0
        self._buff_back: int | None = None  # step from which the buff counts as collectable; None: unknown

    def reset(self, obs) -> tuple[Observation, EnvInfo]:
        """A new episode's first observation (a reset does not mark the memory map)."""
        self._clear()
        return self._convert(obs, end_of_step=False)

    def step(self, obs) -> tuple[Observation, EnvInfo]:
        return self._convert(obs, end_of_step=True)

    # --- what the episode has shown -------------------------------------------------------------

    def _remember_organs(self, obs, xc: int, zc: int, step_no: int) -> None:
        listed_chests, buff = set(), None
        for organ in obs.frame_state.organs:
            where = (float(organ.pos.x), float(organ.pos.z))
            if organ.sub_type == ORGAN_CHEST:
                self._chests[organ.config_id] = where
                listed_chests.add(organ.config_id)
                if organ.status == 1:
                    self._live.add(organ.config_id)
                else:
                    self._live.discard(organ.config_id)
            elif organ.sub_type == ORGAN_BUFF:
                buff = organ
        for pid in list(self._live):  # a live chest would be listed wherever the view holds its cell
            if pid not in listed_chests and self._in_window(self._chests[pid], xc, zc):
                self._live.discard(pid)
        if buff is not None:
            self._buff, self._buff_id = (float(buff.pos.x), float(buff.pos.z)), int(buff.config_id)
            self._buff_back = step_no if buff.status == 1 else step_no + math.ceil(buff.cooldown / MS_PER_STEP)
        elif self._buff is not None and self._in_window(self._buff, xc, zc):
            self._buff_back = None

    @staticmethod
    def _in_window(world: tuple[float, float], xc: int, zc: int) -> bool:
        oxc, ozc = cell_of(*world)
        return abs(oxc - xc) <= VIEW_RADIUS and abs(ozc - zc) <= VIEW_RADIUS

    def _buff_live(self, step_no: int) -> bool:
        return self._buff is not None and self._buff_back is not None and step_no >= self._buff_back

    # --- the conversion -----------------------------------------------------------------------------

    def _convert(self, obs, end_of_step: bool) -> tuple[Observation, EnvInfo]:
        hero = obs.frame_state.heroes[0]
        game = obs.game_info
        x, z = float(hero.pos.x), float(hero.pos.z)
        xc, zc = cell_of(x, z)
        step_no = int(game.step_no)
        self._remember_organs(obs, xc, zc, step_no)
        obstacle = _window(obs)
        self._explored.add_window(obstacle, xc, zc)
        paths = self._explored.paths_from(xc, zc)

        def rel(world: tuple[float, float]) -> RelativePosition:
            return relative_position((xc, zc), world, paths.cells_to(*cell_of(*world)))

        def marked(ids_worlds) -> np.ndarray:
            grid = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.int32)
            for world in ids_worlds:
                oxc, ozc = cell_of(*world)
                row, col = VIEW_RADIUS + ozc - zc, VIEW_RADIUS + oxc - xc
                if 0 <= row < VIEW_SIZE and 0 <= col < VIEW_SIZE:
                    grid[row, col] = 1
            return grid.reshape(-1)

        start = (float(game.start_pos.x), float(game.start_pos.z))
        end = (float(game.end_pos.x), float(game.end_pos.z))
        treasure_pos = [NULL_RELATIVE_POSITION] * NUM_TREASURE_SLOTS
        for pid in self._live:
            if 1 <= pid <= NUM_TREASURE_SLOTS:
                treasure_pos[pid - 1] = rel(self._chests[pid])
        buff_live = self._buff_live(step_no)

        memory = self._memory[zc:zc + VIEW_SIZE, xc:xc + VIEW_SIZE].copy().reshape(-1)
        if end_of_step:
            centre = (zc + VIEW_RADIUS, xc + VIEW_RADIUS)
            visits = float(self._memory[centre]) + MEMORY_INCREMENT
            self._memory[centre] = visits if visits < 1.0 else 1.0

        feature = RealmFeature(
            norm_pos=Position(x / WORLD_SIZE, z / WORLD_SIZE),
            grid_pos=Position(zc, xc),
            start_pos=rel(start),
            end_pos=rel(end),
            buff_pos=rel(self._buff) if buff_live else NULL_RELATIVE_POSITION,
            treasure_pos=treasure_pos,
            obstacle_map=obstacle.reshape(-1),
            memory_map=memory,
            treasure_map=marked(self._chests[pid] for pid in self._live),
            end_map=marked([end]),
        )
        return Observation(list(obs.legal_act), feature), self._env_info(obs, buff_live, step_no)

    def _env_info(self, obs, buff_live: bool, step_no: int) -> EnvInfo:
        game = obs.game_info
        organs = [Organ(ORGAN_CHEST, pid, 1 if pid in self._live else 0, Position(*self._chests[pid]), 0)
                  for pid in sorted(self._chests)]
        if self._buff is not None:
            cooldown = 0 if buff_live or self._buff_back is None else (self._buff_back - step_no) * MS_PER_STEP
            organs.append(Organ(ORGAN_BUFF, self._buff_id, 1 if buff_live else 0, Position(*self._buff), cooldown))
        info = GameInfo(
            score=game.score, total_score=game.total_score, step_no=step_no, pos=game.pos,
            treasure_count=int(game.treasure_collected_count), treasure_score=game.treasure_score,
            buff_count=int(game.buff_count), talent_count=int(game.talent_count),
            buff_remain_time=int(game.buff_remain_time), buff_duration=int(game.buff_duration))
        return EnvInfo(FrameState(int(obs.frame_state.frame_no), list(obs.frame_state.heroes), organs), info)


class Preprocessor(Realm18View):
    """What a 2025 platform workflow (the official eval and exam workflows among them) builds
    once per episode, `Preprocessor()`, and hands to `agent.observation_process(obs,
    preprocessor, state)` with every observation: `process(obs)` reads the first as the
    reset's and every later one as a step's, and returns the 2024 `(Observation, EnvInfo)`."""

    def __init__(self):
        super().__init__()
        self._started = False
        self.core_state = None  # a recurrent policy's state in this episode (agent.workflow_methods)

    def process(self, obs) -> tuple[Observation, EnvInfo]:
        if not self._started:
            self._started = True
            return self.reset(obs)
        return self.step(obs)
