"""Pictures of the game as RGB uint8 arrays: the whole map with an episode drawn on it, and the
hero's 51×51 local view.

Both pictures put North (+z) up and East (+x) right, the way the game looks on screen, so the
grid's row zc = 127 is the top pixel row. Drawing uses only the Map and the protocol data, so the
gymnasium env, the planner and offline tools (episode PNGs, GIFs) share one look.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from realm.back_to_the_realm.constants import CELL_WIDTH, GRID_SIZE, ORGAN_BUFF, ORGAN_CHEST, ORIGIN_X, ORIGIN_Z, VIEW_RADIUS
from realm.back_to_the_realm.maps import Map
from realm.back_to_the_realm.protocol import EnvInfo, EpisodeConfig, RealmFeature, as_grid

Point = tuple[float, float]

COLORS = {
    "passable": (232, 228, 214),
    "blocked": (52, 58, 64),
    "chest": (242, 181, 15),
    "chest_taken": (150, 140, 120),
    "buff": (40, 190, 220),
    "buff_cooling": (120, 160, 170),
    "start": (46, 160, 67),
    "end": (214, 48, 49),
    "hero": (30, 70, 230),
    "trail": (240, 120, 30),
    "flash": (200, 40, 200),
    "memory": (120, 120, 255),
    "arrow": (214, 48, 49),
}


def world_to_pixel(x: float, z: float, scale: int) -> Point:
    """World point -> (column, row) pixel of a whole-map picture with `scale` px per cell."""
    col = (x - ORIGIN_X) / CELL_WIDTH * scale
    row = (GRID_SIZE - (z - ORIGIN_Z) / CELL_WIDTH) * scale
    return col, row


def grid_image(passable: np.ndarray, scale: int) -> np.ndarray:
    """Passable/blocked cells as an RGB array, North up, each cell a scale×scale block."""
    rgb = np.where(passable[::-1, :, None], COLORS["passable"], COLORS["blocked"]).astype(np.uint8)
    return np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)


def _disc(draw: ImageDraw.ImageDraw, center: Point, radius: float, fill=None, outline=None, width: int = 1) -> None:
    cx, cy = center
    draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=fill, outline=outline, width=width)


def _square(draw: ImageDraw.ImageDraw, center: Point, half: float, fill=None, outline=None, width: int = 1) -> None:
    cx, cy = center
    draw.rectangle((cx - half, cy - half, cx + half, cy + half), fill=fill, outline=outline, width=width)


def _diamond(draw: ImageDraw.ImageDraw, center: Point, half: float, fill) -> None:
    cx, cy = center
    draw.polygon([(cx, cy - half), (cx + half, cy), (cx, cy + half), (cx - half, cy)], fill=fill)


def _draw_trail(draw: ImageDraw.ImageDraw, trail: Sequence[Point], flashes: Iterable[tuple[Point, Point]], scale: int) -> None:
    """Walked segments as a line, flash jumps as a separate straight line with both ends marked."""
    jumps = {(tuple(np.round(a, 1)), tuple(np.round(b, 1))) for a, b in flashes}
    width = max(1, scale // 2)
    for a, b in zip(trail[:-1], trail[1:]):
        if (tuple(np.round(a, 1)), tuple(np.round(b, 1))) in jumps:
            continue
        draw.line([world_to_pixel(*a, scale), world_to_pixel(*b, scale)], fill=COLORS["trail"], width=width)
    for a, b in flashes:
        pa, pb = world_to_pixel(*a, scale), world_to_pixel(*b, scale)
        draw.line([pa, pb], fill=COLORS["flash"], width=width)
        _disc(draw, pa, scale * 0.8, outline=COLORS["flash"], width=max(1, scale // 3))
        _disc(draw, pb, scale * 0.8, fill=COLORS["flash"])


def render_map(
    game_map: Map,
    *,
    scale: int = 4,
    start: int | None = None,
    end: int | None = None,
    chests: dict[int, bool] | None = None,
    buff_live: bool | None = True,
    hero: Point | None = None,
    trail: Sequence[Point] = (),
    flashes: Iterable[tuple[Point, Point]] = (),
) -> np.ndarray:
    """The whole map as an RGB uint8 array of (128·scale, 128·scale, 3).

    chests maps position id -> live (True) or taken (False); buff_live None hides the buff.
    Markers: chests gold squares (grey outline once taken), buff cyan diamond, start green disc,
    end red square, hero blue disc, trail orange, flash jumps magenta with rings at take-off.
    """
    scale = max(1, int(scale))
    image = Image.fromarray(grid_image(game_map.passable, scale))
    draw = ImageDraw.Draw(image)
    if len(trail) > 1 or flashes:
        _draw_trail(draw, list(trail), list(flashes), scale)
    marker = 1.4 * scale
    pos = game_map.positions
    if start is not None:
        _disc(draw, world_to_pixel(*pos[start], scale), marker, fill=COLORS["start"])
    if end is not None:
        _square(draw, world_to_pixel(*pos[end], scale), marker, fill=COLORS["end"])
    for cid, live in (chests or {}).items():
        center = world_to_pixel(*pos[cid], scale)
        if live:
            _square(draw, center, marker, fill=COLORS["chest"], outline=(90, 60, 0))
        else:
            _square(draw, center, marker, outline=COLORS["chest_taken"], width=max(1, scale // 3))
    if buff_live is not None:
        _diamond(draw, world_to_pixel(*pos[0], scale), 1.6 * scale, COLORS["buff"] if buff_live else COLORS["buff_cooling"])
    if hero is not None:
        _disc(draw, world_to_pixel(*hero, scale), 1.2 * scale, fill=COLORS["hero"], outline=(255, 255, 255))
    return np.asarray(image, dtype=np.uint8).copy()


def render_episode(
    game_map: Map,
    episode: EpisodeConfig,
    env_info: EnvInfo,
    *,
    scale: int = 4,
    trail: Sequence[Point] = (),
    flashes: Iterable[tuple[Point, Point]] = (),
) -> np.ndarray:
    """The map at one moment of an episode, read from the protocol's EnvInfo."""
    chests: dict[int, bool] = {}
    buff_live: bool | None = None
    for organ in env_info.frame_state.organs:
        if organ.sub_type == ORGAN_CHEST:
            chests[organ.config_id] = organ.status == 1
        elif organ.sub_type == ORGAN_BUFF:
            buff_live = organ.status == 1
    for cid in episode.treasure_id:
        chests.setdefault(cid, False)
    hero = env_info.frame_state.heroes[0].pos
    return render_map(
        game_map,
        scale=scale,
        start=episode.start,
        end=episode.end,
        chests=chests,
        buff_live=buff_live,
        hero=(hero.x, hero.z),
        trail=trail,
        flashes=flashes,
    )


