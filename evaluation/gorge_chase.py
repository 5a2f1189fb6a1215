"""Evaluation of gorge_chase packages (games.gorge_chase's evaluation side): an episode's record,
a 15.0.1 checkpoint playing with its own exploit on the raw env_obs, the simulator's
full-information reference on the same episodes, and the episode's pictures (the simulator's map
picture, the hero's 21×21 views)."""
from __future__ import annotations

import numpy as np

from evaluation.records import GameEpisode
from games.base import Rendering, frame_indices


class GorgeEpisode(GameEpisode):
    """One finished episode; `won`: survived to max_step (not caught)."""


def play(env, usr_conf: dict, seed: int, choose, on_step=None) -> GorgeEpisode:
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
    return GorgeEpisode(seed=int(seed), usr_conf=usr_conf, total_score=float(info["total_score"]),
                        won=bool(env_obs["truncated"]), chests=int(info["treasures_collected"]),
                        chests_available=int(info["total_treasure"]), steps=int(info["step_no"]),
                        buff_count=int(info["collected_buff"]), flash_count=int(info["flash_count"]), actions=actions)


class AgentPolicy:
    """A checkpoint of a 15.0.1 package playing with its own exploit (the platform's evaluation):
    its `reset(env_obs)` before each episode; its draws seeded with the episode seed."""

    def __init__(self, loaded, name: str = "agent", mode: str = "greedy"):
        self.loaded = loaded
        self.name = name

    def play(self, env, usr_conf: dict, seed: int, on_step=None) -> GorgeEpisode:
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
    """The simulator's full-information reference policy (realm.gorge_chase.reference), seeded
    with the episode seed, on the same episodes."""

    name = "planner"

    def play(self, env, usr_conf: dict, seed: int, on_step=None) -> GorgeEpisode:
        from realm.gorge_chase.reference import ReferencePolicy as Reference

        reference = Reference(seed=seed)
        return play(env, usr_conf, seed, lambda env_obs: reference.act(env), on_step)


class Replay:
    """Plays a finished episode's actions again (the env repeats an episode for its seed), as the
    simulator's pictures (realm.gorge_chase.render.record_episode) ask a policy: `act(env)`."""

    def __init__(self, actions: list):
        self._actions = iter(actions)

    def act(self, env) -> int:
        return next(self._actions)


def play_and_draw(game, env, policy, usr_conf: dict, seed: int, title: str, options) -> Rendering:
    """The simulator's picture of the episode's end (realm.gorge_chase.render: the map, the
    hero's trail, the monsters' paths, flashes, chests and buffs) as the PNG; the hero's 21×21
    views with the monsters and items in them as the GIF frames."""
    import tempfile

    from PIL import Image

    from realm.gorge_chase.render import record_episode, render_png

    views = []
    record = policy.play(env, usr_conf, seed,
                         on_step=(lambda env_obs, act: views.append(env_obs)) if options.gif else None)
    states = record_episode(env, Replay(record.actions), usr_conf, seed=seed)
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/episode.png"
        render_png(states, path)
        png = np.asarray(Image.open(path).convert("RGB"))
    frames = [view_picture(views[i], options.view_scale * 3)
              for i in frame_indices(len(views), options.frame_stride, options.max_frames)]
    return Rendering(record, png, frames)


ROAD, WALL = (225, 220, 205), (60, 60, 60)
HERO, MONSTER, CHEST, BUFF = (40, 90, 220), (220, 40, 40), (240, 180, 20), (40, 180, 80)


def _cells(image: np.ndarray, cells, colour, scale: int) -> None:
    for x, z in cells:
        image[z * scale:(z + 1) * scale, x * scale:(x + 1) * scale] = colour


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
            _cells(image, [cell], CHEST if organ["sub_type"] == SUB_TYPE_TREASURE else BUFF, scale)
    for monster in frame.get("monsters", []):
        cell = local(monster["pos"]) if monster.get("is_in_view") else None
        if cell is not None:
            _cells(image, [cell], MONSTER, scale)
    _cells(image, [(radius, radius)], HERO, scale)
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
