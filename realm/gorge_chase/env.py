"""GorgeChaseEnv: the rules of gorge_chase 15.0.1 (docs/games/gorge_chase.md) behind the framework API
a code package calls:

    env_obs = env.reset(usr_conf)            # usr_conf = {"env_conf": {...}} or None
    env_reward, env_obs = env.step(act)      # act: int 0..15

env_obs = {"env_id", "frame_no", "observation", "extra_info", "terminated", "truncated"} with the
keys, nesting and value types of the real env_obs dumps; env_reward = {"env_id", "frame_no",
"reward"} with reward = the step's change of total_score. With the option gorge_extra_info =
"withheld", extra_info holds result_code and result_message only (no frame_state, no map_id).

A step follows the game script's order (SPEC §6): the hero's action, step + 1, chests on the
path, the first buff on the path, the monsters' moves, monster 2's spawn, the speed-up, the
timers, the capture check, the step limit, the score.

Speed matters (training runs millions of steps): the monsters read shortest-path distances from
rows cached per hero cell (`GorgeMap.distance_row`, shared by every env of the process on that
map, in a cache of bounded size), the view window is one slice's `tolist`, and the derived fields
are table lookups. Every env_obs is built fresh, its dicts its own (`observation`'s and
`extra_info`'s apart too): a package may edit what it is given without changing later frames.
"""
from __future__ import annotations

import random
from collections import deque
from numbers import Integral

from realm.episode import EpisodeOverError, checked_action
from realm.gorge_chase.constants import (
    ACTION_HELP,
    BACK_STEP_PENALTY,
    BUFF_DURATION,
    BUFF_EXTRA_SPEED,
    BUFF_MIN_DISTANCE,
    DIRECTIONS,
    DISTANCE_BUCKETS,
    DISTANCE_SCALE,
    FLASH_RANGE,
    FLASH_RANGE_DIAGONAL,
    GRID_SIZE,
    HERO_SPEED,
    HISTORY_LENGTH,
    MONSTER2_HISTORY_STEPS,
    MONSTER_INTERVAL_RANGE,
    MONSTER_SPEED,
    MONSTER_SPEEDUP_RANGE,
    NO_SECOND_MONSTER,
    NUM_ACTIONS,
    RANDOM_VALUE,
    SAME_AXIS_PENALTY,
    SPAWN_FALLBACK_TRIES,
    SPAWN_MAX,
    SPAWN_MIN,
    SPAWN_SEARCH_RADIUS,
    SPAWN_TRIES,
    STATUS_AVAILABLE,
    STATUS_REFRESHING,
    STEP_SCORE,
    SUB_TYPE_BUFF,
    SUB_TYPE_TREASURE,
    TIE_EPS,
    TREASURE_MIN_DISTANCE,
    TREASURE_SCORE,
    VIEW_RADIUS,
    relative_direction,
)
from realm.gorge_chase.generator import GeneratedMaps
from realm.gorge_chase.maps import UNREACHABLE, GorgeMap, MapFolder, SingleMap
from realm.gorge_chase.options import CANDIDATES, OPTIONS, check_option, episode_value
from realm.gorge_chase.errors import STEP_AFTER_END, check_error_mode, error_env_obs, say
from realm.gorge_chase.usr_conf import GorgeUsrConfError, validate_usr_conf

__all__ = ["EpisodeOverError", "GorgeChaseEnv", "Monster", "walk_path", "flash_target"]

_SPAN = 2 * GRID_SIZE - 1  # offsets -127..127


def _tables():
    """hero_l2_distance and hero_relative_direction of every offset, indexed (dx+127)*255 + dz+127."""
    buckets, directions = [], []
    for dx in range(-(GRID_SIZE - 1), GRID_SIZE):
        for dz in range(-(GRID_SIZE - 1), GRID_SIZE):
            b = int((dx * dx + dz * dz) ** 0.5 * DISTANCE_BUCKETS / DISTANCE_SCALE)
            buckets.append(min(max(b, 0), DISTANCE_BUCKETS - 1))
            directions.append(relative_direction(dx, dz))
    return buckets, directions


_BUCKET, _DIRECTION = _tables()
_OFFSET0 = (GRID_SIZE - 1) * _SPAN + GRID_SIZE - 1
_LEGAL_READY = [True] * NUM_ACTIONS
_LEGAL_COOLING = [True] * 8 + [False] * (NUM_ACTIONS - 8)


def _rules_rng(seed) -> random.Random:
    """The RNG randomize_rules draws from: its own stream, so drawing leaves the episode's draws as
    they are; seeded from the env's seed (unseeded when that is None)."""
    return random.Random(f"gorge-rules-{seed}") if seed is not None else random.Random()


def _num(value: float):
    """A score as the dumps show it: an int when integral, else a float."""
    return int(value) if value == int(value) else value


