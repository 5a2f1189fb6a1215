"""gorge_chase (峡谷追猎), the 2026 game (realm/gorge_chase/, docs/GORGE_RULES.md): survive a chasing
monster (two after monster_interval steps) for max_step steps, collecting chests and speed buffs.
Packages 15.0.1 play it.

An evaluation episode is (usr_conf, seed) with one map: the env draws spawns from the seed at
reset, and each episode's usr_conf names the single map it plays (the env's own map cycling
would give a process's episodes different maps by the order they come in). A checkpoint plays
with its package's own `exploit` on the raw env_obs; the reference is the simulator's
full-information policy; pictures are the simulator's (the map with the routes) and the hero's
21×21 view step by step.
"""
from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field

import numpy as np

from games.base import Game, Rendering, algo_conf, frame_indices

#: What an episode record holds, as a CSV row (tools/evaluate.py's EPISODE_FIELDS).
RECORD_FIELDS = ("seed", "total_score", "won", "chests", "steps", "buff_count", "flash_count", "usr_conf")


@dataclass
class GorgeEpisode:
    """One finished episode; `won`: survived to max_step (not caught)."""

    seed: int
    usr_conf: dict
    total_score: float
    won: bool
    chests: int
    chests_available: int
    steps: int
    buff_count: int
    flash_count: int
    actions: list = field(default_factory=list)

    def to_row(self) -> dict:
        row = {key: getattr(self, key) for key in RECORD_FIELDS}
        row["usr_conf"] = json.dumps(self.usr_conf, sort_keys=True)
        return row


def play(env, usr_conf: dict, seed: int, choose, on_step=None) -> GorgeEpisode:
    """One episode of `env` from reset(usr_conf, seed) to its end, `choose(env_obs)` giving each
    action; `on_step(env_obs, act)` sees each observation with the action chosen from it."""
    env_obs = env.reset(usr_conf, seed=seed)
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

    def __init__(self, loaded, name: str = "agent"):
        self.loaded = loaded
        self.name = name

    def play(self, env, usr_conf: dict, seed: int, on_step=None) -> GorgeEpisode:
        import torch

        agent, loaded = self.loaded.agent, self.loaded
        np.random.seed(int(seed) % 2**32)
        torch.manual_seed(int(seed))
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


class GorgeChase(Game):
    name = "gorge_chase"
    title = "gorge_chase (2026)"
    policy_modes = ("greedy",)  # the platform evaluates exploit
    map_companion = "positions_file"  # refused with a hint: gorge maps are a folder, [env] gorge_maps
    outcomes = ("survived", "caught")
    map_animation = False

    def presets(self) -> dict[str, dict]:
        from realm.gorge_chase.presets import PRESETS

        return PRESETS

    def check_usr_conf(self, usr_conf: dict) -> None:
        from realm.gorge_chase.usr_conf import validate_usr_conf

        validate_usr_conf(usr_conf)

    def episodes(self, env, usr_conf: dict, count: int, base_seed: int = 0) -> list:
        """Episode i plays one map of the usr_conf's list: in turn (map_random false, the
        official order) or drawn from its seed; one reset checks the usr_conf against the env's maps."""
        from evaluation.episodes import Episode

        env.reset(usr_conf, seed=base_seed)
        conf = env.conf
        episodes = []
        for i in range(count):
            seed = base_seed + i
            map_id = random.Random(seed).choice(conf.map) if conf.map_random else conf.map[i % len(conf.map)]
            one = copy.deepcopy(usr_conf) if usr_conf else {}
            one.setdefault("env_conf", {})
            one["env_conf"]["map"] = [int(map_id)]
            one["env_conf"]["map_random"] = False
            episodes.append(Episode(i, seed, one))
        return episodes

    def env_kwargs(self, env_config, platform) -> dict:
        return env_config.make_kwargs(platform.name)

    def agent_policy(self, loaded, name: str, mode: str):
        self.check_policy_mode(mode)
        return AgentPolicy(loaded, name=name)

    def reference_policy(self):
        return ReferencePolicy()

    # --- export -----------------------------------------------------------------------------------

    def train_env_conf(self, settings) -> tuple[dict, str]:
        """The official defaults (the project trains no gorge_chase agent of its own yet)."""
        from realm.gorge_chase.usr_conf import default_usr_conf

        return default_usr_conf(), "# the official defaults (realm.gorge_chase.usr_conf.default_usr_conf)\n"

    def registration_files(self, settings, algo: str, folder: str) -> dict[str, tuple[str, dict]]:
        """15.0.1's registration: agents under actor_agent / learner_agent / aisrv_agent, the
        algorithm to train in app_conf's policy."""
        env_conf, comment = self.train_env_conf(settings)
        entry = algo_conf(algo, self.eval_workflows)[algo]
        agent = entry["aisrv_model"]
        algo_table = {algo: {"actor_agent": agent, "learner_agent": agent, "aisrv_agent": agent,
                             "train_workflow": entry["train_workflow"], "eval_workflow": entry["eval_workflow"],
                             "exam_workflow": entry["exam_workflow"]}}
        app_table = {self.name: {"rl_helper": "kaiwudrl.server.aisrv.kaiwu_rl_helper_standard.KaiWuRLStandardHelper",
                                 "policies": {"train_one": {"policy_builder":
                                                            "kaiwudrl.server.aisrv.async_policy.AsyncBuilder",
                                                            "algo": algo}}}}
        return {f"{folder}/conf/train_env_conf.toml": (comment, env_conf),
                f"conf/algo_conf_{self.name}.toml": ("", algo_table),
                f"conf/app_conf_{self.name}.toml": ("", app_table)}

    # --- pictures ---------------------------------------------------------------------------------

    def render(self, env, policy, usr_conf: dict, seed: int, title: str, options) -> Rendering:
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


GAME = GorgeChase()
