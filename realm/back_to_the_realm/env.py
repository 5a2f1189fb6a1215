"""RealmEnv: the game's rules (SPEC §3–§7) behind the Kaiwu protocol.

Speed matters (training runs millions of steps), so a step does lookups and slices only: per map
tables come from `realm.back_to_the_realm.lookups`, per episode arrays are built in `reset`, and observation
parts that did not change (read-only windows, chest organs, RelativePositions) are shared
between steps instead of rebuilt. Treat what the env returns as read-only.

Timers (flash cooldown, buff duration, buff respawn) are set by the step whose event starts
them and count down at the end of every later step, so a timer of N keeps its effect for
exactly the N following steps and `legal_act` always tells whether the next flash will fire.
"""
from __future__ import annotations

import math

import numpy as np

from realm.back_to_the_realm.constants import (
    BUFF_DURATION_MS,
    BUFF_DURATION_STEPS,
    BUFF_ID,
    BUFF_RESPAWN_STEPS,
    BUFF_STEP_JITTER_RANGE,
    BUFF_STEP_LENGTH,
    CELL_WIDTH,
    CHEST_SCORE,
    DEFAULT_FLASH_BLOCKED,
    END_BONUS,
    END_REACH_RADIUS,
    FLASH_BLOCKED_RULES,
    FLASH_COOLDOWN_STEPS,
    FLASH_DISTANCE,
    FRAMES_PER_STEP,
    GRID_SIZE,
    HERO_ID,
    MEMORY_INCREMENT,
    MS_PER_STEP,
    NUM_ACTIONS,
    NUM_TREASURE_SLOTS,
    ORGAN_BUFF,
    ORGAN_CHEST,
    ORIGIN_X,
    ORIGIN_Z,
    PICKUP_RADIUS,
    STEP_BONUS,
    STEP_JITTER_RANGE,
    STEP_LENGTH,
    SUB_STEPS,
    TALENT_TYPE_SUPER_FLASH,
    VIEW_SIZE,
    WORLD_SIZE,
)
from realm.episode import EpisodeOverError, EpisodeProgress, checked_action, latest_info  # noqa: F401  (EpisodeOverError: a public name here too)
from realm.back_to_the_realm.lookups import PADDED_SIZE, lookups_for
from realm.map_source import realm_map
from realm.back_to_the_realm.maps import Map
from realm.back_to_the_realm.protocol import (
    NULL_RELATIVE_POSITION,
    EnvInfo,
    EpisodeConfig,
    FrameState,
    GameInfo,
    HeroState,
    Observation,
    Organ,
    Position,
    RealmFeature,
    RepeatedScalar,
    ScoreInfo,
    Talent,
)
from realm.back_to_the_realm.usr_conf import parse_usr_conf

_DIAGONAL = math.sqrt(0.5)
#: Unit vector of direction d (d × 45° counter-clockwise from +x), exact on the axes.
UNIT_VECTORS = (
    (1.0, 0.0),
    (_DIAGONAL, _DIAGONAL),
    (0.0, 1.0),
    (-_DIAGONAL, _DIAGONAL),
    (-1.0, 0.0),
    (-_DIAGONAL, -_DIAGONAL),
    (0.0, -1.0),
    (_DIAGONAL, -_DIAGONAL),
)

# What a special position is in the current episode.
_NOTHING, _CHEST, _BUFF, _END = 0, 1, 2, 3
_PICKUP_SQ = float(PICKUP_RADIUS) ** 2
_END_SQ = float(END_REACH_RADIUS) ** 2
_JITTER_BLOCK = 2048
ACTION_HELP = f"an int in 0..{NUM_ACTIONS - 1} (0..7 move in direction d × 45°, 8..15 flash in direction act − 8)"


