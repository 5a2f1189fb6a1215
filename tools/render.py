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
import sys
from pathlib import Path

import numpy as np

from cli.flags import add_episode_args, add_map_args, add_package_arg, add_policy_args, add_record_arg, eval_request
from cli.run import run_tool
from evaluation.inputs import InputError
from evaluation.session import open_session
from games.base import RenderOptions
from realm.back_to_the_realm.render import save_png
from workflow.config import REPO_ROOT


def write_gif(path: Path, frames: list[np.ndarray], fps: float) -> Path:
    import imageio.v3 as iio  # here: only a GIF needs it

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
                        help="also an animation of the whole map (the route so far, the view box, the cells never in "
                             "view darkened), every --frame-stride steps; for the games whose hero sees a part of it")
    parser.add_argument("--scale", type=int, default=5, help="map pixels per cell (default 5)")
    parser.add_argument("--view-scale", type=int, default=6, help="GIF pixels per local-view cell (default 6)")
    parser.add_argument("--frame-stride", type=int, default=1, help="draw every k-th step into the GIF")
    parser.add_argument("--max-frames", type=int, default=400, help="at most this many GIF frames")
    parser.add_argument("--fps", type=float, default=10.0, help="GIF frames per second")
    add_record_arg(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run_tool(render, parse_args(argv))


def render(args: argparse.Namespace) -> int:
    """One episode of the evaluated game (evaluation.session), played by a checkpoint's exploit (or
    predict, --policy sample, where the game allows it) or by the reference, drawn by the game."""
    for flag in ("scale", "view_scale", "frame_stride", "max_frames"):
        if getattr(args, flag) < 1:
            raise InputError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.fps <= 0:
        raise InputError(f"--fps must be > 0, got {args.fps}")
    session = open_session(eval_request(args, newest=True))
    if args.map_gif is not None and not session.game.map_animation:
        raise InputError(f"--map-gif: {session.game.name}'s hero sees the whole map; its episode's GIF is --gif")
    options = RenderOptions(args.scale, args.view_scale, args.frame_stride, args.max_frames, gif=not args.no_gif,
                            map_gif=args.map_gif is not None)
    drawn = session.render(args.seed, options)
    record = drawn.record
    name = f"{session.ckpt.stem if session.ckpt else 'planner'}-{session.label}-seed{args.seed}"
    out_dir = REPO_ROOT / "out" / "render"
    png = save_png(drawn.png, args.png or out_dir / f"{name}.png")
    print(f"score {record.total_score:.1f}, steps {record.steps}, chests {record.chests}/{record.chests_available}, "
          f"{session.game.outcomes[0] if record.won else session.game.outcomes[1]}")
    print(f"wrote {png}")
    if drawn.frames:
        gif = write_gif(args.gif or out_dir / f"{name}.gif", drawn.frames, args.fps)
        print(f"wrote {gif} ({len(drawn.frames)} frames)")
    if drawn.map_frames:
        gif = write_gif(args.map_gif, drawn.map_frames, args.fps)
        print(f"wrote {gif} ({len(drawn.map_frames)} frames of the whole map)")
    if args.record is not None:
        for path in session.record(args.record, session.episodes(1, args.seed)[1]):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
