"""GorgeChaseGymEnv: the simulator behind gymnasium's API (`realm/GorgeChase-v0`), so that
off-the-shelf RL code can use the game. It sees what a package sees (the local observation):

- observation (Dict): `map_info` int8 21x21 (1 road); `hero` [x, z, flash_cooldown,
  buff_remaining_time]; `monsters` 2 rows [present, is_in_view, x, z, speed, hero_l2_distance,
  hero_relative_direction] (out-of-view x, z, speed = -1 as on the wire); `organs` 12 rows
  [present, sub_type, status, x, z, hero_l2_distance, hero_relative_direction] (in view only);
  `legal_action` 16 x {0, 1}; `progress` [step_no / max_step];
- action: Discrete(16); reward: the change of total_score; terminated: caught; truncated:
  max_step reached; info: env_info.

Constructor: the maps and rules as `realm.make_env(protocol="gorge", ...)` takes them
(`maps_folder` for the official map files, else the generated maps of `map_seed`; `seed`; map_id,
errors and the options of realm.gorge_chase.options.OPTIONS), `usr_conf` the episode settings
used when `reset` gets none. `reset(options={"usr_conf": {...}})` sets one episode's.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from realm.gorge_chase.constants import GRID_SIZE, NUM_ACTIONS, VIEW_SIZE
from realm.gorge_chase.env import GorgeChaseEnv

MAX_ORGANS = 12
RESET_OPTIONS = ("usr_conf",)


class GorgeChaseGymEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, maps_folder=None, map_seed: int = 0, *, seed: int | None = None, usr_conf: dict | None = None,
                 **rules):
        from realm import make_env

        self.env: GorgeChaseEnv = make_env(map_seed=map_seed, protocol=GorgeChaseEnv.PROTOCOL,
                                           maps_folder=maps_folder, seed=seed, **rules)
        self.usr_conf = usr_conf
        big = float(GRID_SIZE)
        self.observation_space = spaces.Dict({
            "map_info": spaces.Box(0, 1, (VIEW_SIZE, VIEW_SIZE), dtype=np.int8),
            "hero": spaces.Box(0.0, 2000.0, (4,), dtype=np.float32),
            "monsters": spaces.Box(-1.0, big, (2, 7), dtype=np.float32),
            "organs": spaces.Box(-1.0, big, (MAX_ORGANS, 7), dtype=np.float32),
            "legal_action": spaces.MultiBinary(NUM_ACTIONS),
            "progress": spaces.Box(0.0, 1.0, (1,), dtype=np.float32),
        })
        self.action_space = spaces.Discrete(NUM_ACTIONS)

    def _convert(self, env_obs: dict) -> dict:
        o = env_obs["observation"]
        fs = o["frame_state"]
        h = fs["heroes"]
        monsters = np.zeros((2, 7), dtype=np.float32)
        for i, m in enumerate(fs["monsters"][:2]):
            monsters[i] = (1, m["is_in_view"], m["pos"]["x"], m["pos"]["z"], m["speed"], m["hero_l2_distance"],
                           m["hero_relative_direction"])
        organs = np.zeros((MAX_ORGANS, 7), dtype=np.float32)
        for i, g in enumerate(fs["organs"][:MAX_ORGANS]):
            organs[i] = (1, g["sub_type"], g["status"], g["pos"]["x"], g["pos"]["z"], g["hero_l2_distance"],
                         g["hero_relative_direction"])
        info = o["env_info"]
        return {
            "map_info": np.asarray(o["map_info"], dtype=np.int8),
            "hero": np.array([h["pos"]["x"], h["pos"]["z"], h["flash_cooldown"], h["buff_remaining_time"]],
                             dtype=np.float32),
            "monsters": monsters,
            "organs": organs,
            "legal_action": np.asarray(o["legal_action"], dtype=np.int8),
            "progress": np.array([min(1.0, info["step_no"] / info["max_step"])], dtype=np.float32),
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
