"""RealmEnvV2: the rules of `back_to_the_realm_v2` (docs/games/back_to_the_realm_v2.md) behind its wire protocol.

    env = realm.make_env(protocol="v2", map_seed=0, seed=0)  # or RealmEnvV2(game_map, seed=0)
    obs, extra_info = env.reset(usr_conf)                    # usr_conf: train_env_conf.toml as parsed
    step_no, obs, terminated, truncated, extra_info = env.step(act)   # act 0..15

Where the rules agree with the 2024 game they are the 2024 engine's: the eight directions, the
scoring (`realm.back_to_the_realm.env.final_score`), the timers (set by the step of their event, counting down at
the end of every later step, so a cooldown of N blocks exactly the N following steps), pick-ups
along the walked path, a flash's pick-up at its landing only, relative positions from the hero's
cell (an object on the hero's own cell reads East). The rest is v2's: integer cells, the talent's
16-cell ray, the view (11×11 by default, `view_size`), the end's discovery, the obstacles.

A step does lookups and slices only: the map's cells with this episode's obstacles, organs and
view values are laid out in `reset`.
"""
from __future__ import annotations

from numbers import Integral
from pathlib import Path

import numpy as np

from realm.back_to_the_realm.env import final_score
from realm.episode import EpisodeOverError, EpisodeProgress, checked_action, latest_info
from realm.back_to_the_realm_v2.constants import (
    BUFF_CONFIG_ID,
    CELL_BUFF,
    CELL_CHEST,
    CELL_END,
    CELL_PASSABLE,
    CELL_START,
    CHEST_SCORE,
    DIRECTIONS,
    DISTANCE_BANDS,
    END_CONFIG_ID,
    FIRST_CHEST_CONFIG_ID,
    FLASH_CELLS,
    GRID_SIZE,
    HIDDEN_POS,
    MAX_STEP_RANGE,
    NUM_ACTIONS,
    ORGAN_BUFF,
    ORGAN_CHEST,
    ORGAN_END,
    ORGAN_START,
    START_CONFIG_ID,
    STATUS_COLLECTABLE,
    STATUS_NOT_COLLECTABLE,
    STATUS_OUT_OF_VIEW,
    TALENT_TYPE_SUPER_FLASH,
    VIEW_SIZE,
    VIEW_SIZES,
)
from realm.back_to_the_realm_v2.map_choice import V2MapChoice, warn_stand_in
from realm.back_to_the_realm_v2.maps import V2Map
from realm.back_to_the_realm_v2.protocol import position, relative_pos
from realm.back_to_the_realm_v2.usr_conf import Episode, default_usr_conf, resolve_episode, validate_usr_conf

HERO_ID = 1
ACTION_HELP = f"an int in 0..{NUM_ACTIONS - 1} (0..7 move in direction d × 45° from East, 8..15 talent in direction act − 8)"

#: Env options: rules the public sources leave open that change what a package learns.
#: name -> (default, allowed values, help).
OPTIONS = {
    "step_length": (1, (1, 2), "cells per plain step"),
    "buff_step_length": (2, (1, 2, 3, 4), "cells per step while the buff is active (>= step_length)"),
    "buff_duration": (50, range(1, MAX_STEP_RANGE[1] + 1), "steps the buff lasts, an int in 1..2000"),
    "distance_bands": ("uniform20", tuple(DISTANCE_BANDS), "relative_pos.l2_distance thresholds in cells: "
                       "'uniform20' = 20, 40, 60, 80; 'v1' = the 2024 bands 5, 15, 30, 60"),
    "reveal_end_pos": ("always", ("always", "found", "at_end"), "when extra_info['game_info']['end_pos'] holds the end: "
                       "'always'; 'found' = once the end has been in view, and at the episode's end; 'at_end' = only in "
                       "the last extra_info; otherwise {'x': -1, 'z': -1}"),
    "talent_when_cooling": ("move", ("move", "stay"), "a talent action while cooling down: 'move' = the move in the "
                            "same direction; 'stay' = the hero stays"),
    "taken_chest_status": ("stays_0", ("stays_0", "taken_frame"), "a taken chest's organ: 'stays_0' = status 0 with its "
                           "pos for the rest of the episode; 'taken_frame' = status 0 on the frame it was taken only, "
                           "then read as out of view (status -1, pos hidden)"),
    "treasure_count_reads": ("chests", ("chests", "chests_plus_2"), "what game_info.treasure_count counts: 'chests' = "
                             "the episode's chests; 'chests_plus_2' = the chests, the start and the end"),
    "view_size": (VIEW_SIZE, VIEW_SIZES, "map_info's rows and values, centred on the hero (organs in it are in "
                  "view): an odd int in 11..51 (11 the HoK track's, 51 the 28.1.1 preprocessor's default)"),
}

