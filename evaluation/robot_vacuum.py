"""Evaluation of robot_vacuum packages (games.robot_vacuum's evaluation side): an episode's record,
a 13.0.1 checkpoint playing with its own exploit on the raw env_obs, the simulator's
full-information reference on the same episodes, and the episode's pictures (the simulator's map
picture, the hero's 21×21 views).

The game has no chests, buffs or flashes: a record's `chests`, `chests_available`, `buff_count`
and `flash_count` are 0, as the episode runner's score of the vacuum protocol has them
(episodes.protocol); its score is the cells the hero cleaned, and the record adds the map's dirt
(`total_dirt`), the charges and how an episode that ended early ended (`ended_by`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation import engine_play
from evaluation.engine_play import paint_cells, play_episode
from evaluation.records import GameEpisode
from games.base import Rendering


@dataclass
class VacuumEpisode(GameEpisode):
    """One finished episode; `won`: survived to max_step (battery left, no official robot touched)."""

    total_dirt: int = 0  # dirty cells at reset (road off the active chargers)
    charges: int = 0  # times the hero entered a charger
    ended_by: str = ""  # "battery" | "collision" when it ended before max_step, else ""


def play(env, usr_conf: dict, seed: int, choose, on_step=None) -> VacuumEpisode:
    """One episode (evaluation.engine_play.play_episode: `choose(env_obs)` gives each action,
    `on_step(env_obs, act)` sees each) as its record."""
    env_obs, actions = play_episode(env, usr_conf, seed, choose, on_step)
    info = env_obs["observation"]["env_info"]
    return VacuumEpisode(seed=int(seed), usr_conf=usr_conf, total_score=float(info["total_score"]),
                         won=bool(env_obs["truncated"]), chests=0, chests_available=0, steps=int(info["step_no"]),
                         buff_count=0, flash_count=0, actions=actions, total_dirt=int(info["total_dirt"]),
                         charges=int(info["charge_count"]),
                         ended_by=(env.fail_reason or "") if env_obs["terminated"] else "")


class AgentPolicy(engine_play.AgentPolicy):
    """A checkpoint of a 13.0.1 package playing with its own exploit (evaluation.engine_play)."""

    episode = staticmethod(play)


class ReferencePolicy(engine_play.ReferencePolicy):
    """The simulator's full-information reference policy (realm.robot_vacuum.reference), seeded
    with the episode seed, on the same episodes."""

    episode = staticmethod(play)
    reference = "realm.robot_vacuum.reference"


def play_and_draw(game, env, policy, usr_conf: dict, seed: int, title: str, options) -> Rendering:
    """The simulator's picture of the episode's end (realm.robot_vacuum.render: the map with the
    dirt left, the chargers, the official robots' squares and paths, the hero's trail) as the PNG;
    the hero's 21×21 views with the chargers and the robots in them as the GIF frames
    (evaluation.engine_play)."""
    return engine_play.play_and_draw(env, policy, usr_conf, seed, options, "realm.robot_vacuum.render",
                                     lambda env_obs, scale: view_picture(env_obs, scale, charger_anchor_of(env)))


def charger_anchor_of(env) -> int:
    """How far a charger's pos lies from its footprint's top-left cell: 0 (the env's charger_pos
    top_left) or the centre's offset."""
    from realm.robot_vacuum.constants import CHARGER_SIZE

    return 0 if env.charger_pos == "top_left" else CHARGER_SIZE // 2


WALL, FLOOR, DIRT = (60, 60, 60), (250, 250, 250), (204, 191, 242)
HERO, ROBOT, CHARGER = (40, 90, 220), (220, 40, 40), (40, 160, 70)


def view_picture(env_obs: dict, scale: int, charger_anchor: int = 0) -> np.ndarray:
    """The hero's 21×21 map_info (blocked, clean, dirt) with the chargers' cells, the official
    robots in view and the hero. `charger_anchor`: how far a charger's pos lies from its
    footprint's top-left cell (0: the top-left, 1: the centre; the env's charger_pos)."""
    observation = env_obs["observation"]
    grid = np.array(observation["map_info"], dtype=np.uint8)
    palette = np.array((WALL, FLOOR, DIRT), dtype=np.uint8)
    image = palette[np.minimum(grid, 2)].repeat(scale, 0).repeat(scale, 1)
    frame = observation["frame_state"]
    hero = frame["heroes"]["pos"]
    radius = grid.shape[0] // 2

    def local(x, z):
        x, z = x - hero["x"] + radius, z - hero["z"] + radius
        return (x, z) if 0 <= x < grid.shape[1] and 0 <= z < grid.shape[0] else None

    for organ in frame.get("organs", []):
        left, top = organ["pos"]["x"] - charger_anchor, organ["pos"]["z"] - charger_anchor
        cells = [local(left + dx, top + dz) for dz in range(organ.get("h", 1)) for dx in range(organ.get("w", 1))]
        paint_cells(image, [c for c in cells if c is not None], CHARGER, scale)
    for npc in frame.get("npcs", []):
        cell = local(npc["pos"]["x"], npc["pos"]["z"]) if npc.get("is_in_view") else None
        if cell is not None:
            paint_cells(image, [cell], ROBOT, scale)
    paint_cells(image, [(radius, radius)], HERO, scale)
    return image


# --- recordings (evaluation.recording) -------------------------------------------------------------

def recorded_world(env) -> dict:
    """The map (rows z = 0 down to 127: z grows downward, as the game draws it), the hero's
    spawn, the 21×21 view's radius, the map's name; no chests or buffs. Beside them, what this
    game has: the active chargers' top-left cells and their side (`chargers`, `charger_size`)."""
    from evaluation.recording import grid_rows
    from realm.robot_vacuum.constants import CHARGER_SIZE, VIEW_RADIUS
    from realm.robot_vacuum.maps import CELL_X, CELL_Z

    spawn = env.hero_path[0]
    return {"rows": grid_rows(env.map.walkable), "z_up": False, "view_radius": VIEW_RADIUS,
            "start": [CELL_X[spawn], CELL_Z[spawn]], "end": None, "chests": [], "buffs": [],
            "chargers": [list(env.map.chargers[i]) for i in env.charger_sites], "charger_size": CHARGER_SIZE,
            "map_name": str(env.map.name)}


def recorded_state(env) -> dict:
    """The hero's cell, the official robots' cells (as `monsters`, the viewer's name for the
    hero's dangers), no chests or buffs, and the battery."""
    from realm.robot_vacuum.maps import CELL_X, CELL_Z

    return {"hero": [CELL_X[env.hero_cell], CELL_Z[env.hero_cell]],
            "monsters": [[CELL_X[c], CELL_Z[c]] for c in env.npc_cells], "chests": [], "buffs": [],
            "battery": int(env.battery)}
