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

from evaluation.records import GameEpisode
from games.base import Rendering, frame_indices


@dataclass
class VacuumEpisode(GameEpisode):
    """One finished episode; `won`: survived to max_step (battery left, no official robot touched)."""

    total_dirt: int = 0  # dirty cells at reset (road off the active chargers)
    charges: int = 0  # times the hero entered a charger
    ended_by: str = ""  # "battery" | "collision" when it ended before max_step, else ""


def play(env, usr_conf: dict, seed: int, choose, on_step=None) -> VacuumEpisode:
    """One episode of `env` from reset(usr_conf, seed) to its end, `choose(env_obs)` giving each
    action; `on_step(env_obs, act)` sees each observation with the action chosen from it. A
    usr_conf the env refuses raises, whether the env raises or answers errors as the platform does."""
    from realm.episode import checked_reset

    env_obs = checked_reset(env, usr_conf, seed=seed)
    actions = []
    while not (env_obs["terminated"] or env_obs["truncated"]):
        act = int(choose(env_obs))
        if on_step is not None:
            on_step(env_obs, act)
        actions.append(act)
        _, env_obs = env.step(act)
    info = env_obs["observation"]["env_info"]
    return VacuumEpisode(seed=int(seed), usr_conf=usr_conf, total_score=float(info["total_score"]),
                         won=bool(env_obs["truncated"]), chests=0, chests_available=0, steps=int(info["step_no"]),
                         buff_count=0, flash_count=0, actions=actions, total_dirt=int(info["total_dirt"]),
                         charges=int(info["charge_count"]),
                         ended_by=(env.fail_reason or "") if env_obs["terminated"] else "")


class AgentPolicy:
    """A checkpoint of a 13.0.1 package playing with its own exploit (the platform's evaluation):
    its `reset(env_obs)` before each episode; its draws seeded with the episode seed."""

    def __init__(self, loaded, name: str = "agent", mode: str = "greedy"):
        self.loaded = loaded
        self.name = name

    def play(self, env, usr_conf: dict, seed: int, on_step=None) -> VacuumEpisode:
        from evaluation.episodes import seed_agent_draws

        agent, loaded = self.loaded.agent, self.loaded
        seed_agent_draws(agent, seed)
        started = []

        def choose(env_obs):
            if not started and callable(getattr(agent, "reset", None)):
                agent.reset(env_obs)
            started.append(True)
            return loaded.action_process(agent.exploit(loaded.observation_process(env_obs)))

        return play(env, usr_conf, seed, choose, on_step)


class ReferencePolicy:
    """The simulator's full-information reference policy (realm.robot_vacuum.reference), seeded
    with the episode seed, on the same episodes."""

    name = "planner"

    def play(self, env, usr_conf: dict, seed: int, on_step=None) -> VacuumEpisode:
        from realm.robot_vacuum.reference import ReferencePolicy as Reference

        reference = Reference(seed=seed)
        return play(env, usr_conf, seed, lambda env_obs: reference.act(env), on_step)


class Replay:
    """Plays a finished episode's actions again (the env repeats an episode for its seed), as the
    simulator's pictures (realm.robot_vacuum.render.record_episode) ask a policy: `act(env)`."""

    def __init__(self, actions: list):
        self._actions = iter(actions)

    def act(self, env) -> int:
        return next(self._actions)


def play_and_draw(game, env, policy, usr_conf: dict, seed: int, title: str, options) -> Rendering:
    """The simulator's picture of the episode's end (realm.robot_vacuum.render: the map with the
    dirt left, the chargers, the official robots' squares and paths, the hero's trail) as the PNG;
    the hero's 21×21 views with the chargers and the robots in them as the GIF frames."""
    import tempfile

    from PIL import Image

    from realm.robot_vacuum.constants import CHARGER_SIZE
    from realm.robot_vacuum.render import record_episode, render_png

    views = []
    record = policy.play(env, usr_conf, seed,
                         on_step=(lambda env_obs, act: views.append(env_obs)) if options.gif else None)
    states = record_episode(env, Replay(record.actions), usr_conf, seed=seed)
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/episode.png"
        render_png(states, path)
        png = np.asarray(Image.open(path).convert("RGB"))
    anchor = 0 if env.charger_pos == "top_left" else CHARGER_SIZE // 2  # a charger's pos: its top-left or centre
    frames = [view_picture(views[i], options.view_scale * 3, anchor)
              for i in frame_indices(len(views), options.frame_stride, options.max_frames)]
    return Rendering(record, png, frames)


WALL, FLOOR, DIRT = (60, 60, 60), (250, 250, 250), (204, 191, 242)
HERO, ROBOT, CHARGER = (40, 90, 220), (220, 40, 40), (40, 160, 70)


def _cells(image: np.ndarray, cells, colour, scale: int) -> None:
    for x, z in cells:
        image[z * scale:(z + 1) * scale, x * scale:(x + 1) * scale] = colour


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
        _cells(image, [c for c in cells if c is not None], CHARGER, scale)
    for npc in frame.get("npcs", []):
        cell = local(npc["pos"]["x"], npc["pos"]["z"]) if npc.get("is_in_view") else None
        if cell is not None:
            _cells(image, [cell], ROBOT, scale)
    _cells(image, [(radius, radius)], HERO, scale)
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
