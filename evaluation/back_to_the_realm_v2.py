"""Evaluation episodes of back_to_the_realm_v2 packages: a checkpoint plays with the package's
own `exploit` (`AgentPolicy`), the full-information planner (realm/back_to_the_realm_v2/reference.py,
`ReferencePolicy`) plays the same episodes for scale, and `play_and_draw` draws one:
games.back_to_the_realm_v2 evaluates and draws a v2 checkpoint with these.

An episode is (usr_conf, seed) on one env: `env.reset(usr_conf, seed)` draws the random points
and the obstacle, so the agent and the planner meet the same episode. Before each episode the
agent's `reset()` runs, as the official workflows call it; `exploit` is handed
`{"obs": obs, "extra_info": extra_info}` and answers the action (PlatformV2.eval_protocol).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from evaluation.records import GameEpisode
from games.base import Rendering, frame_indices


@dataclass
class EpisodeV2(GameEpisode):
    """One finished v2 episode."""

    trail: list = field(default_factory=list)  # the hero's cells, start first
    jumps: list = field(default_factory=list)  # ((x, z), (x, z)) of each talent cast
    end_found: bool = False


def _finished(env, extra_info: dict, won: bool, seed: int, usr_conf: dict, trail, jumps, actions) -> EpisodeV2:
    game = extra_info["game_info"]
    return EpisodeV2(seed=seed, usr_conf=usr_conf, total_score=float(game["total_score"]), won=bool(won),
                     chests=int(game["treasure_collected_count"]), chests_available=len(env.episode.treasures),
                     steps=env.steps, buff_count=int(game["buff_count"]), flash_count=int(game["talent_count"]),
                     trail=list(trail), jumps=list(jumps), actions=list(actions), end_found=env.end_found)


def play_exploit(env, loaded, usr_conf: dict, seed: int) -> EpisodeV2:
    """One episode of `env` (a realm.back_to_the_realm_v2 RealmEnvV2) played by `loaded` (evaluation.episodes's
    LoadedAgent of a v2 package: its agent, with the platform's eval_protocol). The agent's draws
    (an exploit that breaks loops by sampling) are seeded with the episode seed, so an episode
    scores the same in any process."""
    from evaluation.episodes import seed_agent_draws

    obs, extra_info = env.reset(usr_conf=usr_conf, seed=seed)
    agent = loaded.agent
    seed_agent_draws(agent, seed)
    if callable(getattr(agent, "reset", None)):
        agent.reset()
    trail, jumps, actions = [env.hero], [], []
    terminated = truncated = False
    while not (terminated or truncated):
        act = loaded.action_process(agent.exploit(loaded.observation_process(obs, extra_info)))
        actions.append(act)
        _, obs, terminated, truncated, extra_info = env.step(act)
        trail.append(env.hero)
        if env.last_jump is not None:
            jumps.append(env.last_jump)
    return _finished(env, extra_info, terminated, seed, usr_conf, trail, jumps, actions)


def play_planner(env, usr_conf: dict, seed: int) -> EpisodeV2:
    """The same episode played by the full-information planner."""
    from realm.back_to_the_realm_v2.reference import run_planner_v2

    result = run_planner_v2(env, usr_conf, seed)
    return _finished(env, env.extra_info, result.won, seed, usr_conf, result.trajectory, result.jumps, result.actions)


class AgentPolicy:
    """A checkpoint of a v2 package (or of the project's v2 agent) playing with its own exploit:
    evaluation.worker's policy for this game."""

    MODES = ("greedy",)  # the platform evaluates exploit; a v2 package's predict takes its own batches

    def __init__(self, loaded, name: str = "agent", mode: str = "greedy"):
        if mode not in self.MODES:
            raise ValueError(f"policy mode {mode!r}: a back_to_the_realm_v2 agent is evaluated with its exploit "
                             f"only ({', '.join(self.MODES)})")
        self.loaded = loaded
        self.name = name

    def play(self, env, usr_conf: dict, seed: int) -> EpisodeV2:
        return play_exploit(env, self.loaded, usr_conf, seed)


class ReferencePolicy:
    """The full-information v2 planner on the same episodes."""

    name = "planner"

    def play(self, env, usr_conf: dict, seed: int) -> EpisodeV2:
        return play_planner(env, usr_conf, seed)


def replay(env, episode: EpisodeV2, on_step=None) -> EpisodeV2:
    """Play `episode`'s actions again on `env` (same usr_conf and seed): the env is deterministic
    for a seed, so the result equals the episode; `on_step(obs, act)` sees each observation with
    the action chosen from it. ValueError when the replay differs."""
    obs, extra_info = env.reset(usr_conf=episode.usr_conf, seed=episode.seed)
    trail, jumps = [env.hero], []
    terminated = False
    for act in episode.actions:
        if on_step is not None:
            on_step(obs, act)
        _, obs, terminated, _, extra_info = env.step(act)
        trail.append(env.hero)
        if env.last_jump is not None:
            jumps.append(env.last_jump)
    again = _finished(env, extra_info, terminated, episode.seed, episode.usr_conf, trail, jumps, episode.actions)
    if (again.total_score, again.steps, again.trail) != (episode.total_score, episode.steps, episode.trail):
        raise ValueError(f"replaying seed {episode.seed} gave score {again.total_score} in {again.steps} steps, the "
                         f"episode {episode.total_score} in {episode.steps}: the env is not deterministic for it")
    return again


def play_and_draw(game, env, policy, usr_conf: dict, seed: int, title: str, options) -> Rendering:
    """The map with the route, jumps and the end, the unexplored cells dimmed (PNG); the 11×11
    views with each action (GIF); with options.map_gif the whole map step by step."""
    from realm.back_to_the_realm_v2.render import explored_cells, render_v2_episode, render_v2_replay, render_v2_view

    episode = policy.play(env, usr_conf, seed)
    views = []
    record = replay(env, episode, on_step=(lambda obs, act: views.append((obs, act))) if options.gif else None)
    png = render_v2_episode(env, scale=options.scale, trail=record.trail, jumps=record.jumps, show_end="always",
                            explored=explored_cells(record.trail))
    frames = [render_v2_view(views[i][0], views[i][1], scale=options.view_scale * 3)
              for i in frame_indices(len(views), options.frame_stride, options.max_frames)]
    map_frames = []
    if options.map_gif:
        picked = frame_indices(record.steps, options.frame_stride, options.max_frames)
        map_frames = render_v2_replay(env, episode.usr_conf, episode.seed, episode.actions, picked,
                                      scale=options.scale)
    return Rendering(record, png, frames, map_frames)


# --- recordings (evaluation.recording) -------------------------------------------------------------

def recorded_world(env) -> dict:
    """The episode's map with its active obstacles marked (rows z = 0 up to 127, North = +z up), the
    start, the end, the chests and the buff as cells, the view's radius."""
    from evaluation.recording import grid_rows

    episode = env.episode
    active = [tuple(int(v) for v in cell) for oid in episode.obstacle_ids for cell in env.map.obstacles[oid].tolist()]
    return {"rows": grid_rows(env.grid, obstacles=active), "z_up": True, "view_radius": env.view_size // 2,
            "start": list(episode.start), "end": list(episode.end), "chests": [list(c) for c in episode.treasures],
            "buffs": [list(episode.buff)]}


def recorded_state(env) -> dict:
    """The hero's cell, which chests and buffs are live, whether the end has been in view."""
    return {"hero": list(env.hero), "monsters": [], "chests": [not taken for taken in env.chests_taken],
            "buffs": [bool(env.buff_available)], "end_found": bool(env.end_found)}