def walk_substeps(free: bytes, x: float, z: float, xc: int, zc: int, direction: int, length: float):
    """The hero's SUB_STEPS positions (x, z, xc, zc) for a move of `length` in `direction`.

    A part that would enter a blocked or off-map cell keeps its x component if that alone is
    free, else its z component, else stays (▶ x is tried first at an outer corner). Crossing
    a cell corner diagonally needs one of the two side cells free, as 4-connected paths do.
    `free` is the map's passable grid as bytes [zc * 128 + xc]. The env and the route planner
    share this one rule.
    """
    ux, uz = UNIT_VECTORS[direction]
    dx = ux * length / SUB_STEPS
    dz = uz * length / SUB_STEPS
    points = []
    for _ in range(SUB_STEPS):
        nx = x + dx
        nz = z + dz
        nxc = int((nx - ORIGIN_X) // CELL_WIDTH)
        nzc = int((nz - ORIGIN_Z) // CELL_WIDTH)
        if nxc == xc and nzc == zc:
            x, z = nx, nz
        elif (
            0 <= nxc < GRID_SIZE
            and 0 <= nzc < GRID_SIZE
            and free[nzc * GRID_SIZE + nxc]
            and (nxc == xc or nzc == zc or free[zc * GRID_SIZE + nxc] or free[nzc * GRID_SIZE + xc])
        ):
            x, z, xc, zc = nx, nz, nxc, nzc
        elif dx != 0.0 and (nxc == xc or (0 <= nxc < GRID_SIZE and free[zc * GRID_SIZE + nxc])):
            x, xc = nx, nxc
        elif dz != 0.0 and (nzc == zc or (0 <= nzc < GRID_SIZE and free[nzc * GRID_SIZE + xc])):
            z, zc = nz, nzc
        points.append((x, z, xc, zc))
    return points


def _world_position(x: float, z: float) -> Position:
    """The protocol's int32 Position of a world point (▶ rounded to the nearest unit)."""
    return Position(round(x), round(z))


def final_score(max_step, steps_used, chests):
    """The game's score for reaching the end (SPEC §6); works on numpy arrays too (the planner)."""
    return END_BONUS + STEP_BONUS * (max_step - steps_used) + CHEST_SCORE * chests


class RealmEnv(EpisodeProgress):
    """One hero on one map. `reset(usr_conf, seed)` starts an episode, `step(act)` plays one step.

    Rules: `flash_blocked` ("fail" | "nearest", SPEC §5), `step_jitter` (step lengths drawn in
    the observed ranges), `seed` (the episode RNG used for random chests and jitter; a `seed`
    passed to `reset` restarts it, so the same seed replays the same episode).
    """

    __slots__ = (
        "map", "episode", "flash_blocked", "step_jitter",
        "_lookups", "_rng", "_relative", "_reachable", "_passable", "_positions",
        "_x", "_z", "_xc", "_zc", "_steps", "_frame_no", "_done", "_started",
        "_flash_cd", "_buff_remain", "_buff_cd", "_kind",
        "_chests", "_buff_count", "_talent_count", "_total_score",
        "_memory", "_treasure_source", "_end_source", "_live_chests", "_organs",
        "_buff_organ", "_buff_position", "_jitter", "_jitter_next",
        "_env_info",
    )
    #: the Kaiwu protocol it speaks (realm.make_env's `protocol`), and the rules only it takes
    PROTOCOL = "2024"
    PROTOCOL_RULES: tuple[str, ...] = ()
    GAME = "back_to_the_realm"  # the game it plays (kaiwu.json's project_code)
    #: the realm.map_source.MapSource fields it reads beside map_seed
    MAP_SOURCE = ("map_file", "positions_file")

    @classmethod
    def from_source(cls, source, *, seed: int | None = None, **rules) -> "RealmEnv":
        """realm.make_env's constructor: the env on the map of `source` (realm.map_source.realm_map)."""
        return cls(realm_map(source), seed=seed, **rules)

    def __init__(self, game_map: Map, *, flash_blocked: str = DEFAULT_FLASH_BLOCKED, step_jitter: bool = False, seed: int | None = None):
        if flash_blocked not in FLASH_BLOCKED_RULES:
            raise ValueError(f"flash_blocked = {flash_blocked!r} is invalid: allowed {' | '.join(FLASH_BLOCKED_RULES)}")
        if not isinstance(step_jitter, bool):
            raise ValueError(f"step_jitter = {step_jitter!r} is invalid: allowed True | False")
        self.map = game_map
        self.flash_blocked = flash_blocked
        self.step_jitter = step_jitter
        self._lookups = lookups_for(game_map)
        self._relative = self._lookups.relative
        self._reachable = self._lookups.reachable
        self._passable = self._lookups.passable_flat
        self._positions = self._lookups.positions
        self._buff_position = _world_position(*self._positions[BUFF_ID])
        self._rng = np.random.default_rng(seed)
        self.episode: EpisodeConfig | None = None
        self._started = False
        self._done = True
        self._env_info: EnvInfo | None = None

    # ---- protocol -------------------------------------------------------------------------

    def reset(self, usr_conf: dict | None = None, seed: int | None = None) -> Observation:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        episode = parse_usr_conf(usr_conf, self._rng)
        self.episode = episode
        self._x, self._z = self._positions[episode.start]
        self._xc, self._zc = self._lookups.position_cells[episode.start]
        self._steps = 0
        self._frame_no = 1
        self._flash_cd = self._buff_remain = self._buff_cd = 0
        self._chests = self._buff_count = self._talent_count = 0
        self._total_score = 0.0
        kind = [_NOTHING] * len(self._positions)
        kind[BUFF_ID] = _BUFF
        kind[episode.end] = _END
        for i in episode.treasure_id:
            kind[i] = _CHEST
        self._kind = kind

        self._memory = np.zeros((PADDED_SIZE, PADDED_SIZE), dtype=np.float32)
        self._treasure_source = self._lookups.marked_grid(episode.treasure_id)
        self._end_source = self._lookups.end_window_source(episode.end)
        self._live_chests = {i: self._relative[i] for i in episode.treasure_id}

        self._organs = [Organ(ORGAN_CHEST, i, 1, _world_position(*self._positions[i]), 0) for i in episode.treasure_id]
        self._buff_organ = Organ(ORGAN_BUFF, BUFF_ID, 1, self._buff_position, 0)
        self._organs.append(self._buff_organ)
        self._jitter = []
        self._jitter_next = 0

        self._started = True
        self._done = False
        obs = self._observe(end_of_step=False)
        self._env_info = self._build_env_info()
        return obs

    def step(self, act):
        """Play one step: returns (frame_no, obs, score, terminated, truncated, env_info)."""
        if type(act) is not int or not 0 <= act < NUM_ACTIONS:  # the common case, a plain int in range, as it is
            act = checked_action(act, NUM_ACTIONS, ACTION_HELP)
        if self._done:
            raise EpisodeOverError(
                "the episode has ended; call reset() to start a new one" if self._started else "call reset() before step()"
            )
        steps = self._steps + 1
        self._steps = steps
        cooling = self._flash_cd > 0
        fast = self._buff_remain > 0
        respawning = self._buff_cd > 0

        if act >= 8 and not cooling:
            reached_end = self._flash(act - 8)
        else:
            reached_end = self._walk(act & 7, self._step_length(fast))

        if cooling:
            self._flash_cd -= 1
        if fast:
            self._buff_remain -= 1
        if respawning:
            self._buff_cd -= 1
            self._organs[-1] = Organ(ORGAN_BUFF, BUFF_ID, 0, self._buff_position, self._buff_cd * MS_PER_STEP)
            if self._buff_cd == 0:
                self._kind[BUFF_ID] = _BUFF
                self._organs[-1] = self._buff_organ

        terminated = truncated = False
        episode = self.episode
        if reached_end:
            terminated = True
            self._total_score = round(final_score(episode.max_step, steps, self._chests), 6)
        elif steps >= episode.max_step:
            truncated = True
            self._total_score = 0.0
        else:
            self._total_score = float(self._chests * CHEST_SCORE)
        self._done = terminated or truncated
        self._frame_no += FRAMES_PER_STEP

        obs = self._observe()
        env_info = self._build_env_info()
        self._env_info = env_info
        score = ScoreInfo(float(self._chests * CHEST_SCORE), self._total_score, self._chests, self._buff_count, self._talent_count)
        return self._frame_no, obs, score, terminated, truncated, env_info

    env_info = latest_info("_env_info", "The latest EnvInfo (after reset or the last step).")

    @property
    def hero_position(self) -> tuple[float, float]:
        """The hero's exact world (x, z); the protocol reports it rounded to int32 units."""
        return self._x, self._z

    @property
    def frame_no(self) -> int:
        return self._frame_no

    # ---- movement ---------------------------------------------------------------------------

    def _step_length(self, fast: bool) -> float:
        if not self.step_jitter:
            return BUFF_STEP_LENGTH if fast else STEP_LENGTH
        if self._jitter_next >= len(self._jitter):
            self._jitter = self._rng.random(_JITTER_BLOCK).tolist()
            self._jitter_next = 0
        u = self._jitter[self._jitter_next]
        self._jitter_next += 1
        lo, hi = BUFF_STEP_JITTER_RANGE if fast else STEP_JITTER_RANGE
        return lo + u * (hi - lo)

    def _walk(self, direction: int, length: float) -> bool:
        """Move in SUB_STEPS parts (see `walk_substeps`), picking up after each; True at the end."""
        reachable = self._reachable
        reached_end = False
        x, z, xc, zc = self._x, self._z, self._xc, self._zc
        for x, z, xc, zc in walk_substeps(self._passable, x, z, xc, zc, direction, length):
            nearby = reachable[zc * GRID_SIZE + xc]
            if nearby and self._pick_up(nearby, x, z):
                reached_end = True
                break
        self._x, self._z, self._xc, self._zc = x, z, xc, zc
        return reached_end

    def _flash(self, direction: int) -> bool:
        """Jump FLASH_DISTANCE over anything; a blocked or off-map target follows `flash_blocked`."""
        ux, uz = UNIT_VECTORS[direction]
        tx = self._x + ux * FLASH_DISTANCE
        tz = self._z + uz * FLASH_DISTANCE
        txc = int((tx - ORIGIN_X) // CELL_WIDTH)
        tzc = int((tz - ORIGIN_Z) // CELL_WIDTH)
        if 0 <= txc < GRID_SIZE and 0 <= tzc < GRID_SIZE and self._passable[tzc * GRID_SIZE + txc]:
            self._x, self._z, self._xc, self._zc = tx, tz, txc, tzc
        elif self.flash_blocked == "nearest":
            self._x, self._z, self._xc, self._zc = self._lookups.nearest_passable(tx, tz)
        self._flash_cd = FLASH_COOLDOWN_STEPS
        self._talent_count += 1
        nearby = self._reachable[self._zc * GRID_SIZE + self._xc]
        return bool(nearby) and self._pick_up(nearby, self._x, self._z)

    def _pick_up(self, nearby: tuple[int, ...], x: float, z: float) -> bool:
        """Take every live object within reach of (x, z); True when the end is within reach."""
        reached_end = False
        kind = self._kind
        for pid in nearby:
            what = kind[pid]
            if what == _NOTHING:
                continue
            px, pz = self._positions[pid]
            gap = (px - x) ** 2 + (pz - z) ** 2
            if what == _END:
                reached_end = reached_end or gap <= _END_SQ
            elif gap <= _PICKUP_SQ:
                if what == _CHEST:
                    self._take_chest(pid)
                else:
                    self._take_buff()
        return reached_end

    def _take_chest(self, pid: int) -> None:
        self._kind[pid] = _NOTHING
        self._chests += 1
        del self._live_chests[pid]
        slot = self.episode.treasure_id.index(pid)  # organs list chests in treasure_id order
        self._organs[slot] = Organ(ORGAN_CHEST, pid, 0, self._organs[slot].pos, 0)
        # A new grid, not an edit in place: earlier observations keep their windows.
        self._treasure_source = self._lookups.marked_grid(self._live_chests)

    def _take_buff(self) -> None:
        self._kind[BUFF_ID] = _NOTHING
        self._buff_count += 1
        self._buff_remain = BUFF_DURATION_STEPS
        self._buff_cd = BUFF_RESPAWN_STEPS
        self._organs[-1] = Organ(ORGAN_BUFF, BUFF_ID, 0, self._buff_position, BUFF_RESPAWN_STEPS * MS_PER_STEP)

    # ---- observation ------------------------------------------------------------------------

    def _observe(self, end_of_step: bool = True) -> Observation:
        """The observation of the hero's current state; a step's end also marks the memory map
        (after the window is read), a reset does not (▶ it is not a step)."""
        xc, zc = self._xc, self._zc
        cell = zc * GRID_SIZE + xc
        relative = self._relative
        treasure_pos = [NULL_RELATIVE_POSITION] * NUM_TREASURE_SLOTS
        for pid, table in self._live_chests.items():
            treasure_pos[pid - 1] = table[cell]
        memory = self._memory
        memory_window = memory[zc : zc + VIEW_SIZE, xc : xc + VIEW_SIZE].copy()
        if end_of_step:
            centre = (zc + VIEW_SIZE // 2, xc + VIEW_SIZE // 2)
            visits = float(memory[centre]) + MEMORY_INCREMENT
            memory[centre] = visits if visits < 1.0 else 1.0
        episode = self.episode
        feature = RealmFeature(
            Position(self._x / WORLD_SIZE, self._z / WORLD_SIZE),
            Position(zc, xc),
            relative[episode.start][cell],
            relative[episode.end][cell],
            relative[BUFF_ID][cell] if self._kind[BUFF_ID] == _BUFF else NULL_RELATIVE_POSITION,
            treasure_pos,
            RepeatedScalar(self.map.padded_obstacle[zc : zc + VIEW_SIZE, xc : xc + VIEW_SIZE]),
            RepeatedScalar(memory_window),
            RepeatedScalar(self._treasure_source[zc : zc + VIEW_SIZE, xc : xc + VIEW_SIZE]),
            RepeatedScalar(self._end_source[zc : zc + VIEW_SIZE, xc : xc + VIEW_SIZE]),
        )
        return Observation([1, 0 if self._flash_cd else 1], feature)

    def _build_env_info(self) -> EnvInfo:
        cooldown = self._flash_cd
        remain = self._buff_remain
        pos = _world_position(self._x, self._z)
        hero = HeroState(
            HERO_ID,
            pos,
            1 if remain else 0,
            Talent(TALENT_TYPE_SUPER_FLASH, 0 if cooldown else 1, cooldown * MS_PER_STEP),
        )
        chest_score = float(self._chests * CHEST_SCORE)
        game_info = GameInfo(
            chest_score,
            self._total_score,
            self._steps,
            pos,
            self._chests,
            chest_score,
            self._buff_count,
            self._talent_count,
            remain * MS_PER_STEP,
            BUFF_DURATION_MS,
        )
        return EnvInfo(FrameState(self._frame_no, [hero], list(self._organs)), game_info)

    # ---- helpers ----------------------------------------------------------------------------


    def _place_hero(self, x: float, z: float) -> None:
        """Test hook: put the hero at world (x, z) between steps, without pick-ups or memory."""
        xc = int((x - ORIGIN_X) // CELL_WIDTH)
        zc = int((z - ORIGIN_Z) // CELL_WIDTH)
        if not self.map.is_passable_cell(xc, zc):
            raise ValueError(f"cannot place the hero at ({x}, {z}): cell ({xc}, {zc}) is not passable")
        self._x, self._z, self._xc, self._zc = float(x), float(z), xc, zc
