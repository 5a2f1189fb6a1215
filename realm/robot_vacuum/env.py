"""RobotVacuumEnv: the rules of robot_vacuum 13.0.1 (docs/games/robot_vacuum.md) behind the framework
API the 13.0.1 package's workflow calls:

    env_obs = env.reset(usr_conf)            # usr_conf = {"env_conf": {...}} or None
    env_reward, env_obs = env.step(act)      # act: int 0..7

env_obs = {"env_id", "frame_no", "observation", "extra_info", "terminated", "truncated"} with the
keys, nesting and value types of the data protocol (04-数据协议): observation = {step_no,
frame_state {frame_no, heroes (one HeroState), npcs, organs}, env_info, map_info (21x21: 0
blocked, 1 clean, 2 dirt), legal_action}; extra_info = {frame_state (every robot's true cell),
map_id, result_code, result_message}. env_reward = {"env_id", "frame_no", "reward"}.

A step, in order: the hero's move (a blocked move stays put); step + 1; the hero cleans the cell
it stands on (+1 score if it was dirt); battery - 1; on a charger's 3x3 the battery refills to
battery_max (entering one counts a charge); [collision check, with collision_check
"before_and_after"]; each official robot moves at random inside its 21x21 square and cleans its
cell (no score); the collision check (an official robot within Chebyshev distance 1); the battery
check (battery <= 0 fails); the step limit (step >= max_step truncates, and wins over a failure
on the same step).

A full-information policy (realm.robot_vacuum.reference) and the pictures read the episode's
true state: `hero_cell`, `npc_cells`, `npc_homes` (flat ids z * 128 + x, and (x, z) squares'
centres), `cell_state` (the padded byte grid: 0 blocked, 1 clean, 2 dirt, at
`realm.robot_vacuum.maps.CELL_PAD[c]`), `charger_flags` ([c] 1 under an active charger), `moves`
(the map's move table under diagonal_rule), `battery`, `score`, `step_no`, `max_step`.

Speed matters (training runs millions of steps): moves are one lookup in the map's move table,
the dirt state is one padded byte grid shared with a numpy view (map_info is one slice's
`tolist`), and every env_obs is built from dict literals, fresh each time (a package may edit
what it is given without changing later frames).
"""
from __future__ import annotations

import random
from numbers import Integral

import numpy as np

from realm.episode import EpisodeOverError, checked_action
from realm.robot_vacuum.constants import (
    ACTION_HELP,
    CELL_CLEAN,
    CELL_DIRT,
    CHARGER_SIZE,
    COLLISION_RANGE,
    GRID_SIZE,
    HERO_SPAWN_CLEARANCE,
    HIDDEN_POS,
    NPC_RADIUS,
    NUM_ACTIONS,
    OPEN_MAP_IDS,
    SUB_TYPE_CHARGER,
    VIEW_RADIUS,
    VIEW_SIZE,
)
from realm.robot_vacuum.errors import STEP_AFTER_END, check_error_mode, error_env_obs, say
from realm.robot_vacuum.generator import GeneratedMaps
from realm.robot_vacuum.maps import CELL_PAD, CELL_X, CELL_Z, PADDED, MapFolder, SingleMap, VacuumMap
from realm.robot_vacuum.options import CANDIDATES, OPTIONS, check_option, episode_value
from realm.robot_vacuum.usr_conf import VacuumUsrConfError, validate_usr_conf

__all__ = ["EpisodeOverError", "RobotVacuumEnv"]

NPC_ACTIONS = {"4dir": (0, 2, 4, 6), "8dir": tuple(range(NUM_ACTIONS))}  # the move-table actions a robot tries
SPAWN_TRIES = 400  # random cells tried for an official robot's spawn before the fallback
HERO_SPAWN_TRIES = 10_000


def _rules_rng(seed) -> random.Random:
    """The RNG randomize_rules draws from: its own stream, so drawing leaves the episode's draws as
    they are; seeded from the env's seed (unseeded when that is None)."""
    return random.Random(f"vacuum-rules-{seed}") if seed is not None else random.Random()