def render_local_view(feature: RealmFeature, action: int | None = None, scale: int = 8) -> np.ndarray:
    """The 51×51 local maps stacked into one picture (North up), optionally with the action taken.

    Obstacles dark, memory as a blue tint, live chests gold, the end red, the hero's cell blue.
    A move action draws an arrow from the hero; a flash draws a longer, magenta arrow.
    """
    scale = max(1, int(scale))
    passable = as_grid(feature.obstacle_map) > 0.5
    rgb = np.where(passable[..., None], COLORS["passable"], COLORS["blocked"]).astype(np.float32)
    memory = np.clip(as_grid(feature.memory_map), 0.0, 1.0)[..., None]
    rgb = rgb * (1 - 0.6 * memory) + np.array(COLORS["memory"], np.float32) * 0.6 * memory
    rgb[as_grid(feature.treasure_map) > 0.5] = COLORS["chest"]
    rgb[as_grid(feature.end_map) > 0.5] = COLORS["end"]
    rgb[VIEW_RADIUS, VIEW_RADIUS] = COLORS["hero"]
    rgb = rgb[::-1].round().astype(np.uint8)  # rows are zc offsets: flip so North is up
    image = Image.fromarray(np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1))
    if action is not None:
        draw = ImageDraw.Draw(image)
        flash = action >= 8
        angle = math.radians((action % 8) * 45)
        length = (16 if flash else 4) * scale  # a flash covers 8000 units = 16 cells
        cx = cy = (VIEW_RADIUS + 0.5) * scale
        tip = (cx + length * math.cos(angle), cy - length * math.sin(angle))
        color = COLORS["flash"] if flash else COLORS["arrow"]
        draw.line([(cx, cy), tip], fill=color, width=max(1, scale // 3))
        head = 1.2 * scale
        for side in (+1, -1):
            back = angle + math.pi + side * math.radians(30)
            draw.line([tip, (tip[0] + head * math.cos(back), tip[1] - head * math.sin(back))], fill=color, width=max(1, scale // 3))
    return np.asarray(image, dtype=np.uint8).copy()


def save_png(image: np.ndarray, path: str | Path) -> Path:
    """Write an RGB array as a PNG (parents created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(image).save(path)
    return path