def _diagonal_ok(w, x: int, z: int, dx: int, dz: int, rule: str) -> bool:
    nx, nz = x + dx, z + dz
    if not (0 <= nx < GRID_SIZE and 0 <= nz < GRID_SIZE and w[nz * GRID_SIZE + nx]):
        return False
    if dx and dz:
        a, b = w[z * GRID_SIZE + nx], w[nz * GRID_SIZE + x]
        if rule == "one_free":
            return bool(a or b)
        if rule == "both_free":
            return bool(a and b)
    return True


def walk_path(w, x: int, z: int, direction: int, cells: int, rule: str = "one_free") -> list:
    """The cells (x, z) a move of up to `cells` single-cell steps enters, until a step fails the
    diagonal rule (its cell off the map or an obstacle, or a diagonal's corner closed). `w` is
    the map's walkable_flat. The env, the reference policy and the tests share it."""
    dx, dz = DIRECTIONS[direction]
    path = []
    for _ in range(cells):
        if not _diagonal_ok(w, x, z, dx, dz, rule):
            break
        x, z = x + dx, z + dz
        path.append((x, z))
    return path


def flash_target(w, x: int, z: int, direction: int) -> tuple[int, int, int]:
    """(x, z, k) where a flash lands: the farthest walkable cell pos + k * dir for k = range..1
    (10 orthogonal, 8 diagonal), passing over anything; k = 0 (in place) when none is."""
    dx, dz = DIRECTIONS[direction]
    reach = FLASH_RANGE_DIAGONAL if dx and dz else FLASH_RANGE
    for k in range(reach, 0, -1):
        nx, nz = x + dx * k, z + dz * k
        if 0 <= nx < GRID_SIZE and 0 <= nz < GRID_SIZE and w[nz * GRID_SIZE + nx]:
            return nx, nz, k
    return x, z, 0


def monster_sub_steps(cur: int, prev: int, last_axis: int, speed: int, monster_id: int, occupied: dict, orth,
                      dist, pick, path_of) -> tuple[int, int, int]:
    """One monster's `speed` sub-steps (SPEC §7): to the orthogonal neighbour not held by another
    monster with the least `dist` to the hero, + BACK_STEP_PENALTY onto the cell it came from,
    + SAME_AXIS_PENALTY along its last move's axis; `pick` chooses among exact ties (the env: at
    random). A sub-step with no such neighbour takes the script's fallback: the cell of the
    monster's path to the hero (`path_of(start)`, find_path from where this step began, start
    first) at index sub-steps made + 1, even when not adjacent; it stops when that cell is held by
    the other monster or the path is used up. Moves it in `occupied` (cell -> monster id);
    returns its (cell, previous cell, last axis). The env and the reference's look-ahead both move
    monsters with it."""
    start, path = cur, None
    for made in range(speed):
        best_score = None
        best = None
        for n, axis in orth[cur]:
            holder = occupied.get(n)
            if holder is not None and holder != monster_id:
                continue
            score = dist(n)
            if score == UNREACHABLE:
                continue
            if n == prev:
                score += BACK_STEP_PENALTY
            if axis == last_axis:
                score += SAME_AXIS_PENALTY
            if best_score is None or score < best_score - TIE_EPS:
                best_score = score
                best = (n, axis)
            elif score - best_score < TIE_EPS:  # an exact tie (score >= best - eps here)
                best = [best, (n, axis)] if type(best) is tuple else best + [(n, axis)]
        if best is None:  # the script falls back on find_path's cell at its path_index
            if path is None:
                path = path_of(start)
            if made + 1 >= len(path):
                break
            n = path[made + 1]
            holder = occupied.get(n)
            if holder is not None and holder != monster_id:
                break  # held by the other monster: stop
            axis = 0 if n % GRID_SIZE != cur % GRID_SIZE else 1  # the script's axis_of_move: x first
        else:
            n, axis = best if type(best) is tuple else pick(best)
        prev, last_axis = cur, axis
        del occupied[cur]
        occupied[n] = monster_id
        cur = n
    return cur, prev, last_axis


class Monster:
    """A monster's state: its cell, speed, birth cell and the move memory of its chase rule."""

    __slots__ = ("monster_id", "x", "z", "speed", "start_x", "start_z", "prev", "last_axis", "path")

    def __init__(self, monster_id: int, x: int, z: int, speed: int):
        self.monster_id = monster_id
        self.x, self.z = x, z
        self.speed = speed
        self.start_x, self.start_z = x, z
        self.prev = -1  # flat id of the previous cell (-1: none yet)
        self.last_axis = -1  # 0 x, 1 z, -1 none yet
        self.path = [(x, z)]  # every cell it stood on after each step (for pictures)