class RobotVacuumEnv:
    """One cleaning robot (the hero), up to 4 official robots and up to 4 chargers on a
    robot_vacuum map.

    `maps`: where map ids resolve: a `MapFolder` (official map files), `GeneratedMaps` (the
    default, the embedded generated maps) or a single `VacuumMap`. `map_id`: pin every episode to
    this id (the usr_conf's map list is then only checked). `seed`: the episode RNG (chargers,
    spawns, map choice, the official robots' moves); a `seed` given to `reset` restarts it.
    `randomize_rules`: each reset draws every rule of `realm.robot_vacuum.options.CANDIDATES`
    from a rule RNG of its own (seeded from `seed`, and from a `seed` given to `reset`). Other
    keywords: the options of `realm.robot_vacuum.options.OPTIONS`. `errors`: a bad usr_conf, or a
    step after the episode's end (or before the first reset), "raise" `VacuumUsrConfError` /
    `EpisodeOverError`, or are answered as the platform answers them with "env_obs" (the error
    kept in `answered_error`, its message on stderr).
    """

    answered_error: Exception | None = None
    #: the Kaiwu protocol it speaks (realm.make_env's `protocol`), and the rules only it takes
    PROTOCOL = "vacuum"
    PROTOCOL_RULES = ("map_id", "randomize_rules", "errors", *OPTIONS)
    GAME = "robot_vacuum"  # the game it plays (kaiwu.json's project_code)
    #: the realm.map_source.MapSource fields it reads beside map_seed
    MAP_SOURCE = ("maps_folder",)
    MAP_HINT = "robot_vacuum's official maps are a folder of robot_vacuum_map_<id>.json files: maps_folder"

    @classmethod
    def from_source(cls, source, *, seed: int | None = None, flash_blocked: str = "nearest",
                    step_jitter: bool = False, **rules) -> "RobotVacuumEnv":
        """realm.make_env's constructor: the env on `source.maps_folder` (official map files by id)
        or the generated maps of `source.map_seed`. flash_blocked and step_jitter are other games'
        rules: step_jitter is refused, flash_blocked has nothing to act on (no flash here)."""
        if step_jitter:
            raise ValueError("step_jitter is a Back to the Realm rule; robot_vacuum has none")
        maps = MapFolder(source.maps_folder) if source.maps_folder is not None else GeneratedMaps(source.map_seed)
        return cls(maps, seed=seed, **rules)

    def __init__(self, maps=None, *, map_id: int | None = None, seed: int | None = None,
                 randomize_rules: bool = False, errors: str = "raise", **options):
        if maps is None:
            maps = GeneratedMaps(0)
        elif isinstance(maps, VacuumMap):
            maps = SingleMap(maps)
        if not hasattr(maps, "get"):
            raise TypeError(f"maps must be a VacuumMap, MapFolder or GeneratedMaps, got {type(maps).__name__}")
        self.maps = maps
        self.errors = check_error_mode(errors)
        for key in options:
            if key not in OPTIONS:
                from realm.back_to_the_realm.usr_conf import did_you_mean

                raise TypeError(f"unknown robot_vacuum env option {key!r}; allowed: {', '.join(OPTIONS)}"
                                f"{did_you_mean(key, OPTIONS)}")
        for name, (default, _, _) in OPTIONS.items():
            setattr(self, name, check_option(name, options.get(name, default)))
        self._map_ids = maps.allowed_ids() if hasattr(maps, "allowed_ids") else OPEN_MAP_IDS
        if map_id is not None and (isinstance(map_id, bool) or not isinstance(map_id, Integral)
                                   or map_id not in self._map_ids):
            raise ValueError(f"map_id = {map_id!r} is invalid for {maps.name}: allowed an int map id")
        self.pinned_map_id = None if map_id is None else int(map_id)
        self._random = random.Random(seed)
        self.randomize_rules = bool(randomize_rules)
        self._rules_random = _rules_rng(seed)
        self._extra_info = episode_value("vacuum_extra_info", self.vacuum_extra_info, self._rules_random)
        self.env_id = str(random.Random(f"env-id-{seed}").randrange(10_000_000, 100_000_000)) if seed is not None \
            else str(random.randrange(10_000_000, 100_000_000))
        self._episodes = 0
        self._done = True
        self._started = False
        self.map: VacuumMap | None = None
        self.map_id = 0
        self.step_no = 0

    @property
    def options(self) -> dict:
        """The rule options as constructor keywords."""
        return {name: getattr(self, name) for name in OPTIONS}

    @property
    def done(self) -> bool:
        return self._done

    def describe_maps(self, map_ids) -> str:
        """One line for the terminal: the maps episodes naming `map_ids` play."""
        line = f"maps: {self.maps.describe(map_ids)}"
        if isinstance(self.maps, GeneratedMaps):
            line += "; the official map files: a maps_folder"
        return line

    def _answer_error(self, call: str, error: Exception, code: int, frame_no: int, map_id: int) -> dict:
        """The platform's answer to a failed `call` (errors="env_obs")."""
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
        # what this episode's extra_info holds (vacuum_extra_info "mixed": drawn for each episode)
        self._extra_info = episode_value("vacuum_extra_info", self.vacuum_extra_info, self._rules_random)
        if self.randomize_rules:
            for name, readings in CANDIDATES.items():
                setattr(self, name, self._rules_random.choice(readings))
        try:
            conf = validate_usr_conf(usr_conf, self._map_ids)
        except VacuumUsrConfError as e:
            if self.errors == "raise":
                raise
            self._done = True
            return self._answer_error("reset", e, e.result_code, 0, 0)
        rnd = self._random
        self.conf = conf
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
        self.moves = game_map.moves(self.diagonal_rule)
        self.max_step, self.battery_max = conf.max_step, conf.battery_max
        self._total_map = len(conf.map) if self.total_map == "map_list" else len(OPEN_MAP_IDS)

        # 1. chargers: a random subset of the map's sites (all of them reshuffled when 4 of 4)
        order = list(range(len(game_map.chargers)))
        rnd.shuffle(order)
        self.charger_sites = tuple(sorted(order[:conf.charger_count]))
        state, self.charger_flags, self.total_dirt = game_map.layout(self.charger_sites)
        self.cell_state = bytearray(state)
        self._view = np.frombuffer(self.cell_state, dtype=np.uint8).reshape(PADDED, PADDED)
        # 2. official robots
        homes = self._npc_homes(conf.robot_count)
        self.npc_homes = homes
        self.npc_cells = [z * GRID_SIZE + x for x, z in homes]
        self.npc_ids = [str(len(self.charger_sites) + i + 1) for i in range(len(homes))]
        self.npc_paths = [[c] for c in self.npc_cells]
        # 3. the hero
        c = self._hero_cell(homes)
        self.hero_cell = c
        self.hero_id = str(len(self.charger_sites) + len(homes) + 1)
        self.hero_path = [c]
        self._spawned_clean: list[int] = []
        self._clean_spawn_cells()
        self.step_no = 0
        self.battery = self.battery_max
        self.score = 0
        self.charge_count = 0
        self.in_charger = False
        self.collided = False
        self.fail_reason: str | None = None
        self._score_shown = 0
        self._cleaned_now: list = []
        self._chargers_wire = self._charger_organs()
        self._legal = [True] * NUM_ACTIONS if self.legal_action_type == "bool" else [1] * NUM_ACTIONS
        self._started = True
        self._done = False
        self.answered_error = None
        return self._env_obs(False, False)

    def _clean_spawn_cells(self) -> None:
        """hero_spawn_cell / npc_spawn_cell "cleaned": the spawn cells start clean (remembered, so
        that `place` can give a moved spawn back its dirt)."""
        state = self.cell_state
        for c in self._spawned_clean:
            if not self.charger_flags[c]:
                state[CELL_PAD[c]] = CELL_DIRT
        cells = ([self.hero_cell] if self.hero_spawn_cell == "cleaned" else []) + \
            (list(self.npc_cells) if self.npc_spawn_cell == "cleaned" else [])
        self._spawned_clean = [c for c in cells if state[CELL_PAD[c]] == CELL_DIRT]
        for c in self._spawned_clean:
            state[CELL_PAD[c]] = CELL_CLEAN

    def _npc_homes(self, count: int) -> list[tuple[int, int]]:
        """The official robots' spawn cells: the map's spawn points (npc_spawns "map") or random
        road cells off the chargers whose 21x21 squares do not overlap (x or z more than 20
        apart); a robot with no such cell in SPAWN_TRIES draws takes any road cell off the
        chargers and the other robots."""
        rnd, game_map, flags = self._random, self.map, self.charger_flags
        homes: list[tuple[int, int]] = []
        if self.npc_spawns == "map" and game_map.npc_spawns:
            points = list(game_map.npc_spawns)
            rnd.shuffle(points)
            homes = points[:count]
        road = game_map.road_cells
        while len(homes) < count:
            for _ in range(SPAWN_TRIES):
                c = rnd.choice(road)
                x, z = CELL_X[c], CELL_Z[c]
                if not flags[c] and all(max(abs(x - hx), abs(z - hz)) > 2 * NPC_RADIUS for hx, hz in homes):
                    break
            else:
                taken = {z * GRID_SIZE + x for x, z in homes}
                c = rnd.choice([c for c in road if not flags[c] and c not in taken])
            homes.append((CELL_X[c], CELL_Z[c]))
        return homes

    def _hero_cell(self, homes) -> int:
        """A random road cell off the chargers more than 5 cells (hero_spawn_distance) from every
        official robot's spawn point; after HERO_SPAWN_TRIES draws, the farthest such cell."""
        rnd, flags, road = self._random, self.charger_flags, self.map.road_cells
        euclid = self.hero_spawn_distance == "euclidean"

        def gap(c):
            x, z = CELL_X[c], CELL_Z[c]
            if euclid:
                return min(((x - hx) ** 2 + (z - hz) ** 2) ** 0.5 for hx, hz in homes)
            return min(max(abs(x - hx), abs(z - hz)) for hx, hz in homes)

        for _ in range(HERO_SPAWN_TRIES):
            c = rnd.choice(road)
            if not flags[c] and gap(c) > HERO_SPAWN_CLEARANCE:
                return c
        return max((c for c in road if not flags[c]), key=gap)

    def _charger_organs(self) -> list[tuple]:
        """(config_id, x, z) of each active charger as the wire shows it (charger_pos)."""
        shift = CHARGER_SIZE // 2 if self.charger_pos == "centre" else 0
        return [(i + 1, self.map.chargers[i][0] + shift, self.map.chargers[i][1] + shift) for i in self.charger_sites]

    def place(self, hero=None, npcs=None, battery=None) -> dict:
        """Rearrange the episode just reset (scenarios for tests and pictures): `hero` (x, z) a
        road cell; `npcs` a list of (x, z) road cells, each its own spawn point (the square's
        centre); `battery` the hero's battery. The spawn-cell rules apply to the new cells.
        Returns the env_obs of the arranged step 0."""
        if self._done or self.step_no != 0:
            raise EpisodeOverError("place() arranges a freshly reset episode (step 0)")
        for cell in ([hero] if hero else []) + list(npcs or []):
            if not self.map.is_walkable(*cell):
                raise ValueError(f"cell {cell} is not a road cell of {self.map.name}")
        if npcs is not None:
            self.npc_homes = [tuple(cell) for cell in npcs]
            self.npc_cells = [z * GRID_SIZE + x for x, z in self.npc_homes]
            self.npc_ids = [str(len(self.charger_sites) + i + 1) for i in range(len(npcs))]
            self.npc_paths = [[c] for c in self.npc_cells]
            self.hero_id = str(len(self.charger_sites) + len(npcs) + 1)
        if hero is not None:
            self.hero_cell = hero[1] * GRID_SIZE + hero[0]
            self.hero_path = [self.hero_cell]
        if battery is not None:
            self.battery = int(battery)
        self._clean_spawn_cells()
        return self._env_obs(False, False)

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
        if type(act) is not int or not 0 <= act < NUM_ACTIONS:
            act = checked_action(act, NUM_ACTIONS, ACTION_HELP)
        state = self.cell_state
        # 1. the hero's move (a blocked move stays put, and still costs the step and the battery)
        c = self.moves[self.hero_cell * 8 + act]
        self.hero_cell = c
        self.hero_path.append(c)
        step = self.step_no = self.step_no + 1
        # 2. the hero cleans its cell
        p = CELL_PAD[c]
        hx, hz = CELL_X[c], CELL_Z[c]
        if state[p] == CELL_DIRT:
            state[p] = CELL_CLEAN
            self.score += 1
            cleaned = [{"x": hx, "z": hz}]
        else:
            cleaned = []
        # 3. battery, then the charger's refill (a hero on battery 1 stepping onto a charger lives)
        self.battery -= 1
        if self.charger_flags[c]:
            if not self.in_charger:
                self.in_charger = True
                self.charge_count += 1
            self.battery = self.battery_max
        else:
            self.in_charger = False
        # 4. contact right after the hero's move (collision_check "before_and_after")
        collided = self.collision_check == "before_and_after" and self._touching(hx, hz)
        # 5. the official robots move and clean
        if self.npc_cells:
            self._move_npcs(cleaned if self.step_cleaned_cells == "hero_and_npcs" else None)
        # 6. contact after the robots' moves
        collided = collided or self._touching(hx, hz)
        self.collided = collided
        # 7. the battery, the step limit
        failed = collided or self.battery <= 0
        if failed and self.fail_reason is None:
            self.fail_reason = "collision" if collided else "battery"
        truncated = step >= self.max_step
        terminated = failed and not truncated
        self._done = terminated or truncated
        self._cleaned_now = cleaned
        previous = self._score_shown
        env_obs = self._env_obs(terminated, truncated)
        reward = self.score - previous if self.reward_value == "delta" else self.score
        self._score_shown = self.score
        return {"env_id": self.env_id, "frame_no": step, "reward": float(reward)}, env_obs

    def _touching(self, hx: int, hz: int) -> bool:
        for n in self.npc_cells:
            if abs(CELL_X[n] - hx) <= COLLISION_RANGE and abs(CELL_Z[n] - hz) <= COLLISION_RANGE:
                return True
        return False

    def _move_npcs(self, cleaned: list | None) -> None:
        """Each official robot in order: up to npc_tries random directions (npc_moves); a try moves
        it when its cell is walkable (the diagonal rule for a diagonal), inside its 21x21 square,
        not held by another robot and (npc_on_chargers "avoided") not a charger cell; with none it
        stays. It cleans the cell it ends on (no score); `cleaned` collects those cells."""
        moves, cells, state, homes = self.moves, self.npc_cells, self.cell_state, self.npc_homes
        rand = self._random.random
        actions = NPC_ACTIONS[self.npc_moves]
        k = len(actions)
        tries = self.npc_tries
        flags = self.charger_flags if self.npc_on_chargers == "avoided" else None
        for i, c in enumerate(cells):
            ox, oz = homes[i]
            for _ in range(tries):
                t = moves[c * 8 + actions[int(rand() * k)]]
                if t == c or abs(CELL_X[t] - ox) > NPC_RADIUS or abs(CELL_Z[t] - oz) > NPC_RADIUS:
                    continue
                if t in cells or (flags is not None and flags[t]):
                    continue
                c = cells[i] = t
                break
            self.npc_paths[i].append(c)
            p = CELL_PAD[c]
            if state[p] == CELL_DIRT:
                state[p] = CELL_CLEAN
                if cleaned is not None:
                    cleaned.append({"x": CELL_X[c], "z": CELL_Z[c]})

    # ---- observation -----------------------------------------------------------------------------

    def _env_obs(self, terminated: bool, truncated: bool) -> dict:
        c = self.hero_cell
        hx, hz = CELL_X[c], CELL_Z[c]
        step, score, battery = self.step_no, self.score, self.battery
        hidden = self.npc_out_of_view == "hidden"
        obs_npcs, all_npcs = [], []
        for i, n in enumerate(self.npc_cells):
            nx, nz = CELL_X[n], CELL_Z[n]
            seen = 1 if abs(nx - hx) <= VIEW_RADIUS and abs(nz - hz) <= VIEW_RADIUS else 0
            all_npcs.append({"npc_id": self.npc_ids[i], "pos": {"x": nx, "z": nz}, "idx": i + 1, "is_in_view": seen})
            if seen or not hidden:
                obs_npcs.append({"npc_id": self.npc_ids[i], "pos": {"x": nx, "z": nz}, "idx": i + 1,
                                 "is_in_view": seen})
            else:
                obs_npcs.append({"npc_id": self.npc_ids[i], "pos": {"x": HIDDEN_POS[0], "z": HIDDEN_POS[1]},
                                 "idx": i + 1, "is_in_view": 0})
        organs = self._chargers_wire
        legal = self._legal[:]
        observation = {
            "step_no": step,
            "frame_state": {
                "frame_no": step,
                "heroes": {"hero_id": self.hero_id, "pos": {"x": hx, "z": hz}, "battery": battery,
                           "battery_max": self.battery_max, "score": score, "dirt_cleaned": score},
                "npcs": obs_npcs,
                "organs": [{"sub_type": SUB_TYPE_CHARGER, "config_id": i, "pos": {"x": x, "z": z}, "w": CHARGER_SIZE,
                            "h": CHARGER_SIZE} for i, x, z in organs],
            },
            "env_info": {
                "total_score": score, "step_no": step, "clean_score": score, "total_dirt": self.total_dirt,
                "battery_max": self.battery_max, "remaining_charge": battery, "charge_count": self.charge_count,
                "total_charger": len(organs), "npc_count": len(all_npcs), "pos": {"x": hx, "z": hz},
                "total_map": self._total_map, "map_random": int(self.conf.map_random), "max_step": self.max_step,
                "finished_steps": step, "step_cleaned_cells": self._cleaned_now,
            },
            "map_info": self._view[hz:hz + VIEW_SIZE, hx:hx + VIEW_SIZE].tolist(),
        }
        key = self.legal_action_key
        if key == "both":
            observation["legal_action"] = legal
            observation["legal_act"] = legal[:]
        else:
            observation[key] = legal
        if self._extra_info == "full":
            extra_info = {
                "frame_state": {
                    "frame_no": step,
                    "heroes": {"hero_id": self.hero_id, "pos": {"x": hx, "z": hz}, "battery": battery,
                               "battery_max": self.battery_max, "score": score, "dirt_cleaned": score},
                    "npcs": all_npcs,
                    "organs": [{"sub_type": SUB_TYPE_CHARGER, "config_id": i, "pos": {"x": x, "z": z},
                                "w": CHARGER_SIZE, "h": CHARGER_SIZE} for i, x, z in organs],
                },
                "map_id": self.map_id, "result_code": 0, "result_message": "",
            }
        else:
            extra_info = {"result_code": 0, "result_message": ""}
        return {"env_id": self.env_id, "frame_no": step, "observation": observation, "extra_info": extra_info,
                "terminated": terminated, "truncated": truncated}

    # ---- what a full-information policy and the pictures read ------------------------------------

    def dirt_grid(self) -> np.ndarray:
        """The map's cells now [z, x]: 0 blocked, 1 clean, 2 dirt (a copy)."""
        return self._view[VIEW_RADIUS:VIEW_RADIUS + GRID_SIZE, VIEW_RADIUS:VIEW_RADIUS + GRID_SIZE].copy()

    def is_dirty(self, c: int) -> bool:
        """Whether flat cell c is dirt now."""
        return self.cell_state[CELL_PAD[c]] == CELL_DIRT

    def on_charger(self, c: int) -> bool:
        """Whether flat cell c is under an active charger."""
        return bool(self.charger_flags[c])