#: The readings the sources leave open for each rule, drawn per episode with `randomize_rules`
#: (reveal_end_pos stays: it is the host's evaluation question, not the game's rule; view_size stays:
#: it is the track's, and the project's packages read it from map_info).
CANDIDATES = {
    "step_length": (1, 2),
    "buff_step_length": (2, 3),  # the 2024 game's +40 % and SZ's ×1.5 on a 1-cell step; at least step_length
    "buff_duration": (50, 510),  # the 2024 duration and SZ's
    "distance_bands": tuple(DISTANCE_BANDS),
    "talent_when_cooling": ("move", "stay"),
    "taken_chest_status": ("stays_0", "taken_frame"),
    "treasure_count_reads": ("chests", "chests_plus_2"),
}

# What lies on a cell for pick-ups (kind, index)
_CHEST, _BUFF, _END = 1, 2, 3


def check_option(name: str, value):
    default, allowed, help_ = OPTIONS[name]
    ok = value in allowed if isinstance(default, str) else (isinstance(value, Integral) and not isinstance(value, bool)
                                                            and value in allowed)
    if not ok:
        shown = (" | ".join(repr(v) for v in allowed) if not isinstance(allowed, range)
                 else f"{allowed.start}..{allowed[-1]}" if allowed.step == 1
                 else f"{allowed.start}, {allowed[1]}, ..., {allowed[-1]}")
        raise ValueError(f"{name} = {value!r} is invalid: allowed {shown} ({help_})")
    return value if isinstance(default, str) else int(value)


def walk(free, x: int, z: int, direction: int, cells: int):
    """The cells (x, z) a move of up to `cells` single-cell steps passes, in order, until a step
    is blocked: its cell is off the map or not free, or it is diagonal and an orthogonal
    neighbour is not free (no corner cutting). `free[z * 128 + x]`. The env and the planner
    share this rule."""
    dx, dz = DIRECTIONS[direction]
    path = []
    for _ in range(cells):
        nx, nz = x + dx, z + dz
        if not (0 <= nx < GRID_SIZE and 0 <= nz < GRID_SIZE and free[nz * GRID_SIZE + nx]):
            break
        if dx and dz and not (free[z * GRID_SIZE + nx] and free[nz * GRID_SIZE + x]):
            break
        x, z = nx, nz
        path.append((x, z))
    return path


def flash_landing(free, x: int, z: int, direction: int) -> tuple[int, int]:
    """Where the talent lands: the farthest free cell within FLASH_CELLS along the ray (a diagonal
    goes (16, 16)), passing over anything; (x, z) itself when none is free."""
    dx, dz = DIRECTIONS[direction]
    for k in range(FLASH_CELLS, 0, -1):
        nx, nz = x + dx * k, z + dz * k
        if 0 <= nx < GRID_SIZE and 0 <= nz < GRID_SIZE and free[nz * GRID_SIZE + nx]:
            return nx, nz
    return x, z


