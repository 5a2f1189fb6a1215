"""Draw one episode: the whole map with the route (PNG) and the hero's local view (GIF).

    python tools/render.py --ckpt runs/default/ckpt/back_to_the_realm_ppo/model.ckpt-1000.pkl --preset fixed-13
    python tools/render.py --agent planner --seed 3 --png /tmp/ep.png --gif /tmp/ep.gif --frame-stride 2

The PNG marks the walked route, flash jumps (magenta, ring at take-off), each pick-up (white
ring with its order), start, end and where the hero finished; a header gives score, steps and
chests. The GIF shows the 51×51 local maps, upscaled, with the action chosen at that step as an
arrow and a caption line. The episode is played once by the policy and then replayed from its
actions (the env is deterministic for a seed), so the planner and checkpoints draw alike.
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tool_args import (  # noqa: E402
    add_package_arg,
    add_policy_args,
    package_checkpoint,
    run_tool,
    REPO_ROOT,
    InputError,
    add_episode_args,
    add_map_args,
    env_settings,
    episode_settings,
)

import numpy as np  # noqa: E402
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from realm.constants import VIEW_SIZE  # noqa: E402
from workflow.checkpoints import ckpt_files  # noqa: E402
from realm.render import COLORS, render_episode, render_local_view, save_png, world_to_pixel  # noqa: E402

CAPTION_HEIGHT = 16  # px of text under each GIF frame
HEADER_HEIGHT = 22  # px of text above the map
PICKUP_COLOR = (255, 255, 255)
COMPASS = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")  # direction d = d × 45° counter-clockwise from +x


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


def frame_indices(n_steps: int, stride: int, max_frames: int) -> list[int]:
    """Steps drawn into the GIF: every `stride`-th, at most `max_frames` of them."""
    return list(range(0, n_steps, max(1, stride)))[:max(1, max_frames)]


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


def write_gif(path: Path, frames: list[np.ndarray], fps: float) -> Path:
    import imageio.v3 as iio

    path.parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(path, np.stack(frames), extension=".gif", duration=int(round(1000 / fps)), loop=0)
    return path


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ckpt", type=Path, help="checkpoint file (model.ckpt-N.pkl), or a checkpoint or run "
                                                     "directory: its newest")
    parser.add_argument("--agent", choices=("ckpt", "planner"), default="ckpt", help="who plays (default ckpt)")
    add_episode_args(parser)
    add_map_args(parser)
    add_policy_args(parser)
    add_package_arg(parser)
    parser.add_argument("--seed", type=int, default=0, help="episode seed (chest draw, jitter)")
    parser.add_argument("--png", type=Path, help="whole-map picture (default out/render/<name>.png)")
    parser.add_argument("--gif", type=Path, help="local-view animation (default out/render/<name>.gif)")
    parser.add_argument("--no-gif", action="store_true", help="write the PNG only")
    parser.add_argument("--map-gif", type=Path, default=None,
                        help="back_to_the_realm_v2: also an animation of the whole map (the route so far, the view "
                             "box, the cells never in view darkened), every --frame-stride steps")
    parser.add_argument("--scale", type=int, default=5, help="map pixels per cell (default 5)")
    parser.add_argument("--view-scale", type=int, default=6, help="GIF pixels per local-view cell (default 6)")
    parser.add_argument("--frame-stride", type=int, default=1, help="draw every k-th step into the GIF")
    parser.add_argument("--max-frames", type=int, default=400, help="at most this many GIF frames")
    parser.add_argument("--fps", type=float, default=10.0, help="GIF frames per second")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run_tool(render, parse_args(argv))


def newest_checkpoint(path: Path) -> Path:
    """The newest checkpoint of a checkpoint directory or of a run directory (its ckpt/*/)."""
    from evaluate import find_checkpoints

    return max(find_checkpoints(path, 1), key=ckpt_files.parse_ckpt_id)


def render(args: argparse.Namespace) -> int:
    from evaluate import V2_GAME, evaluated_platform

    platform = evaluated_platform(args)
    if platform is not None and platform.game == V2_GAME:
        return render_v2(args, platform)
    if args.map_gif is not None:
        raise InputError("--map-gif is for back_to_the_realm_v2 episodes (a v2 --package, a ppo_v2 run or a v2 "
                         "--preset); the 2024 game's GIF is --gif")
    import realm
    from agent.checkpoint_io import CheckpointError
    from evaluation.episodes import (AgentPolicy, PlannerPolicy, load_agent, resolve_episodes,
                                        run_config_file)

    for flag in ("scale", "view_scale", "frame_stride", "max_frames"):
        if getattr(args, flag) < 1:
            raise InputError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.fps <= 0:
        raise InputError(f"--fps must be > 0, got {args.fps}")
    label, usr_conf = episode_settings(args)
    if args.agent == "ckpt":
        package_checkpoint(args)
        if args.ckpt is not None and args.ckpt.is_dir():
            args.ckpt = newest_checkpoint(args.ckpt)
        if args.ckpt is None:
            raise InputError("--ckpt is required (or --package, or --agent planner)")
        if not args.ckpt.is_file():
            raise InputError(f"--ckpt: checkpoint file not found: {args.ckpt}")
        try:
            policy = AgentPolicy(load_agent(args.ckpt, args.config, args.package), name=args.ckpt.name,
                                 mode=args.policy)
        except CheckpointError as e:
            raise InputError(str(e)) from e
        name = f"{args.ckpt.stem}-{label}-seed{args.seed}"
    else:
        policy = PlannerPolicy()
        name = f"planner-{label}-seed{args.seed}"
    env_kwargs = env_settings(args, run_config_file(args.ckpt) if args.agent == "ckpt" else None)
    try:
        env = realm.make_env(**env_kwargs)
        episode = resolve_episodes(env, usr_conf, 1, args.seed)[0]
    except realm.UsrConfError as e:
        raise InputError(f"invalid usr_conf ({label}): {e}") from e
    except (realm.MapError, ValueError, TypeError) as e:
        raise InputError(f"map or env settings {env_kwargs}: {e}") from e

    record = policy.play(env, episode.usr_conf, episode.seed)
    rec = replay(env, episode.usr_conf, episode.seed, record.actions)
    if not math.isclose(rec.total_score, record.total_score, abs_tol=1e-6) or rec.steps != record.steps:
        raise RuntimeError(f"replaying the episode gave score {rec.total_score} in {rec.steps} steps, the policy got "
                           f"{record.total_score} in {record.steps}: the env is not deterministic for this seed")

    out_dir = REPO_ROOT / "out" / "render"
    png = save_png(draw_map(env, rec, f"{policy.name}  {label}  seed {args.seed}", args.scale),
                   args.png or out_dir / f"{name}.png")
    print(f"score {rec.total_score:.1f}, steps {rec.steps}, chests {rec.chests}/{len(env.episode.treasure_id)}, "
          f"{'won' if rec.won else 'timed out'}")
    print(f"wrote {png}")
    if not args.no_gif:
        picked = frame_indices(len(rec.frames), args.frame_stride, args.max_frames)
        gif = write_gif(args.gif or out_dir / f"{name}.gif", [draw_view(rec.frames[i], args.view_scale) for i in picked],
                        args.fps)
        print(f"wrote {gif} ({len(picked)} frames)")
    return 0


def render_v2(args: argparse.Namespace, platform) -> int:
    """One back_to_the_realm_v2 episode played by the package's (or the project's v2 agent's)
    exploit, or by the v2 planner: the map with the route, jumps and the end (PNG), and the 11×11
    views with each action (GIF)."""
    import realm
    from agent.checkpoint_io import CheckpointError
    from realm.v2.presets import V2_PRESETS, v2_preset
    from realm.v2.render import explored_cells, render_v2_episode, render_v2_replay, render_v2_view
    from evaluation.episodes import load_agent, run_config_file
    from evaluation.v2 import env_kwargs_v2, play_exploit, play_planner, replay as replay_v2

    for flag in ("scale", "view_scale", "frame_stride", "max_frames"):
        if getattr(args, flag) < 1:
            raise InputError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.fps <= 0:
        raise InputError(f"--fps must be > 0, got {args.fps}")
    if args.usr_conf is not None:
        label, usr_conf = episode_settings(args)
    else:
        label = args.preset or platform.eval_preset
        try:
            usr_conf = v2_preset(label)
        except KeyError:
            raise InputError(f"--preset: unknown v2 preset {label!r}; available: {', '.join(V2_PRESETS)}") from None
    loaded = None
    if args.agent == "ckpt":
        package_checkpoint(args)
        if args.ckpt.is_dir():
            args.ckpt = newest_checkpoint(args.ckpt)
        if not args.ckpt.is_file():
            raise InputError(f"--ckpt: checkpoint file not found: {args.ckpt}")
        try:
            loaded = load_agent(args.ckpt, args.config, args.package)
        except CheckpointError as e:
            raise InputError(str(e)) from e
        name = f"{args.ckpt.stem}-{label}-seed{args.seed}"
    else:
        name = f"planner-{label}-seed{args.seed}"
    try:
        env = realm.make_env(**env_kwargs_v2(args.config or (run_config_file(args.ckpt) if loaded else None),
                                             args.map_file, args.obstacles_file, args.map_seed))
        episode = play_exploit(env, loaded, usr_conf, args.seed) if loaded else play_planner(env, usr_conf, args.seed)
    except realm.UsrConfError as e:
        raise InputError(f"invalid usr_conf ({label}): {e}") from e
    except (realm.MapError, ValueError, TypeError, OSError) as e:
        raise InputError(f"map or env settings: {e}") from e
    views = []
    record = replay_v2(env, episode, on_step=None if args.no_gif else lambda obs, act: views.append((obs, act)))
    out_dir = REPO_ROOT / "out" / "render"
    png = save_png(render_v2_episode(env, scale=args.scale, trail=record.trail, jumps=record.jumps, show_end="always",
                                     explored=explored_cells(record.trail)),
                   args.png or out_dir / f"{name}.png")
    print(f"score {record.total_score:.1f}, steps {record.steps}, chests {record.chests}/{record.chests_available}, "
          f"{'won' if record.won else 'timed out'}")
    print(f"wrote {png}")
    if not args.no_gif:
        picked = frame_indices(len(views), args.frame_stride, args.max_frames)
        frames = [render_v2_view(views[i][0], views[i][1], scale=args.view_scale * 3) for i in picked]
        gif = write_gif(args.gif or out_dir / f"{name}.gif", frames, args.fps)
        print(f"wrote {gif} ({len(picked)} frames)")
    if args.map_gif is not None:
        picked = frame_indices(record.steps, args.frame_stride, args.max_frames)
        frames = render_v2_replay(env, episode.usr_conf, episode.seed, episode.actions, picked, scale=args.scale)
        gif = write_gif(args.map_gif, frames, args.fps)
        print(f"wrote {gif} ({len(frames)} frames of the whole map)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
