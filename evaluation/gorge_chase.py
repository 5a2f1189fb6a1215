"""Evaluation of gorge_chase packages (games.gorge_chase's evaluation side): an episode's record,
a 15.0.1 checkpoint playing with its own exploit on the raw env_obs, the simulator's
full-information reference on the same episodes, and the episode's pictures (the simulator's map
picture, the hero's 21×21 views)."""
from __future__ import annotations

import numpy as np

from evaluation import engine_play
from evaluation.engine_play import paint_cells, play_episode
from evaluation.records import GameEpisode
from games.base import Rendering


class GorgeEpisode(GameEpisode):
    """One finished episode; `won`: survived to max_step (not caught)."""


def play(env, usr_conf: dict, seed: int, choose, on_step=None) -> GorgeEpisode:
    """One episode (evaluation.engine_play.play_episode: `choose(env_obs)` gives each action,
    `on_step(env_obs, act)` sees each) as its record."""
    env_obs, actions = play_episode(env, usr_conf, seed, choose, on_step)
    info = env_obs["observation"]["env_info"]
    return GorgeEpisode(seed=int(seed), usr_conf=usr_conf, total_score=float(info["total_score"]),
                        won=bool(env_obs["truncated"]), chests=int(info["treasures_collected"]),
                        chests_available=int(info["total_treasure"]), steps=int(info["step_no"]),
                        buff_count=int(info["collected_buff"]), flash_count=int(info["flash_count"]), actions=actions)


class AgentPolicy(engine_play.AgentPolicy):
    """A checkpoint of a 15.0.1 package playing with its own exploit (evaluation.engine_play)."""

    episode = staticmethod(play)


class ReferencePolicy(engine_play.ReferencePolicy):
    """The simulator's full-information reference policy (realm.gorge_chase.reference), seeded
    with the episode seed, on the same episodes."""

    episode = staticmethod(play)
    reference = "realm.gorge_chase.reference"


def play_and_draw(game, env, policy, usr_conf: dict, seed: int, title: str, options) -> Rendering:
    """The simulator's picture of the episode's end (realm.gorge_chase.render: the map, the
    hero's trail, the monsters' paths, flashes, chests and buffs) as the PNG; the hero's 21×21
    views with the monsters and items in them as the GIF frames (evaluation.engine_play)."""
    return engine_play.play_and_draw(env, policy, usr_conf, seed, options, "realm.gorge_chase.render", view_picture)


ROAD, WALL = (225, 220, 205), (60, 60, 60)
HERO, MONSTER, CHEST, BUFF = (40, 90, 220), (220, 40, 40), (240, 180, 20), (40, 180, 80)


def view_picture(env_obs: dict, scale: int) -> np.ndarray:
    """The hero's 21×21 map_info with the hero, the monsters and the items in view."""
    observation = env_obs["observation"]
    grid = np.array(observation["map_info"], dtype=bool)
    image = np.where(grid[..., None], np.array(ROAD, np.uint8), np.array(WALL, np.uint8)).astype(np.uint8)
    image = image.repeat(scale, 0).repeat(scale, 1)
    frame = observation["frame_state"]
    hero = frame["heroes"]["pos"]
    radius = grid.shape[0] // 2

    def local(pos):
        x, z = pos["x"] - hero["x"] + radius, pos["z"] - hero["z"] + radius
        return (x, z) if 0 <= x < grid.shape[1] and 0 <= z < grid.shape[0] else None

    from realm.gorge_chase.constants import SUB_TYPE_TREASURE

    for organ in frame.get("organs", []):
        cell = local(organ["pos"])
        if cell is not None:
            paint_cells(image, [cell], CHEST if organ["sub_type"] == SUB_TYPE_TREASURE else BUFF, scale)
    for monster in frame.get("monsters", []):
        cell = local(monster["pos"]) if monster.get("is_in_view") else None
        if cell is not None:
            paint_cells(image, [cell], MONSTER, scale)
    paint_cells(image, [(radius, radius)], HERO, scale)
    return image


# --- recordings (evaluation.recording) -------------------------------------------------------------

def recorded_world(env) -> dict:
    """The map (rows z = 0 down to 127: North = -z is up, as the game draws it), the hero's spawn,
    the chests and buffs as cells, the 21×21 view's radius, the map's name."""
    from evaluation.recording import grid_rows
    from realm.gorge_chase.constants import VIEW_RADIUS

    return {"rows": grid_rows(env.map.walkable), "z_up": False, "view_radius": VIEW_RADIUS,
            "start": list(env.hero_path[0]), "end": None, "chests": [[t[1], t[2]] for t in env.treasures],
            "buffs": [[b[1], b[2]] for b in env.buffs], "map_name": str(env.map.name)}


def recorded_state(env) -> dict:
    """The hero's and the monsters' cells, which chests and buffs are live."""
    return {"hero": [env.hero_x, env.hero_z], "monsters": [[m.x, m.z] for m in env.monsters],
            "chests": [bool(t[3]) for t in env.treasures], "buffs": [bool(b[3]) for b in env.buffs]}
