"""RealmGymEnv: the simulator behind gymnasium's API (`realm/BackToTheRealm-v0`).

The Kaiwu protocol's data classes become a Dict of numpy arrays so that off-the-shelf RL code
(vector envs, wrappers, replay buffers) can use the game unchanged:

- observation: the four 51×51 local maps, the feature fields as small arrays, `legal_act`;
- action: Discrete(16), 0..7 move in direction d × 45°, 8..15 flash in direction act − 8;
- reward: the change of the game's `total_score` in the step. `total_score` is the running chest
  score until the episode ends, then the final score (end bonus + step bonus + chests, or 0 on a
  timeout), so the rewards of an episode sum to the game's final score (up to float rounding);
  a timeout hands back the chest score collected so far as one negative reward;
- terminated: the hero reached the end; truncated: `max_step` steps were used (the game's own
  limit from `usr_conf`);
- info: env_info and score flattened into plain values (see `_info`).

Every observation and info is built fresh, so the caller may keep or modify what it gets.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from realm.back_to_the_realm.constants import (
    CELL_WIDTH,
    GRID_DISTANCE_SCALE,
    GRID_SIZE,
    MS_PER_STEP,
    NULL_BUCKET,
    NUM_ACTIONS,
    NUM_TREASURE_SLOTS,
    ORIGIN_X,
    ORIGIN_Z,
    VIEW_SIZE,
    WORLD_SIZE,
)
from realm import make_env
from realm.back_to_the_realm.env import EpisodeOverError, RealmEnv
from realm.back_to_the_realm.protocol import EnvInfo, EpisodeConfig, Observation, RelativePosition, as_grid
from realm.back_to_the_realm.render import render_episode
from realm.back_to_the_realm.usr_conf import parse_usr_conf

MAP_KEYS = ("obstacle_map", "memory_map", "treasure_map", "end_map")
RELATIVE_KEYS = ("start_pos", "end_pos", "buff_pos")
RESET_OPTIONS = ("usr_conf",)

Point = tuple[float, float]


def _relative_space(*leading: int) -> spaces.Box:
    """[direction 0..8, l2 bucket 1..5, path bucket 1..5, grid_distance] per RelativePosition.

    grid_distance is a BFS path length in cells ÷ 256; a path visits each of the 128×128 cells at
    most once, so 64 bounds it on any map (the official map 1 stays below 1).
    """
    low = np.broadcast_to(np.array([0, 1, 1, 0], dtype=np.float32), (*leading, 4))
    high = np.broadcast_to(
        np.array([8, NULL_BUCKET, NULL_BUCKET, GRID_SIZE * GRID_SIZE / GRID_DISTANCE_SCALE], dtype=np.float32), (*leading, 4)
    )
    return spaces.Box(low=low.copy(), high=high.copy(), dtype=np.float32)


def observation_space() -> spaces.Dict:
    """The Dict space of `RealmGymEnv` observations (the same for every map)."""
    # The hero always stands on one of the grid's cells, so norm_pos stays inside the grid's extent.
    low = np.array([ORIGIN_X, ORIGIN_Z], dtype=np.float64) / WORLD_SIZE
    high = low + GRID_SIZE * CELL_WIDTH / WORLD_SIZE
    fields: dict[str, spaces.Space] = {
        "norm_pos": spaces.Box(low=low.astype(np.float32), high=high.astype(np.float32), dtype=np.float32),
        "grid_pos": spaces.Box(low=0, high=GRID_SIZE - 1, shape=(2,), dtype=np.int64),
        **{key: _relative_space() for key in RELATIVE_KEYS},
        "treasure_pos": _relative_space(NUM_TREASURE_SLOTS),
        **{key: spaces.Box(low=0.0, high=1.0, shape=(VIEW_SIZE, VIEW_SIZE), dtype=np.float32) for key in MAP_KEYS},
        "legal_act": spaces.MultiBinary(2),
    }
    return spaces.Dict(fields)


def _relative(rp: RelativePosition) -> tuple[float, float, float, float]:
    return (rp.direction, rp.l2_distance, rp.path_distance, rp.grid_distance)


def to_gym_observation(obs: Observation) -> dict[str, np.ndarray]:
    """A protocol Observation as fresh numpy arrays with exactly the dtypes of `observation_space()`.

    The env shares read-only arrays between steps; copies keep every returned dict independent.
    """
    f = obs.feature
    return {
        "norm_pos": np.array([f.norm_pos.x, f.norm_pos.z], dtype=np.float32),
        "grid_pos": np.array([f.grid_pos.x, f.grid_pos.z], dtype=np.int64),  # axis-swapped: (zc, xc)
        "start_pos": np.array(_relative(f.start_pos), dtype=np.float32),
        "end_pos": np.array(_relative(f.end_pos), dtype=np.float32),
        "buff_pos": np.array(_relative(f.buff_pos), dtype=np.float32),
        "treasure_pos": np.array([_relative(rp) for rp in f.treasure_pos], dtype=np.float32),
        "obstacle_map": as_grid(f.obstacle_map),
        "memory_map": as_grid(f.memory_map),
        "treasure_map": as_grid(f.treasure_map),
        "end_map": as_grid(f.end_map),
        "legal_act": np.array(obs.legal_act, dtype=np.int8),
    }


class RealmGymEnv(gym.Env):
    """One hero on one map, as a gymnasium env (see the module docstring for the API).

    Constructor: the map and rules as `realm.make_env` takes them (map_file + positions_file for
    the official map, else the generated map of map_seed; flash_blocked, step_jitter, seed),
    `usr_conf` the episode settings used when `reset` gets none ({"diy": {...}}, SPEC §3),
    `render_mode` None or "rgb_array", `render_scale` pixels per map cell of the picture.

    `reset(seed=s)` restarts the episode RNG (random chests, step jitter) from s, so the same seed
    replays the same episode, and the same one as `RealmEnv.reset(seed=s)`; `reset()` continues
    the RNG. `reset(options={"usr_conf": {...}})` sets one episode's settings.

    `game` is the underlying Kaiwu-protocol RealmEnv and `map` its Map (distance fields, positions),
    for planners and scripted heroes that need more than the observation.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1000 // MS_PER_STEP}

    def __init__(
        self,
        map_file=None,
        positions_file=None,
        map_seed: int = 0,
        *,
        render_mode: str | None = None,
        usr_conf: dict | None = None,
        render_scale: int = 4,
        **rules,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode = {render_mode!r} is invalid: allowed None | {' | '.join(self.metadata['render_modes'])}")
        parse_usr_conf(usr_conf, np.random.default_rng(0))  # a bad default fails here, not at the first reset
        self.game: RealmEnv = make_env(map_file, positions_file, map_seed, **rules)
        self.map = self.game.map
        self.usr_conf = usr_conf
        self.render_mode = render_mode
        self.render_scale = int(render_scale)
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._total_score = 0.0
        # What render() draws besides the map: the hero's positions this episode and its flash jumps.
        self._trail: list[Point] = []
        self._flashes: list[tuple[Point, Point]] = []
        self._talent_count = 0

    @property
    def episode(self) -> EpisodeConfig | None:
        """The current EpisodeConfig (start, end, chest ids, max_step), None before the first reset."""
        return self.game.episode

    @property
    def env_info(self) -> EnvInfo:
        """The latest protocol EnvInfo, for code that wants more than `info` holds."""
        return self.game.env_info

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        usr_conf = self.usr_conf
        if options:
            for key in options:
                if key not in RESET_OPTIONS:
                    raise ValueError(f"unknown reset option {key!r}; allowed: {', '.join(RESET_OPTIONS)}")
            usr_conf = options.get("usr_conf", usr_conf)
        obs = self.game.reset(usr_conf, seed=seed)
        env_info = self.game.env_info
        self._total_score = float(env_info.game_info.total_score)
        if self.render_mode is not None:
            pos = env_info.game_info.pos
            self._trail = [(pos.x, pos.z)]
            self._flashes = []
            self._talent_count = env_info.game_info.talent_count
        return to_gym_observation(obs), self._info(env_info)

    def step(self, action):
        _, obs, score, terminated, truncated, env_info = self.game.step(action)
        reward = float(score.total_score) - self._total_score
        self._total_score = float(score.total_score)
        if self.render_mode is not None:
            pos = env_info.game_info.pos
            self._trail.append((pos.x, pos.z))
            if score.talent_count > self._talent_count:  # a flash fired (one on cooldown is a walk)
                self._flashes.append((self._trail[-2], self._trail[-1]))
                self._talent_count = score.talent_count
        return to_gym_observation(obs), reward, bool(terminated), bool(truncated), self._info(env_info)

    def render(self):
        """The whole map (North up) with live and taken chests, the buff, start, end, the hero and its
        trail this episode, as a (128·render_scale, 128·render_scale, 3) uint8 array."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() was called without a render mode; pass render_mode='rgb_array' to the constructor "
                "(or gymnasium.make)."
            )
            return None
        if self.game.episode is None:
            raise EpisodeOverError("no episode yet: call reset() before render()")
        return render_episode(
            self.map, self.game.episode, self.game.env_info, scale=self.render_scale, trail=self._trail, flashes=self._flashes
        )

    def close(self):
        """Nothing to release (the simulator holds no files or processes); safe to call twice."""
        self._trail = []
        self._flashes = []

    def _info(self, env_info: EnvInfo) -> dict[str, Any]:
        """env_info and score as plain values: loggers and vector envs handle these, not data classes.

        Times are in ms, as the game reports them; pos is the hero's world (x, z).
        """
        game = env_info.game_info
        hero = env_info.frame_state.heroes[0]
        return {
            "frame_no": self.game.frame_no,
            "step_no": game.step_no,
            "pos": (float(game.pos.x), float(game.pos.z)),
            "score": float(game.score),
            "total_score": float(game.total_score),
            "treasure_count": game.treasure_count,
            "treasure_score": float(game.treasure_score),
            "buff_count": game.buff_count,
            "talent_count": game.talent_count,
            "speed_up": bool(hero.speed_up),
            "flash_ready": bool(hero.talent.status),
            "flash_cooldown": hero.talent.cooldown,
            "buff_remain_time": game.buff_remain_time,
            "buff_duration": game.buff_duration,
        }