class GorgeChaseEnv:
    """One hero, up to two monsters, chests and speed buffs on a gorge_chase map.

    `maps`: where map ids resolve: a `MapFolder` (official json files), `GeneratedMaps` (the
    default, the embedded generated maps) or a single `GorgeMap`. `map_id`: pin every episode
    to this id (the usr_conf's map list is then only checked). `seed`: the episode RNG (spawns,
    random config values, map choice, the monsters' tie-breaks); a `seed` given to `reset`
    restarts it. `randomize_rules`: each reset draws every rule of
    `realm.gorge_chase.options.CANDIDATES` from a rule RNG of its own (seeded from `seed`, and from
    a `seed` given to `reset`), so the spawns stay those of the same seed without it. Other
    keywords: the rule options of `realm.gorge_chase.options.OPTIONS` (with randomize_rules, the
    drawn ones are only the values before the first reset). `errors`: a bad usr_conf, or a step
    after the episode's end (or before the first reset), "raise" `GorgeUsrConfError` /
    `EpisodeOverError`, or are answered as the platform answers them with "env_obs": the error
    env_obs of `realm.gorge_chase.errors` (the error kept in `answered_error`, its message on stderr).
    """

    answered_error: Exception | None = None  # what the latest reset or step answered with instead of raising
    #: the Kaiwu protocol it speaks (realm.make_env's `protocol`), and the rules only it takes
    #: (errors: a run's [env] gorge_errors)
    PROTOCOL = "gorge"
    PROTOCOL_RULES = ("map_id", "randomize_rules", "errors", *OPTIONS)
    GAME = "gorge_chase"  # the game it plays (kaiwu.json's project_code)
    #: the realm.map_source.MapSource fields it reads beside map_seed
    MAP_SOURCE = ("maps_folder",)
    MAP_HINT = "gorge_chase's official maps are a folder of gorge_chase_map_<id>.json files: maps_folder"

    @classmethod
    def from_source(cls, source, *, seed: int | None = None, flash_blocked: str = "nearest",
                    step_jitter: bool = False, **rules) -> "GorgeChaseEnv":
        """realm.make_env's constructor: the env on `source.maps_folder` (official map files by id)
        or the generated maps of `source.map_seed`. step_jitter is refused (a Back to the Realm
        rule); flash_blocked is the other games' rule (a gorge flash lands on its farthest free cell)."""
        if step_jitter:
            raise ValueError("step_jitter is a Back to the Realm rule; gorge_chase has none")
        maps = MapFolder(source.maps_folder) if source.maps_folder is not None else GeneratedMaps(source.map_seed)
        return cls(maps, seed=seed, **rules)

    def __init__(self, maps=None, *, map_id: int | None = None, seed: int | None = None,
                 randomize_rules: bool = False, errors: str = "raise", **options):
        if maps is None:
            maps = GeneratedMaps(0)
        elif isinstance(maps, GorgeMap):
            maps = SingleMap(maps)
        if not hasattr(maps, "get"):
            raise TypeError(f"maps must be a GorgeMap, MapFolder or GeneratedMaps, got {type(maps).__name__}")
        self.maps = maps
        self.errors = check_error_mode(errors)
        for key in options:
            if key not in OPTIONS:
                from realm.back_to_the_realm.usr_conf import did_you_mean

                raise TypeError(f"unknown gorge_chase env option {key!r}; allowed: {', '.join(OPTIONS)}"
                                f"{did_you_mean(key, OPTIONS)}")
        for name, (default, _, _) in OPTIONS.items():
            setattr(self, name, check_option(name, options.get(name, default)))
        self._map_ids = maps.allowed_ids() if hasattr(maps, "allowed_ids") else range(1, 11)
        if map_id is not None and (isinstance(map_id, bool) or not isinstance(map_id, Integral)
                                   or map_id not in self._map_ids):
            raise ValueError(f"map_id = {map_id!r} is invalid for {maps.name}: allowed an int map id")
        self.pinned_map_id = None if map_id is None else int(map_id)
        self._random = random.Random(seed)
        self.randomize_rules = bool(randomize_rules)
        self._rules_random = _rules_rng(seed)
        self._extra_info = episode_value("gorge_extra_info", self.gorge_extra_info, self._rules_random)
        self.env_id = str(random.Random(f"env-id-{seed}").randrange(10_000_000, 100_000_000)) if seed is not None \
            else str(random.randrange(10_000_000, 100_000_000))
        self._episodes = 0
        self._done = True
        self._started = False
        self.map: GorgeMap | None = None

    @property
    def options(self) -> dict:
        """The rule options as constructor keywords."""
        return {name: getattr(self, name) for name in OPTIONS}

    def describe_maps(self, map_ids) -> str:
        """One line for the terminal: the maps episodes naming `map_ids` play (the generated maps
        of [env] map_seed, or the files of [env] maps_dir); ids 1-10 name official maps only
        with the folder."""
        line = f"maps: {self.maps.describe(map_ids)}"
        if isinstance(self.maps, GeneratedMaps):
            line += "; the official map files: set [env] maps_dir"
        return line

    @property
    def done(self) -> bool:
        return self._done

    def _answer_error(self, call: str, error: Exception, code: int, frame_no: int, map_id: int) -> dict:
        """The platform's answer to a failed `call` (errors="env_obs"): the error env_obs, the
        error kept in `answered_error` and its message on stderr (gorge_extra_info "withheld":
        its extra_info the result fields alone, as every env_obs of the episode)."""
        self.answered_error = error
        say(call, code, str(error))
        env_obs = error_env_obs(self.env_id, frame_no, map_id, code, str(error))
        if self._extra_info != "full":
            env_obs["extra_info"] = {"result_code": code, "result_message": str(error)}
        return env_obs

    # ---- reset -----------------------------------------------------------------------------------

    def reset(self, usr_conf: dict | None = None, seed: int | None = None) -> dict:
        """Start an episode; returns env_obs (step 0). `usr_conf` None or {} = official defaults."""
        if seed is not None:  # the same seed and usr_conf replay the same episode (map cycle included)
            self._random = random.Random(seed)
            self._rules_random = _rules_rng(seed)
            self._episodes = 0
        # what this episode's extra_info holds (gorge_extra_info "mixed": drawn for each episode)
        self._extra_info = episode_value("gorge_extra_info", self.gorge_extra_info, self._rules_random)
        if self.randomize_rules:
            self._draw_rules()
        try:
            conf = validate_usr_conf(usr_conf, self._map_ids)
        except GorgeUsrConfError as e:
            if self.errors == "raise":
                raise
            self._done = True  # no episode: a step now is answered STEP_AFTER_END
            return self._answer_error("reset", e, e.result_code, 0, 0)
        rnd = self._random
        self.conf = conf
        # map choice
        if self.pinned_map_id is not None:
            map_id = self.pinned_map_id
        elif conf.map_random:
            map_id = rnd.choice(conf.map)
        elif self.map_order == "first":
            map_id = conf.map[0]
        else:
            map_id = conf.map[self._episodes % len(conf.map)]
        self._episodes += 1
        game_map = self.maps.get(map_id)
        self.map, self.map_id = game_map, map_id
        self._w = game_map.walkable_flat
        self._index = game_map.index
        self._orth = game_map.orthogonal_neighbours()
        # random config values (the script draws them before any spawn)
        interval = conf.monster_interval
        if interval == RANDOM_VALUE:
            interval = rnd.randint(*MONSTER_INTERVAL_RANGE)
        speedup = conf.monster_speedup
        if speedup == RANDOM_VALUE:
            speedup = rnd.randint(*MONSTER_SPEEDUP_RANGE)
        self.monster_interval, self.monster_speedup = interval, speedup
        raw = self.random_values_in_env_info == "raw"
        self._shown_interval = conf.monster_interval if raw else interval
        self._shown_speedup = conf.monster_speedup if raw else speedup
        self.max_step = conf.max_step
        self.talent_cooldown = conf.talent_cooldown
        self.buff_cooldown = conf.buff_cooldown

        # spawns: treasures, buffs, hero, monster 1 (entity ids in this order)
        next_id = 1
        self.treasures = []  # [config_id, x, z, alive]
        for _ in range(conf.treasure_count):
            cell = self._spawn_item([(t[1], t[2]) for t in self.treasures], TREASURE_MIN_DISTANCE, strict=False)
            if cell is not None:
                self.treasures.append([next_id, cell[0], cell[1], True])
                next_id += 1
        self.buffs = []  # [config_id, x, z, visible, refresh counter]
        for _ in range(conf.buff_count):
            cell = self._spawn_item([(b[1], b[2]) for b in self.buffs], BUFF_MIN_DISTANCE, strict=True)
            if cell is not None:
                self.buffs.append([next_id, cell[0], cell[1], True, 0])
                next_id += 1
        self._treasure_at: dict[int, list] = {}
        for t in self.treasures:
            self._treasure_at.setdefault(t[2] * GRID_SIZE + t[1], []).append(t)
        self._buff_at: dict[int, list] = {}
        for b in self.buffs:
            self._buff_at.setdefault(b[2] * GRID_SIZE + b[1], []).append(b)
        taken = set(self._treasure_at) | set(self._buff_at)
        road = game_map.road_cells
        c = rnd.choice(road)  # uniform over road cells holding no item (rejection)
        while c in taken:
            c = rnd.choice(road)
        self.hero_x, self.hero_z = c % GRID_SIZE, c // GRID_SIZE
        self.hero_id = next_id
        next_id += 1
        self.step_no = 0
        self.history = deque([(0, self.hero_x, self.hero_z)], maxlen=HISTORY_LENGTH)
        self.hero_path = [(self.hero_x, self.hero_z)]
        self.flashes = []  # (step, from (x, z), to (x, z))
        self.monsters: list[Monster] = []
        self._next_monster_id = next_id
        self._monster_base_speed = min(max(MONSTER_SPEED + self.monster_speed_bonus, 0), 4)
        self.boosted = False
        self.second_spawned = interval == NO_SECOND_MONSTER
        m1 = self._monster1_cell()
        self.monsters.append(Monster(next_id, m1[0], m1[1], self._monster_base_speed))
        self._next_monster_id += 1
        # hero state
        self.flash_cooldown = 0
        self.flash_count = 0
        self.buff_remaining = 0
        self.collected_buff = 0
        self.treasures_collected = 0
        self._remaining_ids = [t[0] for t in self.treasures]
        self.caught = False
        self._total = 0
        self._started = True
        self._done = False
        self.last_path = None
        self._total_treasure, self._total_buff = conf.treasure_count, conf.buff_count  # as configured
        self.answered_error = None
        return self._env_obs(False, False, "success")

    def _draw_rules(self) -> None:
        """One reading of every CANDIDATES rule for this episode, from the rule RNG."""
        for name, readings in CANDIDATES.items():
            setattr(self, name, self._rules_random.choice(readings))

    def place(self, hero=None, monsters=None, treasures=None, buffs=None) -> dict:
        """Rearrange the episode just reset (scenarios for tests and pictures): `hero` (x, z);
        `monsters` a list of (x, z) (1 or 2; a second one counts as monster 2 spawned);
        `treasures` / `buffs` lists of (x, z), given new config ids in spawn order. Cells must be
        road. Returns the env_obs of the arranged step 0."""
        if self._done or self.step_no != 0:
            raise EpisodeOverError("place() arranges a freshly reset episode (step 0)")
        for cell in ([hero] if hero else []) + list(monsters or []) + list(treasures or []) + list(buffs or []):
            if not self.map.is_walkable(*cell):
                raise ValueError(f"cell {cell} is not a road cell of {self.map.name}")
        if treasures is not None or buffs is not None:
            if treasures is not None:
                self._total_treasure = len(treasures)
            if buffs is not None:
                self._total_buff = len(buffs)
            treasures = [(t[1], t[2]) for t in self.treasures] if treasures is None else treasures
            buffs = [(b[1], b[2]) for b in self.buffs] if buffs is None else buffs
            self.treasures = [[i + 1, x, z, True] for i, (x, z) in enumerate(treasures)]
            self.buffs = [[len(treasures) + i + 1, x, z, True, 0] for i, (x, z) in enumerate(buffs)]
            self._treasure_at, self._buff_at = {}, {}
            for t in self.treasures:
                self._treasure_at.setdefault(t[2] * GRID_SIZE + t[1], []).append(t)
            for b in self.buffs:
                self._buff_at.setdefault(b[2] * GRID_SIZE + b[1], []).append(b)
            self._remaining_ids = [t[0] for t in self.treasures]
            self.hero_id = len(self.treasures) + len(self.buffs) + 1
            first = self.hero_id + 1
            for k, m in enumerate(self.monsters):
                m.monster_id = first + k
            self._next_monster_id = first + len(self.monsters)
        if hero is not None:
            self.hero_x, self.hero_z = hero
            self.history = deque([(0, *hero)], maxlen=HISTORY_LENGTH)
            self.hero_path = [tuple(hero)]
        if monsters is not None:
            first = self.hero_id + 1
            self.monsters = [Monster(first + k, x, z, self._monster_base_speed) for k, (x, z) in enumerate(monsters)]
            self._next_monster_id = first + len(self.monsters)
            if len(self.monsters) > 1:
                self.second_spawned = True
        return self._env_obs(False, False, "success")

    def _spawn_item(self, placed, min_distance: float, strict: bool):
        """A chest / buff cell: 200 random tries (x, z in 5..123) keeping the distance to the
        items placed before, then 50 tries on walkability alone (None if all fail)."""
        w = self._w
        below = self._random._randbelow  # the draws of randint(SPAWN_MIN, SPAWN_MAX), without its checks
        span = SPAWN_MAX - SPAWN_MIN + 1
        for _ in range(SPAWN_TRIES):
            x, z = SPAWN_MIN + below(span), SPAWN_MIN + below(span)
            if w[z * GRID_SIZE + x]:
                ok = True
                for px, pz in placed:
                    d = ((x - px) ** 2 + (z - pz) ** 2) ** 0.5
                    if (d < min_distance) if strict else (d <= min_distance):
                        ok = False
                        break
                if ok:
                    return x, z
        for _ in range(SPAWN_FALLBACK_TRIES):
            x, z = SPAWN_MIN + below(span), SPAWN_MIN + below(span)
            if w[z * GRID_SIZE + x]:
                return x, z
        return None

    def _ring(self, cx: int, cz: int, r: int) -> list:
        """Walkable cells at Chebyshev distance exactly r from (cx, cz), rows top to bottom."""
        w = self._w
        out = []
        for dz in range(-r, r + 1):
            z = cz + dz
            if not 0 <= z < GRID_SIZE:
                continue
            xs = range(-r, r + 1) if abs(dz) == r else (-r, r)
            for dx in xs:
                x = cx + dx
                if 0 <= x < GRID_SIZE and w[z * GRID_SIZE + x]:
                    out.append((x, z))
        return out

    def _monster1_cell(self):
        """Monster 1: a random walkable cell on the view's outer ring (Chebyshev 10 from the hero),
        else on rings 9..1, else any road cell but the hero's."""
        for r in range(VIEW_RADIUS, 0, -1):
            ring = self._ring(self.hero_x, self.hero_z, r)
            if ring:
                return self._random.choice(ring)
        hero = self.hero_z * GRID_SIZE + self.hero_x
        c = self._random.choice([c for c in self.map.road_cells if c != hero])
        return c % GRID_SIZE, c // GRID_SIZE

    # ---- step ------------------------------------------------------------------------------------

    def step(self, act) -> tuple[dict, dict]:
        """Play one action; returns (env_reward, env_obs)."""
        if self._done:
            error = EpisodeOverError("step() called before reset()" if not self._started else
                                     "the episode is over (terminated or truncated, or its reset failed): call "
                                     "reset() first")
            if self.errors == "raise":
                raise error
            frame, map_id = (self.step_no, self.map_id) if self._started else (0, 0)
            return ({"env_id": self.env_id, "frame_no": frame, "reward": 0.0},
                    self._answer_error("step", error, STEP_AFTER_END, frame, map_id))
        self.answered_error = None
        if type(act) is not int or not 0 <= act < NUM_ACTIONS:  # the common case, a plain int in range, as it is
            act = checked_action(act, NUM_ACTIONS, ACTION_HELP)
        w = self._w
        hx, hz = self.hero_x, self.hero_z
        # 1. the action
        path = None
        if act < 8:
            cells = HERO_SPEED + self.hero_move_bonus + (BUFF_EXTRA_SPEED if self.buff_remaining > 0 else 0)
            walked = walk_path(w, hx, hz, act, cells, self.diagonal_rule)
            if walked:
                path = walked
                hx, hz = walked[-1]
        elif self.flash_cooldown == 0:
            nx, nz, k = flash_target(w, hx, hz, act - 8)
            dx, dz = DIRECTIONS[act - 8]
            path = [(hx + dx * i, hz + dz * i) for i in range(1, k + 1)]
            self.flashes.append((self.step_no + 1, (hx, hz), (nx, nz)))
            hx, hz = nx, nz
            self.flash_cooldown = self.talent_cooldown
            self.flash_count += 1
        self.hero_x, self.hero_z = hx, hz
        self.last_path = path
        # 2. the step counter and the position history
        step = self.step_no = self.step_no + 1
        self.history.append((step, hx, hz))
        self.hero_path.append((hx, hz))
        # 3. chests on every path cell (the hero's cell when nothing was walked)
        check = path if path else ((hx, hz),)
        if self._treasure_at:
            for x, z in check:
                here = self._treasure_at.get(z * GRID_SIZE + x)
                if here:
                    for t in here:
                        if t[3]:
                            t[3] = False
                            self.treasures_collected += 1
                            self._remaining_ids.remove(t[0])
        # 4. the first available buff on the path
        if self._buff_at:
            self._collect_buff(check)
        # 5. monsters move
        self._move_monsters()
        # 6. monster 2
        if not self.second_spawned and step >= self.monster_interval:
            self._spawn_monster2()
        # 7. speed-up
        if not self.boosted and step >= self.monster_speedup:
            self.boosted = True
            for m in self.monsters:
                m.speed += 1
        # 8. timers
        if self.buff_remaining > 0:
            self.buff_remaining -= 1
        for b in self.buffs:
            if b[4] > 0:
                b[4] -= 1
                if b[4] == 0:
                    b[3] = True
        if self.flash_cooldown > 0:
            self.flash_cooldown -= 1
        # 9. capture
        r = self.capture_radius
        caught = False
        for m in self.monsters:
            m.path.append((m.x, m.z))
            if abs(m.x - hx) <= r and abs(m.z - hz) <= r:
                caught = True
        self.caught = caught
        # 10. the step limit
        truncated = step >= self.max_step
        terminated = caught and not truncated
        self._done = terminated or truncated
        # 11. score
        previous = self._total
        env_obs = self._env_obs(terminated, truncated, "")
        return {"env_id": self.env_id, "frame_no": step, "reward": float(self._total - previous)}, env_obs

    def _collect_buff(self, cells) -> None:
        for x, z in cells:
            here = self._buff_at.get(z * GRID_SIZE + x)
            if here:
                for b in here:
                    if b[3]:
                        self.buff_remaining = BUFF_DURATION
                        self.collected_buff += 1
                        b[3] = False
                        b[4] = self.buff_cooldown
                        return

    def _distance_lookup(self):
        """d(flat cell) -> distance from that cell to the hero under a heuristic monster_distance
        ('chebyshev', 'manhattan'; the bfs metrics read the hero's distance field directly)."""
        hx, hz = self.hero_x, self.hero_z
        if self.monster_distance == "chebyshev":
            return lambda c: max(abs(c % GRID_SIZE - hx), abs(c // GRID_SIZE - hz))
        return lambda c: abs(c % GRID_SIZE - hx) + abs(c // GRID_SIZE - hz)

    def _move_monsters(self) -> None:
        """Each monster in id order: `speed` sub-steps to the orthogonal neighbour (not held by
        the other monster) with the least distance to the hero + 0.25 if it is the previous cell
        + 0.05 if it continues the last move's axis, random among exact ties (SPEC §7); with none,
        the cell of its find_path (a shortest path under monster_distance's grid, bfs4 for the
        straight-line heuristics)."""
        monsters = self.monsters
        if not monsters:
            return
        hero = self.hero_z * GRID_SIZE + self.hero_x
        occupied = {m.z * GRID_SIZE + m.x: m.monster_id for m in monsters}
        metric = self.monster_distance
        if metric in ("bfs4", "bfs8"):
            field = self.map.distance_field(hero, metric)
            row, grow, index = field.dist, field.grow, self._index

            def dist(c):
                i = index[c]
                d = row[i]
                return d if d != UNREACHABLE or field.done else grow(i)
        else:
            dist = self._distance_lookup()
        orth = self._orth
        game_map, path_metric = self.map, metric if metric in ("bfs4", "bfs8") else "bfs4"

        def path_of(start):
            return game_map.shortest_path(start, hero, path_metric)

        for m in monsters:
            cur = m.z * GRID_SIZE + m.x
            occupied[cur] = m.monster_id
            if cur == hero:
                continue
            if dist(cur) == UNREACHABLE:
                self._greedy_step(m, cur, occupied)
                continue
            cur, m.prev, m.last_axis = monster_sub_steps(cur, m.prev, m.last_axis, m.speed, m.monster_id, occupied,
                                                         orth, dist, self._random.choice, path_of)
            m.x, m.z = cur % GRID_SIZE, cur // GRID_SIZE

    def _greedy_step(self, m: Monster, cur: int, occupied: dict) -> None:
        """No path to the hero: one step to the 8-neighbour (diagonal rule, not held) with the
        least Chebyshev distance to the hero + 0.25 if it is the previous cell."""
        w, hx, hz = self._w, self.hero_x, self.hero_z
        x, z = cur % GRID_SIZE, cur // GRID_SIZE
        best_score, best = None, []
        for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)):
            if not _diagonal_ok(w, x, z, dx, dz, self.diagonal_rule):
                continue
            n = (z + dz) * GRID_SIZE + x + dx
            holder = occupied.get(n)
            if holder is not None and holder != m.monster_id:
                continue
            score = max(abs(hx - x - dx), abs(hz - z - dz)) + (BACK_STEP_PENALTY if n == m.prev else 0.0)
            if best_score is None or score < best_score - TIE_EPS:
                best_score, best = score, [n]
            elif abs(score - best_score) < TIE_EPS:
                best.append(n)
        if best:
            n = self._random.choice(best)
            m.prev = cur
            del occupied[cur]
            occupied[n] = m.monster_id
            m.x, m.z = n % GRID_SIZE, n // GRID_SIZE

    def _spawn_monster2(self) -> None:
        """Monster 2: on the hero's cell of 10 steps earlier (the oldest kept if missing); if
        monster 1 holds it, the nearest walkable free cell within 10 (rings scanned row by row)."""
        self.second_spawned = True
        target = self.step_no - MONSTER2_HISTORY_STEPS
        x, z = self.history[0][1], self.history[0][2]
        for s, hx, hz in reversed(self.history):
            if s == target:
                x, z = hx, hz
                break
        held = {(m.x, m.z) for m in self.monsters}
        if not self._w[z * GRID_SIZE + x] or (x, z) in held:
            spot = None
            for r in range(1, SPAWN_SEARCH_RADIUS + 1):
                for cell in self._ring(x, z, r):
                    if cell not in held:
                        spot = cell
                        break
                if spot:
                    break
            if spot is None:
                return
            x, z = spot
        speed = self._monster_base_speed + (1 if self.boosted else 0)
        self.monsters.append(Monster(self._next_monster_id, x, z, speed))
        self._next_monster_id += 1

    # ---- observation -----------------------------------------------------------------------------

    def _env_obs(self, terminated: bool, truncated: bool, message: str) -> dict:
        hx, hz = self.hero_x, self.hero_z
        step = self.step_no
        step_score = _num(step * STEP_SCORE)
        collected = self.treasures_collected
        treasure_score = collected * TREASURE_SCORE
        total = _num(step_score + treasure_score)
        self._total = total
        base = _OFFSET0 - hx * _SPAN - hz
        bucket, direction = _BUCKET, _DIRECTION
        shown_interval = self._shown_interval
        buff_remaining, flash_cooldown, hero_id = self.buff_remaining, self.flash_cooldown, self.hero_id
        lo_x, hi_x, lo_z, hi_z = hx - VIEW_RADIUS, hx + VIEW_RADIUS, hz - VIEW_RADIUS, hz + VIEW_RADIUS

        obs_monsters, all_monsters = [], []
        for m in self.monsters:
            mx, mz = m.x, m.z
            o = base + mx * _SPAN + mz
            b, d = bucket[o], direction[o]
            all_monsters.append({"hero_l2_distance": b, "hero_relative_direction": d, "monster_id": m.monster_id,
                                 "monster_interval": shown_interval, "pos": {"x": mx, "z": mz}, "speed": m.speed,
                                 "start_pos": {"x": m.start_x, "z": m.start_z}})
            if lo_x <= mx <= hi_x and lo_z <= mz <= hi_z:
                obs_monsters.append({"hero_l2_distance": b, "hero_relative_direction": d, "monster_id": m.monster_id,
                                     "monster_interval": shown_interval, "pos": {"x": mx, "z": mz},
                                     "speed": m.speed, "is_in_view": 1})
            else:
                obs_monsters.append({"hero_l2_distance": b, "hero_relative_direction": d, "monster_id": m.monster_id,
                                     "monster_interval": shown_interval, "pos": {"x": -1, "z": -1}, "speed": -1,
                                     "is_in_view": 0})
        obs_organs, all_organs = [], []
        add_all, add_seen = all_organs.append, obs_organs.append
        for t in self.treasures:  # dicts of this env_obs alone: a package may edit what it is given
            if t[3]:
                x, z = t[1], t[2]
                o = base + x * _SPAN + z
                b, d, i = bucket[o], direction[o], t[0]
                add_all({"config_id": i, "hero_l2_distance": b, "hero_relative_direction": d, "pos": {"x": x, "z": z},
                         "status": STATUS_AVAILABLE, "sub_type": SUB_TYPE_TREASURE})
                if lo_x <= x <= hi_x and lo_z <= z <= hi_z:
                    add_seen({"config_id": i, "hero_l2_distance": b, "hero_relative_direction": d,
                              "pos": {"x": x, "z": z}, "status": STATUS_AVAILABLE, "sub_type": SUB_TYPE_TREASURE})
        for b_ in self.buffs:
            x, z = b_[1], b_[2]
            o = base + x * _SPAN + z
            b, d, i = bucket[o], direction[o], b_[0]
            status = STATUS_AVAILABLE if b_[3] else STATUS_REFRESHING
            add_all({"config_id": i, "hero_l2_distance": b, "hero_relative_direction": d, "pos": {"x": x, "z": z},
                     "status": status, "sub_type": SUB_TYPE_BUFF})
            if lo_x <= x <= hi_x and lo_z <= z <= hi_z:
                add_seen({"config_id": i, "hero_l2_distance": b, "hero_relative_direction": d, "pos": {"x": x, "z": z},
                          "status": status, "sub_type": SUB_TYPE_BUFF})
        env_info = {
            "buff_refresh_time": self.buff_cooldown, "flash_cooldown_max": self.talent_cooldown,
            "flash_count": self.flash_count, "max_step": self.max_step, "monster_init_speed": MONSTER_SPEED,
            "monster_interval": shown_interval, "monster_speed_boost_step": self._shown_speedup,
            "pos": {"x": hx, "z": hz}, "step_no": step, "step_score": step_score, "total_buff": self._total_buff,
            "total_score": total, "total_treasure": self._total_treasure, "treasure_id": self._remaining_ids[:],
            "treasure_score": treasure_score, "treasures_collected": collected,
            "collected_buff": self.collected_buff,
        }
        return {
            "env_id": self.env_id,
            "frame_no": step,
            "observation": {
                "step_no": step,
                "frame_state": {
                    "heroes": {"buff_remaining_time": buff_remaining, "flash_cooldown": flash_cooldown,
                               "hero_id": hero_id, "pos": {"x": hx, "z": hz}, "step_score": step_score,
                               "treasure_collected_count": collected, "treasure_score": treasure_score},
                    "monsters": obs_monsters, "organs": obs_organs},
                "env_info": env_info,
                "map_info": self.map.view_window(hx, hz),
                "legal_action": (_LEGAL_READY if flash_cooldown == 0 else _LEGAL_COOLING)[:],
            },
            "extra_info": {
                "frame_state": {
                    "frame_no": step,
                    "heroes": {"buff_remaining_time": buff_remaining, "flash_cooldown": flash_cooldown,
                               "hero_id": hero_id, "pos": {"x": hx, "z": hz}, "step_score": step_score,
                               "treasure_collected_count": collected, "treasure_score": treasure_score},
                    "monsters": all_monsters, "organs": all_organs},
                "map_id": self.map_id,
                "result_code": 0,
                "result_message": message,
            } if self._extra_info == "full" else {"result_code": 0, "result_message": message},
            "terminated": terminated,
            "truncated": truncated,
        }
