"""Evaluation of Back to the Realm (the 2024 game): a checkpoint's policy (`AgentPolicy`, greedy
or sampled, through the episode runner and its package's protocol functions), the route planner
as reference (`ReferencePolicy`), and pictures (`play_and_draw`): the episode replayed from its
actions, the whole map with the route, flashes and pick-ups under a header line (PNG), and each
step's 51×51 local view with the action chosen (GIF frames)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from episodes.runner import EpisodeRunner
from evaluation.episodes import EpisodeRecord, LoadedAgent, record_from, seed_agent_draws
from games.base import Rendering, frame_indices
from realm.back_to_the_realm.constants import VIEW_SIZE
from realm.back_to_the_realm.reference import run_planner
from realm.back_to_the_realm.render import COLORS, render_episode, render_local_view, world_to_pixel

CAPTION_HEIGHT = 16  # px of text under each GIF frame
HEADER_HEIGHT = 22  # px of text above the map
PICKUP_COLOR = (255, 255, 255)
COMPASS = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")  # direction d = d × 45° counter-clockwise from +x


POLICY_MODES = ("greedy", "sample")


class AgentPolicy:
    """A trained package agent acting through the episode runner.

    "greedy" is Kaiwu's evaluation (`exploit`: for the project's PPO agent the most probable
    action, with draws where it would loop, `[ppo] exploit_policy`). "sample" draws from the
    policy as in training (`predict`). Both seed the agent's sampling with the episode seed, so
    an episode replays identically.
    """

    MODES = POLICY_MODES

    def __init__(self, loaded: LoadedAgent, name: str = "agent", mode: str = "greedy"):
        if mode not in POLICY_MODES:
            raise ValueError(f"policy mode {mode!r} is invalid: allowed {', '.join(POLICY_MODES)}")
        self.loaded = loaded
        self.agent = loaded.agent
        self.name = name
        self.mode = mode

    def play(self, env, usr_conf: dict, seed: int, on_step=None) -> EpisodeRecord:
        seed_agent_draws(self.agent, seed)
        act = self.agent.predict if self.mode == "sample" else self.agent.exploit
        played, conf = self.loaded.platform.eval_episode(env, usr_conf, self.loaded.map_window)
        runner = EpisodeRunner([played], act, self.loaded.observation_process, self.loaded.action_process)
        stats, actions = runner.play(conf, seed=seed, on_step=on_step)
        return record_from(stats, stats.win, usr_conf, seed, actions)


class ReferencePolicy:
    """The route planner with full map knowledge: the project's upper reference."""

    name = "planner"

    def play(self, env, usr_conf: dict, seed: int) -> EpisodeRecord:
        result = run_planner(env, usr_conf, seed=seed)
        return record_from(result, result.won, usr_conf, seed, result.actions)


# --- pictures ---------------------------------------------------------------------------------

@dataclass
class StepFrame:
    """What the hero saw before one action, and the action."""

    feature: object
    action: int
    step: int
    score: float
    flash_ready: bool


@dataclass
class Replay:
    """One episode step by step: positions, events and the local view before each action."""

    frames: list[StepFrame] = field(default_factory=list)
    trail: list[tuple[float, float]] = field(default_factory=list)
    flashes: list[tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=list)
    pickups: list[tuple[int, tuple[float, float]]] = field(default_factory=list)  # (step, hero position)
    env_info: object = None
    total_score: float = 0.0
    won: bool = False
    steps: int = 0
    chests: int = 0


def _hero_pos(env_info) -> tuple[float, float]:
    pos = env_info.frame_state.heroes[0].pos
    return float(pos.x), float(pos.z)


def replay(env, usr_conf: dict, seed: int, actions: list[int]) -> Replay:
    """Play `actions` from `env.reset(usr_conf, seed)` through the episode runner, recording what
    each step looked like."""
    from episodes.runner import EpisodeRunner

    out = Replay()
    recorded = iter(actions)
    seen = {"obs": None, "score": 0.0, "chests": 0, "flashes": 0}

    def observe(obs, env_info):  # the runner's observation_process: keep the raw observation for the frame
        seen["obs"] = obs
        out.trail.append(_hero_pos(env_info if env_info is not None else env.env_info))
        return obs

    def next_action(list_obs):
        obs = list_obs[0]
        action = int(next(recorded))
        out.frames.append(StepFrame(obs.feature, action, len(out.frames), seen["score"], obs.legal_act[1] == 1))
        return [action]

    def on_step(t) -> None:
        before, after = out.trail[-2], out.trail[-1]
        if t.score.talent_count > seen["flashes"]:
            out.flashes.append((before, after))
            seen["flashes"] = t.score.talent_count
        if t.score.treasure_count > seen["chests"]:
            out.pickups.append((len(out.frames), after))
            seen["chests"] = t.score.treasure_count
        seen["score"] = float(t.score.score)
        out.env_info = t.env_info

    runner = EpisodeRunner([env], next_action, observe, int)
    stats, _ = runner.play(usr_conf, seed=seed, on_step=on_step)
    out.total_score, out.won, out.chests, out.steps = stats.total_score, stats.win, stats.chests, stats.steps
    return out


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizes
        return ImageFont.load_default()


