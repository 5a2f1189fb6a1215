"""RealmV2GymEnv: back_to_the_realm_v2 behind gymnasium's API (`realm/BackToTheRealmV2-v0`), so that
off-the-shelf RL code can use the game. It sees what a package sees (the local observation):

- observation (Dict): `map_info` int8 view_size x view_size, row i column j the cell
  (x - r + i, z - r + j) as the wire has it (0 blocked, 1 passable, 2 start, 3 end, 4 chest,
  6 buff); `hero` [x, z, speed_up, talent ready, talent cooldown, buff_remain_time]; `organs`
  16 rows, the chests in treasure order, then the buff, the start and the end: [present,
  sub_type, config_id, status, x, z, cooldown, relative direction 0..8, relative distance 0..5]
  (status -1 and x, z = -1 outside the view, as on the wire); `legal_act` 2 x {0, 1};
  `progress` [step_no / max_step];
- action: Discrete(16), act = move direction + 8 * use talent;
- reward: the change of game_info's total_score (the chest score during the episode, the final
  score at its end, 0 after a timeout: the rewards of an episode sum to its total_score);
- terminated: the hero reached the end; truncated: max_step reached; info: game_info without its
  map_info (plain values).

Constructor: the map and rules as `realm.make_env(protocol="v2", ...)` takes them (`map_file` with
`obstacles_file`, `maps_folder`, else the generated map of `map_seed` through `map_name`'s points;
`seed`; randomize_rules and realm.back_to_the_realm_v2.env.OPTIONS; view_size fixes map_info's shape), `usr_conf`
the episode settings used when `reset` gets none. `reset(options={"usr_conf": {...}})` sets one
episode's. `game` is the underlying RealmEnvV2.
"""
from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from realm.back_to_the_realm_v2.constants import (
    BUFF_COOLDOWN_RANGE,
    CELL_BUFF,
    GRID_SIZE,
    MAX_STEP_RANGE,
    MAX_TREASURES,
    NUM_ACTIONS,
    TALENT_COOLDOWN_RANGE,
)
from realm.back_to_the_realm_v2.env import RealmEnvV2
from realm.back_to_the_realm_v2.protocol import RELATIVE_DIRECTION, RELATIVE_DISTANCE

MAX_ORGANS = MAX_TREASURES + 3  # the chests, the buff, the start and the end
ORGAN_FIELDS = 9
HERO_FIELDS = 6
#: the largest number a hero or organ field holds: a cooldown, a buff's remaining steps
LARGEST = float(max(BUFF_COOLDOWN_RANGE[1], TALENT_COOLDOWN_RANGE[1], MAX_STEP_RANGE[1], GRID_SIZE))
RESET_OPTIONS = ("usr_conf",)


def observation_space(view_size: int) -> spaces.Dict:
    """The Dict space of the observations of an env serving `view_size` x `view_size` views."""
    return spaces.Dict({
        "map_info": spaces.Box(0, CELL_BUFF, (view_size, view_size), dtype=np.int8),
        "hero": spaces.Box(0.0, LARGEST, (HERO_FIELDS,), dtype=np.float32),
        "organs": spaces.Box(-1.0, LARGEST, (MAX_ORGANS, ORGAN_FIELDS), dtype=np.float32),
        "legal_act": spaces.MultiBinary(2),
        "progress": spaces.Box(0.0, 1.0, (1,), dtype=np.float32),
    })


def to_gym_observation(obs: dict, max_step: int) -> dict[str, np.ndarray]:
    """A v2 obs as fresh numpy arrays with exactly the dtypes of `observation_space`."""
    frame = obs["frame_state"]
    hero = frame["heroes"][0]
    talent = hero["talent"]
    organs = np.zeros((MAX_ORGANS, ORGAN_FIELDS), dtype=np.float32)
    for i, organ in enumerate(frame["organs"][:MAX_ORGANS]):
        relative = organ["relative_pos"]
        organs[i] = (1, organ["sub_type"], organ["config_id"], organ["status"], organ["pos"]["x"], organ["pos"]["z"],
                     organ["cooldown"], RELATIVE_DIRECTION[relative["direction"]],
                     RELATIVE_DISTANCE[relative["l2_distance"]])
    return {
        "map_info": np.array([row["values"] for row in obs["map_info"]], dtype=np.int8),
        "hero": np.array([hero["pos"]["x"], hero["pos"]["z"], hero["speed_up"], talent["status"], talent["cooldown"],
                          hero["buff_remain_time"]], dtype=np.float32),
        "organs": organs,
        "legal_act": np.array(obs["legal_act"], dtype=np.int8),
        "progress": np.array([min(1.0, frame["step_no"] / max_step)], dtype=np.float32),
    }


def _info(extra_info: dict) -> dict:
    """game_info as plain values of its own (the env shares dicts between steps), without its
    map_info (the observation has it)."""
    return copy.deepcopy({key: value for key, value in extra_info["game_info"].items() if key != "map_info"})


class RealmV2GymEnv(gym.Env):
    """One hero on one v2 map, as a gymnasium env (see the module docstring for the API)."""

    metadata = {"render_modes": []}

    def __init__(self, map_file=None, obstacles_file=None, map_seed: int = 0, *, seed: int | None = None,
                 usr_conf: dict | None = None, **rules):
        from realm import make_env

        self.game: RealmEnvV2 = make_env(map_file, map_seed=map_seed, protocol=RealmEnvV2.PROTOCOL,
                                         obstacles_file=obstacles_file, seed=seed, **rules)
        self.usr_conf = usr_conf
        self.observation_space = observation_space(self.game.view_size)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._total_score = 0.0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        for key in options or {}:
            if key not in RESET_OPTIONS:
                raise ValueError(f"unknown reset option {key!r}; allowed: {', '.join(RESET_OPTIONS)}")
        usr_conf = (options or {}).get("usr_conf", self.usr_conf)
        obs, extra_info = self.game.reset(usr_conf, seed=seed)
        self._total_score = float(extra_info["game_info"]["total_score"])
        return to_gym_observation(obs, self.game.episode.max_step), _info(extra_info)

    def step(self, action):
        _, obs, terminated, truncated, extra_info = self.game.step(int(action))
        total = float(extra_info["game_info"]["total_score"])
        reward, self._total_score = total - self._total_score, total
        return (to_gym_observation(obs, self.game.episode.max_step), reward, bool(terminated), bool(truncated),
                _info(extra_info))