class RealmEnvV2(EpisodeProgress):
    """One hero on one v2 map. Options: see `OPTIONS` (constructor keywords); `seed` seeds the
    episode RNG (random points and the random obstacle); a `seed` given to `reset` restarts it,
    so the same seed and usr_conf replay the same episode."""

    #: the Kaiwu protocol it speaks (realm.make_env's `protocol`), and the rules only it takes
    PROTOCOL = "v2"
    PROTOCOL_RULES = ("map_name", "randomize_rules", *OPTIONS)
    GAME = "back_to_the_realm_v2"  # the game it plays (kaiwu.json's project_code)
    #: the realm.map_source.MapSource fields it reads beside map_seed
    MAP_SOURCE = ("map_file", "obstacles_file", "maps_folder")
    MAP_HINT = "a v2 map_file's companion is its obstacles_file"
    #: the 2024 env's rules, as this game has them: a talent onto a blocked cell lands on the
    #: nearest free cell back along its ray (flash_landing), and positions are whole cells
    FLASH_BLOCKED = "nearest"

    @classmethod
    def from_source(cls, source, *, seed: int | None = None, map_name: str | None = None,
                    flash_blocked: str = FLASH_BLOCKED, step_jitter: bool = False, **options) -> "RealmEnvV2":
        """realm.make_env's constructor: `source.map_file` (map_data/<name>.json) with its
        `obstacles_file`, else the generated map of `map_seed` through `map_name`'s points (default
        map_cherry); an episode whose usr_conf names another map_name plays that map:
        `<maps_folder>/<map_name>.json` when there, else the stand-in (realm.back_to_the_realm_v2.map_choice).
        `flash_blocked` and `step_jitter` are accepted as this game has them ("nearest", False);
        `options`: `randomize_rules` (each reset draws the open rules, CANDIDATES) and OPTIONS."""
        if flash_blocked != cls.FLASH_BLOCKED:
            raise ValueError(f"flash_blocked = {flash_blocked!r} is invalid for back_to_the_realm_v2: allowed "
                             f"{cls.FLASH_BLOCKED!r} (a talent lands on the farthest free cell of its ray)")
        if step_jitter is not False:
            raise ValueError(f"step_jitter = {step_jitter!r} is invalid for back_to_the_realm_v2: allowed False "
                             "(positions are whole cells)")
        if source.map_file is None and source.obstacles_file is not None:
            raise ValueError("obstacles_file is only used with map_file; a generated map has its own obstacles")
        folder = source.maps_folder
        if folder is not None and not Path(folder).is_dir():
            raise ValueError(f"maps_folder {folder}: not a folder (of official <map_name>.json files)")
        choice = V2MapChoice(None if folder is None else str(folder),
                             None if source.map_file is None else str(source.map_file),
                             None if source.obstacles_file is None else str(source.obstacles_file),
                             source.map_seed, map_name=map_name)
        return cls(choice.first_map(), maps=choice, seed=seed, **options)

    def __init__(self, game_map: V2Map, *, seed: int | None = None, step_length: int = 1, buff_step_length: int = 2,
                 buff_duration: int = 50, distance_bands: str = "uniform20", reveal_end_pos: str = "always",
                 talent_when_cooling: str = "move", taken_chest_status: str = "stays_0",
                 treasure_count_reads: str = "chests", view_size: int = VIEW_SIZE, maps=None,
                 randomize_rules: bool = False):
        if not isinstance(game_map, V2Map):
            raise TypeError(f"game_map must be a realm.back_to_the_realm_v2.maps.V2Map, got {type(game_map).__name__}")
        self.map = game_map
        self.step_length = check_option("step_length", step_length)
        self.buff_step_length = check_option("buff_step_length", buff_step_length)
        if self.buff_step_length < self.step_length:
            raise ValueError(f"buff_step_length = {buff_step_length!r} is invalid: allowed an int in "
                             f"{self.step_length}..4 (at least step_length = {self.step_length})")
        self.buff_duration = check_option("buff_duration", buff_duration)
        self.distance_bands = check_option("distance_bands", distance_bands)
        self.reveal_end_pos = check_option("reveal_end_pos", reveal_end_pos)
        self.talent_when_cooling = check_option("talent_when_cooling", talent_when_cooling)
        self.taken_chest_status = check_option("taken_chest_status", taken_chest_status)
        self.treasure_count_reads = check_option("treasure_count_reads", treasure_count_reads)
        self.view_size = check_option("view_size", view_size)
        self._radius = self.view_size // 2  # the view's, set again at each reset
        self._rng = np.random.default_rng(seed)
        self.randomize_rules = bool(randomize_rules)  # each reset draws every CANDIDATES rule from the episode RNG
        self.maps = maps  # a realm.back_to_the_realm_v2.map_choice.V2MapChoice: an episode's map_name picks its map; None: game_map only
        self.map_notes: list[str] = []  # the stand-ins played so far, said once each (on stderr: warn_stand_in)
        self._names_chosen: set[str] = set()  # the map_names a reset has looked up
        self.episode: Episode | None = None
        self.usr_conf: dict | None = None
        self._started = False
        self._done = True
        self._extra_info = None

    @property
    def options(self) -> dict:
        """The env's options as constructor keywords."""
        return {name: getattr(self, name) for name in OPTIONS}

    # ---- protocol ------------------------------------------------------------------------------

    def reset(self, usr_conf: dict | None = None, seed: int | None = None):
        """Start an episode: returns (obs, extra_info). No usr_conf plays the official package's
        train_env_conf.toml of the map's `map_name` (realm.back_to_the_realm_v2.usr_conf.default_usr_conf)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if self.randomize_rules:
            self._draw_rules()
        if usr_conf is None:
            usr_conf = default_usr_conf(self.map.map_name)
        if self.maps is not None:
            self._choose_map(usr_conf)
        episode = resolve_episode(usr_conf, self.map, self._rng)
        self.episode = episode
        self.usr_conf = usr_conf
        conf = episode.conf
        self._talent_cooldown = conf.talent_cooldown
        self._buff_cooldown = conf.buff_cooldown
        grid = self.map.grid_with(episode.obstacle_ids)
        self.grid = grid
        self._free = grid.reshape(-1).tolist()

        # View values, indexed [x + r, z + r] (r = view_size // 2) so that a slice's rows are x offsets
        # (map_info[i] = x - r + i).
        radius = self._radius = check_option("view_size", self.view_size) // 2
        values = np.zeros((GRID_SIZE + 2 * radius, GRID_SIZE + 2 * radius), dtype=np.int8)
        inner = values[radius:-radius, radius:-radius]
        inner[grid.T] = CELL_PASSABLE
        self._values = values
        self._set_value(episode.start, CELL_START)
        self._set_value(episode.end, CELL_END)
        self._set_value(episode.buff, CELL_BUFF)
        for p in episode.treasures:
            self._set_value(p, CELL_CHEST)

        self._on_cell = {}  # z * 128 + x -> (kind, index)
        for i, (x, z) in enumerate(episode.treasures):
            self._on_cell[z * GRID_SIZE + x] = (_CHEST, i)
        self._on_cell[episode.buff[1] * GRID_SIZE + episode.buff[0]] = (_BUFF, 0)
        self._on_cell[episode.end[1] * GRID_SIZE + episode.end[0]] = (_END, 0)

        self._x, self._z = episode.start
        self._steps = 0
        self._talent_cd = self._buff_remain = self._buff_cd = 0
        self._taken = [False] * len(episode.treasures)
        self._taken_at = [0] * len(episode.treasures)  # the step each chest was taken on
        self._chests = self._buff_count = self._talent_count = 0
        self._total_score = 0.0
        self._end_found = False
        self._start_pos = position(*episode.start)
        self._end_pos = position(*episode.end)
        self._treasure_pos = [position(x, z) for x, z in episode.treasures]
        self._buff_pos = position(*episode.buff)
        self._last_jump = None
        self._started = True
        self._done = False
        obs, extra_info = self._observe()
        self._extra_info = extra_info
        return obs, extra_info

    def step(self, act):
        """Play one action: returns (step_no, obs, terminated, truncated, extra_info), step_no =
        actions played − 1 as the server logs it (truncated at step_no max_step − 1)."""
        if type(act) is not int or not 0 <= act < NUM_ACTIONS:  # the common case, a plain int in range, as it is
            act = checked_action(act, NUM_ACTIONS, ACTION_HELP)
        if self._done:
            raise EpisodeOverError("the episode has ended; call reset() to start a new one" if self._started
                                   else "call reset() before step()")
        steps = self._steps + 1
        self._steps = steps
        cooling = self._talent_cd > 0
        fast = self._buff_remain > 0
        respawning = self._buff_cd > 0
        self._last_jump = None

        direction = act & 7
        if act >= 8 and not cooling:
            reached_end = self._flash(direction)
        elif act >= 8 and self.talent_when_cooling == "stay":
            reached_end = False
        else:
            reached_end = self._walk(direction, self.buff_step_length if fast else self.step_length)

        if cooling:
            self._talent_cd -= 1
        if fast:
            self._buff_remain -= 1
        if respawning:
            self._buff_cd -= 1
            if self._buff_cd == 0:
                self._on_cell[self.episode.buff[1] * GRID_SIZE + self.episode.buff[0]] = (_BUFF, 0)
                self._set_value(self.episode.buff, CELL_BUFF)

        terminated = truncated = False
        max_step = self.episode.max_step
        if reached_end:
            terminated = True
            self._total_score = round(float(final_score(max_step, steps, self._chests)), 6)
        elif steps >= max_step:
            truncated = True
            self._total_score = 0.0
        else:
            self._total_score = float(self._chests * CHEST_SCORE)
        self._done = terminated or truncated
        obs, extra_info = self._observe()
        self._extra_info = extra_info
        return steps - 1, obs, terminated, truncated, extra_info

    # ---- state for tests, the planner and pictures ------------------------------------------------

    extra_info = latest_info("_extra_info", "The latest extra_info (after reset or the last step).")

    @property
    def hero(self) -> tuple[int, int]:
        return self._x, self._z

    @property
    def end_found(self) -> bool:
        """Whether the end has been in the view during this episode."""
        return self._end_found

    @property
    def talent_ready(self) -> bool:
        return self._talent_cd == 0

    @property
    def buff_steps_left(self) -> int:
        return self._buff_remain

    @property
    def buff_available(self) -> bool:
        return self._buff_cd == 0

    @property
    def chests_taken(self) -> list[bool]:
        return list(self._taken)

    @property
    def last_jump(self) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """(from, to) cells of the talent cast in the last step, else None."""
        return self._last_jump

    @property
    def free(self) -> list:
        """This episode's passable cells with its obstacles, flat [z * 128 + x]."""
        return self._free

    def training_metrics(self) -> dict:
        """The platform's 'env' metrics of the episode so far (names as get_training_metrics logs them)."""
        e = self.episode
        return {"total_score": self._total_score, "treasure_score": float(self._chests * CHEST_SCORE),
                "max_steps": e.max_step, "finished_steps": self._steps, "treasure_random": int(e.conf.treasure_random),
                "total_treasures": len(e.treasures), "collected_treasures": self._chests, "buff_cnt": self._buff_count,
                "buff_cooldown": e.conf.buff_cooldown, "talent_cooldown": e.conf.talent_cooldown,
                "talent_cnt": self._talent_count, "buff_random": int(e.conf.buff_random),
                "obstacle_count": len(e.obstacle_ids), "obstacle_random": int(e.conf.obstacle_random)}

    def _place_hero(self, x: int, z: int) -> None:
        """Test hook: put the hero on cell (x, z) between steps, without pick-ups."""
        if not (0 <= x < GRID_SIZE and 0 <= z < GRID_SIZE and self._free[z * GRID_SIZE + x]):
            raise ValueError(f"cannot place the hero on cell ({x}, {z}): not passable")
        self._x, self._z = int(x), int(z)

    # ---- rules -----------------------------------------------------------------------------------

    def _draw_rules(self) -> None:
        """One reading of every open rule for this episode, so a policy learns what holds under all."""
        for name, readings in CANDIDATES.items():
            setattr(self, name, readings[int(self._rng.integers(len(readings)))])
        self.buff_step_length = max(self.buff_step_length, self.step_length)

    def _choose_map(self, usr_conf) -> None:
        """The map of the usr_conf's map_name (none named: the map stays), noting a stand-in once
        (map_notes) and saying so on stderr (once per process). A name is looked up on its first
        reset even when the env already stands on a map of that name (its first map may be the stand-in)."""
        name = validate_usr_conf(usr_conf).map_name
        if name is None or (name == self.map.map_name and name in self._names_chosen):
            return
        self._names_chosen.add(name)
        self.map, note = self.maps.map_for(name)
        if note is not None and note not in self.map_notes:
            self.map_notes.append(note)
            warn_stand_in(note)

    def _set_value(self, point, value: int) -> None:
        self._values[point[0] + self._radius, point[1] + self._radius] = value

    def _walk(self, direction: int, cells: int) -> bool:
        """Move cell by cell, picking up on every cell entered; True when the end is reached (the
        hero stops there)."""
        on_cell = self._on_cell
        for x, z in walk(self._free, self._x, self._z, direction, cells):
            self._x, self._z = x, z
            found = on_cell.get(z * GRID_SIZE + x)
            if found is not None and self._pick_up(found):
                return True
        return False

    def _flash(self, direction: int) -> bool:
        start = (self._x, self._z)
        self._x, self._z = flash_landing(self._free, self._x, self._z, direction)
        self._last_jump = (start, (self._x, self._z))
        self._talent_cd = self._talent_cooldown
        self._talent_count += 1
        found = self._on_cell.get(self._z * GRID_SIZE + self._x)
        return found is not None and self._pick_up(found)

    def _pick_up(self, found) -> bool:
        kind, index = found
        if kind == _END:
            return True
        episode = self.episode
        if kind == _CHEST:
            self._taken[index] = True
            self._taken_at[index] = self._steps
            self._chests += 1
            point = episode.treasures[index]
            self._set_value(point, CELL_PASSABLE)
        else:
            point = episode.buff
            self._buff_count += 1
            self._buff_remain = self.buff_duration
            self._buff_cd = self._buff_cooldown
            self._set_value(point, CELL_PASSABLE)
        del self._on_cell[point[1] * GRID_SIZE + point[0]]
        return False

    # ---- observation -----------------------------------------------------------------------------

    def _organ(self, sub_type, config_id, point, pos, visible_status, cooldown=0, status_if_known=None) -> dict:
        hx, hz = self._x, self._z
        dx, dz = point[0] - hx, point[1] - hz
        rel = relative_pos(dx, dz, self.distance_bands)
        if status_if_known is not None:  # a chest already taken: known, not collectable
            return {"sub_type": sub_type, "config_id": config_id, "status": status_if_known, "pos": pos,
                    "cooldown": 0, "relative_pos": rel}
        radius = self._radius
        if -radius <= dx <= radius and -radius <= dz <= radius:
            return {"sub_type": sub_type, "config_id": config_id, "status": visible_status, "pos": pos,
                    "cooldown": cooldown, "relative_pos": rel}
        return {"sub_type": sub_type, "config_id": config_id, "status": STATUS_OUT_OF_VIEW, "pos": HIDDEN_POS,
                "cooldown": 0, "relative_pos": rel}

    def _observe(self):
        episode = self.episode
        x, z = self._x, self._z
        steps = self._steps
        organs = []
        for i, point in enumerate(episode.treasures):
            organs.append(self._chest_organ(i, point))
        buff_ready = self._buff_cd == 0
        organs.append(self._organ(ORGAN_BUFF, BUFF_CONFIG_ID, episode.buff, self._buff_pos,
                                  STATUS_COLLECTABLE if buff_ready else STATUS_NOT_COLLECTABLE, self._buff_cd))
        organs.append(self._organ(ORGAN_START, START_CONFIG_ID, episode.start, self._start_pos, STATUS_COLLECTABLE))
        end_organ = self._organ(ORGAN_END, END_CONFIG_ID, episode.end, self._end_pos, STATUS_COLLECTABLE)
        organs.append(end_organ)
        if end_organ["status"] != STATUS_OUT_OF_VIEW:
            self._end_found = True

        remain = self._buff_remain
        cooldown = self._talent_cd
        pos = position(x, z)
        hero = {"hero_id": HERO_ID, "pos": pos, "speed_up": 1 if remain else 0,
                "talent": {"talent_type": TALENT_TYPE_SUPER_FLASH, "status": 0 if cooldown else 1, "cooldown": cooldown},
                "buff_remain_time": remain}
        frame_state = {"step_no": steps, "heroes": [hero], "organs": organs}
        chest_score = float(self._chests * CHEST_SCORE)
        score_info = {"score": chest_score, "total_score": self._total_score, "step_no": steps,
                      "treasure_collected_count": self._chests, "treasure_score": chest_score,
                      "buff_count": self._buff_count, "talent_count": self._talent_count}
        size = 2 * self._radius + 1
        rows = self._values[x: x + size, z: z + size].tolist()
        map_info = [{"values": row} for row in rows]
        obs = {"frame_state": frame_state, "score_info": score_info, "map_info": map_info,
               "legal_act": [1, 0 if cooldown else 1]}

        reveal = self.reveal_end_pos
        shown = (reveal == "always" or self._done or (reveal == "found" and self._end_found))
        game_info = {"score": chest_score, "total_score": self._total_score, "step_no": steps, "pos": pos,
                     "start_pos": self._start_pos, "end_pos": self._end_pos if shown else HIDDEN_POS,
                     "treasure_collected_count": self._chests, "treasure_score": chest_score,
                     "treasure_count": self._treasure_count(), "buff_count": self._buff_count,
                     "talent_count": self._talent_count, "buff_remain_time": remain, "buff_duration": self.buff_duration,
                     "map_info": map_info, "obstacle_id": list(episode.obstacle_ids)}
        extra_info = {"result_code": 0, "result_message": "", "frame_state": frame_state, "game_info": game_info}
        return obs, extra_info

    def _chest_organ(self, i: int, point) -> dict:
        """Chest i: collectable in view, -1 out of view; once taken status 0, for the rest of the
        episode or, with taken_chest_status 'taken_frame', on the frame it was taken only."""
        organ = self._organ(ORGAN_CHEST, FIRST_CHEST_CONFIG_ID + i, point, self._treasure_pos[i], STATUS_COLLECTABLE,
                            status_if_known=STATUS_NOT_COLLECTABLE if self._taken[i] else None)
        if self._taken[i] and self.taken_chest_status == "taken_frame" and self._taken_at[i] != self._steps:
            organ.update(status=STATUS_OUT_OF_VIEW, pos=HIDDEN_POS)
        return organ

    def _treasure_count(self) -> int:
        """game_info.treasure_count: the chests, or with treasure_count_reads 'chests_plus_2' the
        chests and the start and the end (the other organs a map_info shows as points)."""
        return len(self.episode.treasures) + (2 if self.treasure_count_reads == "chests_plus_2" else 0)