def draw_map(env, rec: Replay, title: str, scale: int) -> np.ndarray:
    """The whole map with the episode drawn on it, under a header line."""
    rgb = render_episode(env.map, env.episode, rec.env_info, scale=scale, trail=rec.trail, flashes=rec.flashes)
    image = Image.new("RGB", (rgb.shape[1], rgb.shape[0] + HEADER_HEIGHT), (255, 255, 255))
    image.paste(Image.fromarray(rgb), (0, HEADER_HEIGHT))
    draw = ImageDraw.Draw(image)
    font = _font(max(10, scale * 3))
    for order, (_, pos) in enumerate(rec.pickups, start=1):
        cx, cy = world_to_pixel(*pos, scale)
        cy += HEADER_HEIGHT
        r = 2.2 * scale
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=PICKUP_COLOR, width=max(1, scale // 2))
        draw.text((cx + r, cy - r - 2 * scale), str(order), fill=(0, 0, 0), font=font)
    fx, fy = world_to_pixel(*rec.trail[-1], scale)
    fy += HEADER_HEIGHT
    mark = COLORS["end"] if rec.won else (0, 0, 0)
    r = 2.6 * scale
    draw.line((fx - r, fy - r, fx + r, fy + r), fill=mark, width=max(1, scale // 2))
    draw.line((fx - r, fy + r, fx + r, fy - r), fill=mark, width=max(1, scale // 2))
    outcome = "reached the end" if rec.won else "timed out"
    header = (f"{title}  |  score {rec.total_score:.1f}  steps {rec.steps}  chests {rec.chests}/"
              f"{len(env.episode.treasure_id)}  flashes {len(rec.flashes)}  {outcome}")
    draw.text((4, 4), header, fill=(0, 0, 0), font=_font(12))
    return np.asarray(image, dtype=np.uint8).copy()


def draw_view(frame: StepFrame, scale: int) -> np.ndarray:
    """One GIF frame: the local view with the chosen action, and a caption strip below."""
    view = render_local_view(frame.feature, action=frame.action, scale=scale)
    image = Image.new("RGB", (view.shape[1], view.shape[0] + CAPTION_HEIGHT), (255, 255, 255))
    image.paste(Image.fromarray(view), (0, 0))
    kind = f"{'flash' if frame.action >= 8 else 'move'} {COMPASS[frame.action % 8]}"
    caption = f"step {frame.step}  {kind}  score {frame.score:.0f}" + ("  flash ready" if frame.flash_ready else "")
    ImageDraw.Draw(image).text((3, view.shape[0] + 2), caption, fill=(0, 0, 0), font=_font(11))
    return np.asarray(image, dtype=np.uint8).copy()


def gif_frame_size(view_scale: int) -> tuple[int, int]:
    """(height, width) of a GIF frame."""
    side = VIEW_SIZE * view_scale
    return side + CAPTION_HEIGHT, side


def play_and_draw(game, env, policy, usr_conf: dict, seed: int, title: str, options) -> Rendering:
    """The policy plays, then the episode is replayed from its actions through the episode
    runner (the env is deterministic for a seed), so the planner and checkpoints draw alike."""
    episode = game.episodes(env, usr_conf, 1, seed)[0]
    record = policy.play(env, episode.usr_conf, episode.seed)
    rec = replay(env, episode.usr_conf, episode.seed, record.actions)
    if not math.isclose(rec.total_score, record.total_score, abs_tol=1e-6) or rec.steps != record.steps:
        raise RuntimeError(f"replaying the episode gave score {rec.total_score} in {rec.steps} steps, the policy "
                           f"got {record.total_score} in {record.steps}: the env is not deterministic for this seed")
    png = draw_map(env, rec, title, options.scale)
    frames = []
    if options.gif:
        picked = frame_indices(len(rec.frames), options.frame_stride, options.max_frames)
        frames = [draw_view(rec.frames[i], options.view_scale) for i in picked]
    return Rendering(record, png, frames)


# --- recordings (evaluation.recording) -------------------------------------------------------------

def _cell(pos) -> list[int]:
    from realm.back_to_the_realm.maps import cell_of

    return list(cell_of(*pos))


def recorded_world(env) -> dict:
    """The map (rows z = 0 up to 127, North = +z up), the start, the end, the episode's chests and the
    buff as cells, the 51×51 view's radius."""
    from evaluation.recording import grid_rows
    from realm.back_to_the_realm.constants import BUFF_ID, VIEW_RADIUS

    episode, positions = env.episode, env.map.positions
    return {"rows": grid_rows(env.map.passable), "z_up": True, "view_radius": VIEW_RADIUS,
            "start": _cell(positions[episode.start]), "end": _cell(positions[episode.end]),
            "chests": [_cell(positions[i]) for i in episode.treasure_id], "buffs": [_cell(positions[BUFF_ID])]}


def recorded_state(env) -> dict:
    """The hero's cell (and its world position), which chests and buffs are live (the protocol's organs)."""
    from realm.back_to_the_realm.constants import ORGAN_BUFF, ORGAN_CHEST

    organs = env.env_info.frame_state.organs
    live = {organ.config_id: organ.status == 1 for organ in organs if organ.sub_type == ORGAN_CHEST}
    buff = [organ.status == 1 for organ in organs if organ.sub_type == ORGAN_BUFF]
    x, z = env.hero_position
    return {"hero": _cell((x, z)), "pos": [round(float(x), 1), round(float(z), 1)], "monsters": [],
            "chests": [bool(live.get(i, False)) for i in env.episode.treasure_id], "buffs": buff[:1] or [False]}
