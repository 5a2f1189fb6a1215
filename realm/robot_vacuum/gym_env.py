"""RobotVacuumGymEnv: the simulator behind gymnasium's API (`realm/RobotVacuum-v0`), so that
off-the-shelf RL code can use the game. It sees what a package sees (the local observation):

- observation (Dict): `map_info` int8 21x21 (0 blocked, 1 clean, 2 dirt); `hero` [x, z,
  battery, battery_max]; `npcs` 4 rows [present, is_in_view, x, z] (out of view x, z = -1 as on
  the wire); `chargers` 4 rows [present, x, z] (OrganState.pos); `legal_action` 8 x {0, 1};
  `progress` [step_no / max_step, dirt_cleaned / total_dirt];
- action: Discrete(8); reward: env_reward's reward (the step's cleaned cells with the default
  reward_value); terminated: a collision or an empty battery; truncated: max_step reached;
  info: env_info.

Constructor: the maps and rules as `realm.make_env(protocol="vacuum", ...)` takes them
(`maps_folder` for the official map files, else the generated maps of `map_seed`; `seed`; map_id,
errors and the options of realm.robot_vacuum.options.OPTIONS), `usr_conf` the episode settings
used when `reset` gets none. `reset(options={"usr_conf": {...}})` sets one episode's.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from realm.robot_vacuum.constants import (
    BATTERY_MAX_RANGE,
    CELL_DIRT,
    GRID_SIZE,
    MAX_CHARGERS,
    MAX_ROBOTS,
    NUM_ACTIONS,
    VIEW_SIZE,
)
from realm.robot_vacuum.env import RobotVacuumEnv

RESET_OPTIONS = ("usr_conf",)


class RobotVacuumGymEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, maps_folder=None, map_seed: int = 0, *, seed: int | None = None, usr_conf: dict | None = None,
                 **rules):
        from realm import make_env

        self.env: RobotVacuumEnv = make_env(map_seed=map_seed, protocol=RobotVacuumEnv.PROTOCOL,
                                            maps_folder=maps_folder, seed=seed, **rules)
        self.usr_conf = usr_conf
        big = float(GRID_SIZE)
        self.observation_space = spaces.Dict({
            "map_info": spaces.Box(0, CELL_DIRT, (VIEW_SIZE, VIEW_SIZE), dtype=np.int8),
            "hero": spaces.Box(0.0, float(BATTERY_MAX_RANGE[1]), (4,), dtype=np.float32),
            "npcs": spaces.Box(-1.0, big, (MAX_ROBOTS, 4), dtype=np.float32),
            "chargers": spaces.Box(0.0, big, (MAX_CHARGERS, 3), dtype=np.float32),
            "legal_action": spaces.MultiBinary(NUM_ACTIONS),
            "progress": spaces.Box(0.0, 1.0, (2,), dtype=np.float32),
        })
        self.action_space = spaces.Discrete(NUM_ACTIONS)

    def _convert(self, env_obs: dict) -> dict:
        o = env_obs["observation"]
        fs = o["frame_state"]
        h = fs["heroes"]
        npcs = np.zeros((MAX_ROBOTS, 4), dtype=np.float32)
        for i, n in enumerate(fs["npcs"][:MAX_ROBOTS]):
            npcs[i] = (1, n["is_in_view"], n["pos"]["x"], n["pos"]["z"])
        chargers = np.zeros((MAX_CHARGERS, 3), dtype=np.float32)
        for i, g in enumerate(fs["organs"][:MAX_CHARGERS]):
            chargers[i] = (1, g["pos"]["x"], g["pos"]["z"])
        info = o["env_info"]
        legal = o.get("legal_action", o.get("legal_act"))
        return {
            "map_info": np.asarray(o["map_info"], dtype=np.int8),
            "hero": np.array([h["pos"]["x"], h["pos"]["z"], max(h["battery"], 0), h["battery_max"]], dtype=np.float32),
            "npcs": npcs,
            "chargers": chargers,
            "legal_action": np.asarray(legal, dtype=np.int8),
            "progress": np.array([min(1.0, info["step_no"] / info["max_step"]),
                                  min(1.0, h["dirt_cleaned"] / max(info["total_dirt"], 1))], dtype=np.float32),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        for key in options or {}:
            if key not in RESET_OPTIONS:
                raise ValueError(f"unknown reset option {key!r}; allowed: {', '.join(RESET_OPTIONS)}")
        usr_conf = (options or {}).get("usr_conf", self.usr_conf)
        env_obs = self.env.reset(usr_conf, seed=seed)
        return self._convert(env_obs), dict(env_obs["observation"]["env_info"])

    def step(self, action):
        env_reward, env_obs = self.env.step(int(action))
        return (self._convert(env_obs), float(env_reward["reward"]), bool(env_obs["terminated"]),
                bool(env_obs["truncated"]), dict(env_obs["observation"]["env_info"]))
