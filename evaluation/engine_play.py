"""Episodes of the 2026 engine's games (gorge_chase 15.0.1, robot_vacuum 13.0.1) as their
evaluation plays and draws them: the loop on the raw env_obs, a checkpoint playing with its
package's own exploit, the simulator's full-information reference on the same episodes, and an
episode's pictures (the simulator's map picture, the hero's views). A game's evaluation module
(evaluation/<game>.py) brings its content: its record of a finished episode, its simulator's
reference and render modules, its view picture.
"""
from __future__ import annotations

import importlib
from typing import Callable

import numpy as np

from games.base import Rendering, frame_indices


def play_episode(env, usr_conf: dict, seed: int, choose, on_step=None) -> tuple[dict, list[int]]:
    """One episode of `env` from reset(usr_conf, seed) to its end, `choose(env_obs)` giving each
    action; `on_step(env_obs, act)` sees each observation with the action chosen from it. Returns
    the last env_obs and the actions (a game's record reads them). A usr_conf the env refuses
    raises, whether the env raises or answers errors as the platform does."""
    from realm.episode import checked_reset

    env_obs = checked_reset(env, usr_conf, seed=seed)
    actions = []
    while not (env_obs["terminated"] or env_obs["truncated"]):
        act = int(choose(env_obs))
        if on_step is not None:
            on_step(env_obs, act)
        actions.append(act)
        _, env_obs = env.step(act)
    return env_obs, actions


class AgentPolicy:
    """A checkpoint of a package playing with its own exploit (the platform's evaluation): its
    `reset(env_obs)` before each episode; its draws seeded with the episode seed. A game's
    subclass sets `episode`: its play(env, usr_conf, seed, choose, on_step) -> its record."""

    episode: Callable  # staticmethod: the game's play

    def __init__(self, loaded, name: str = "agent", mode: str = "greedy"):
        self.loaded = loaded
        self.name = name

    def play(self, env, usr_conf: dict, seed: int, on_step=None):
        from evaluation.episodes import seed_agent_draws

        agent, loaded = self.loaded.agent, self.loaded
        seed_agent_draws(agent, seed)
        started = []

        def choose(env_obs):
            if not started and callable(getattr(agent, "reset", None)):
                agent.reset(env_obs)
            started.append(True)
            return loaded.action_process(agent.exploit(loaded.observation_process(env_obs)))

        return self.episode(env, usr_conf, seed, choose, on_step)


class ReferencePolicy:
    """The simulator's full-information reference policy, seeded with the episode seed, on the
    same episodes. A game's subclass sets `episode` (as AgentPolicy's) and `reference`: its
    simulator's module whose ReferencePolicy(seed=) acts with `act(env)`."""

    name = "planner"
    episode: Callable  # staticmethod: the game's play
    reference: str  # "realm.<game>.reference"

    def play(self, env, usr_conf: dict, seed: int, on_step=None):
        reference = importlib.import_module(self.reference).ReferencePolicy(seed=seed)
        return self.episode(env, usr_conf, seed, lambda env_obs: reference.act(env), on_step)


class Replay:
    """Plays a finished episode's actions again (the env repeats an episode for its seed), as the
    simulator's pictures (realm.<game>.render.record_episode) ask a policy: `act(env)`."""

    def __init__(self, actions: list):
        self._actions = iter(actions)

    def act(self, env) -> int:
        return next(self._actions)


def play_and_draw(env, policy, usr_conf: dict, seed: int, options, render: str,
                  view_picture: Callable[[dict, int], np.ndarray]) -> Rendering:
    """One episode of `policy`: the simulator's picture of its end (`render`, "realm.<game>.render":
    its record_episode and render_png, on the episode replayed) as the PNG; the hero's views
    (`view_picture(env_obs, scale)`) as the GIF frames, unless options.gif is off."""
    import tempfile

    from PIL import Image

    pictures = importlib.import_module(render)
    views = []
    record = policy.play(env, usr_conf, seed,
                         on_step=(lambda env_obs, act: views.append(env_obs)) if options.gif else None)
    states = pictures.record_episode(env, Replay(record.actions), usr_conf, seed=seed)
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/episode.png"
        pictures.render_png(states, path)
        png = np.asarray(Image.open(path).convert("RGB"))
    frames = [view_picture(views[i], options.view_scale * 3)
              for i in frame_indices(len(views), options.frame_stride, options.max_frames)]
    return Rendering(record, png, frames)


def paint_cells(image: np.ndarray, cells, colour, scale: int) -> None:
    """Colour the (x, z) `cells` of a view picture drawn `scale` pixels a cell."""
    for x, z in cells:
        image[z * scale:(z + 1) * scale, x * scale:(x + 1) * scale] = colour
