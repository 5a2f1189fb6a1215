"""Pictures of a v2 episode as RGB uint8 arrays, North (+z) up and East (+x) right like the 2024
pictures (realm/back_to_the_realm/render.py, whose colours they share): the whole map with the active obstacles,
the hero's 11×11 view box, the points (the end only once found, unless asked), the walked trail
and the talent jumps, the cells never in view dimmed (what the agent's explored map lacks); an
episode replayed from its actions as such frames; and the 11×11 view of one observation.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from PIL import Image, ImageDraw

from realm.back_to_the_realm.render import COLORS as COLORS_2024
from realm.back_to_the_realm_v2.constants import (
    CELL_BLOCKED,
    CELL_BUFF,
    CELL_CHEST,
    CELL_END,
    CELL_PASSABLE,
    CELL_START,
    DIRECTIONS,
    GRID_SIZE,
    VIEW_RADIUS,
    VIEW_SIZE,
)
from realm.back_to_the_realm_v2.maps import V2Map

Cell = tuple[int, int]

COLORS = {
    **COLORS_2024,
    "obstacle": (196, 64, 64),
    "obstacle_idle": (120, 104, 96),  # an obstacle of the map that is not active in this episode
    "view": (30, 70, 230),
}
VIEW_COLORS = {
    CELL_BLOCKED: COLORS["blocked"],
    CELL_PASSABLE: COLORS["passable"],
    CELL_START: COLORS["start"],
    CELL_END: COLORS["end"],
    CELL_CHEST: COLORS["chest"],
    CELL_BUFF: COLORS["buff"],
}
SHOW_END = ("found", "always", "never")
FOG = 0.45  # how much of a never-seen cell's colour is left


def cell_to_pixel(x: float, z: float, scale: int) -> tuple[float, float]:
    """Centre of cell (x, z) -> (column, row) pixel of a whole-map picture with `scale` px per cell."""
    return (x + 0.5) * scale, (GRID_SIZE - 1 - z + 0.5) * scale


def _cells_image(grid: np.ndarray, scale: int) -> np.ndarray:
    rgb = np.where(grid[::-1, :, None], COLORS["passable"], COLORS["blocked"]).astype(np.uint8)
    return np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)


def explored_cells(trail: Iterable[Cell]) -> np.ndarray:
    """[z, x] mask of the cells that were within the 11×11 view of some cell of `trail`."""
    seen = np.zeros((GRID_SIZE, GRID_SIZE), dtype=bool)
    for cell in trail:
        _see(seen, cell)
    return seen


def _see(seen: np.ndarray, cell: Cell) -> None:
    x, z = cell
    seen[max(0, z - VIEW_RADIUS):z + VIEW_RADIUS + 1, max(0, x - VIEW_RADIUS):x + VIEW_RADIUS + 1] = True


def _fog(rgb: np.ndarray, explored: np.ndarray, scale: int) -> np.ndarray:
    unseen = np.repeat(np.repeat(~np.asarray(explored, dtype=bool)[::-1, :], scale, axis=0), scale, axis=1)
    out = rgb.astype(np.float32)
    out[unseen] *= FOG
    return out.astype(np.uint8)


def _fill_cells(draw, cells, scale, color):
    for x, z in cells:
        col, row = x * scale, (GRID_SIZE - 1 - z) * scale
        draw.rectangle((col, row, col + scale - 1, row + scale - 1), fill=color)


def _marker(draw, cell, scale, color, shape="square", outline=None):
    cx, cy = cell_to_pixel(*cell, scale)
    r = 1.4 * scale
    if shape == "disc":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=color, outline=outline)
    elif shape == "diamond":
        draw.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=color, outline=outline)
    else:
        draw.rectangle((cx - r, cy - r, cx + r, cy + r), fill=color, outline=outline)


def render_v2_map(
    game_map: V2Map,
    *,
    scale: int = 4,
    obstacle_ids: Iterable[int] = (),
    show_idle_obstacles: bool = True,
    start: Cell | None = None,
    end: Cell | None = None,
    buff: Cell | None = None,
    buff_live: bool = True,
    chests: Sequence[tuple[Cell, bool]] = (),
    hero: Cell | None = None,
    trail: Sequence[Cell] = (),
    jumps: Iterable[tuple[Cell, Cell]] = (),
    explored: np.ndarray | None = None,
) -> np.ndarray:
    """The whole map as an RGB array of (128·scale, 128·scale, 3). Active obstacles red, the
    map's other obstacles dimmed; chests gold (outline once taken), buff cyan diamond (grey
    while cooling), start green disc, end red square, hero blue disc inside its 11×11 view box,
    trail orange, talent jumps magenta lines with a ring at take-off; with `explored` (a [z, x]
    mask, explored_cells) the cells outside it darkened."""
    scale = max(1, int(scale))
    cells = _cells_image(game_map.passable, scale)
    image = Image.fromarray(cells if explored is None else _fog(cells, explored, scale))
    draw = ImageDraw.Draw(image)
    active = set(obstacle_ids)
    for oid, cells in game_map.obstacles.items():
        if oid in active:
            _fill_cells(draw, cells.tolist(), scale, COLORS["obstacle"])
        elif show_idle_obstacles:
            _fill_cells(draw, cells.tolist(), scale, COLORS["obstacle_idle"])
    width = max(1, scale // 2)
    jumps = [(tuple(a), tuple(b)) for a, b in jumps]
    jump_set = set(jumps)
    trail = [tuple(c) for c in trail]
    for a, b in zip(trail[:-1], trail[1:]):
        if (a, b) not in jump_set:
            draw.line([cell_to_pixel(*a, scale), cell_to_pixel(*b, scale)], fill=COLORS["trail"], width=width)
    for a, b in jumps:
        pa, pb = cell_to_pixel(*a, scale), cell_to_pixel(*b, scale)
        draw.line([pa, pb], fill=COLORS["flash"], width=width)
        r = 0.8 * scale
        draw.ellipse((pa[0] - r, pa[1] - r, pa[0] + r, pa[1] + r), outline=COLORS["flash"], width=max(1, scale // 3))
        draw.ellipse((pb[0] - r, pb[1] - r, pb[0] + r, pb[1] + r), fill=COLORS["flash"])
    if start is not None:
        _marker(draw, start, scale, COLORS["start"], "disc")
    if end is not None:
        _marker(draw, end, scale, COLORS["end"])
    for cell, live in chests:
        if live:
            _marker(draw, cell, scale, COLORS["chest"], outline=(90, 60, 0))
        else:
            _marker(draw, cell, scale, None, outline=COLORS["chest_taken"])
    if buff is not None:
        _marker(draw, buff, scale, COLORS["buff"] if buff_live else COLORS["buff_cooling"], "diamond")
    if hero is not None:
        x, z = hero
        col0, row0 = (x - VIEW_RADIUS) * scale, (GRID_SIZE - 1 - z - VIEW_RADIUS) * scale
        draw.rectangle((col0, row0, col0 + VIEW_SIZE * scale - 1, row0 + VIEW_SIZE * scale - 1),
                       outline=COLORS["view"], width=max(1, scale // 3))
        _marker(draw, hero, scale, COLORS["hero"], "disc")
    return np.asarray(image, dtype=np.uint8).copy()


def render_v2_episode(env, *, scale: int = 4, trail: Sequence[Cell] = (), jumps: Iterable[tuple[Cell, Cell]] = (),
                      show_end: str = "found", explored: np.ndarray | None = None) -> np.ndarray:
    """A RealmEnvV2 at this moment. `show_end`: "found" draws the end once it has been in view,
    "always" draws it from the start, "never" hides it; `explored`: render_v2_map's."""
    if show_end not in SHOW_END:
        raise ValueError(f"show_end = {show_end!r} is invalid: allowed {' | '.join(SHOW_END)}")
    e = env.episode
    if e is None:
        raise ValueError("the env has no episode yet: call reset() first")
    end_shown = show_end == "always" or (show_end == "found" and env.end_found)
    return render_v2_map(
        env.map, scale=scale, obstacle_ids=e.obstacle_ids, start=e.start, end=e.end if end_shown else None,
        buff=e.buff, buff_live=env.buff_available, chests=list(zip(e.treasures, [not t for t in env.chests_taken])),
        hero=env.hero, trail=trail, jumps=jumps, explored=explored,
    )


def render_v2_replay(env, usr_conf: dict, seed: int, actions: Sequence[int], steps: Iterable[int], *,
                     scale: int = 3) -> list[np.ndarray]:
    """An episode replayed on `env` from its actions (the env is deterministic for a usr_conf and
    seed): the whole map before each step in `steps`, and after the last action, each with the
    trail and jumps so far, the cells never in view darkened and the end once found."""
    wanted = set(steps)
    env.reset(usr_conf=usr_conf, seed=seed)
    trail, jumps = [env.hero], []
    seen = explored_cells(trail)
    frames = []

    def frame():
        frames.append(render_v2_episode(env, scale=scale, trail=trail, jumps=jumps, explored=seen))

    for i, act in enumerate(actions):
        if i in wanted:
            frame()
        env.step(act)
        trail.append(env.hero)
        if env.last_jump is not None:
            jumps.append(env.last_jump)
        _see(seen, env.hero)
    frame()
    return frames


def render_v2_view(obs: dict, action: int | None = None, scale: int = 16) -> np.ndarray:
    """The observation's 11×11 `map_info` (North up: map_info[i][j] is cell (x-5+i, z-5+j)), the
    hero's cell outlined, optionally the action: a move as a short red arrow, a talent as a long
    magenta one."""
    scale = max(1, int(scale))
    values = np.array([row["values"] for row in obs["map_info"]])  # [i = x offset, j = z offset]
    picture = values.T[::-1]  # rows = z from the top, columns = x
    rgb = np.zeros(picture.shape + (3,), dtype=np.uint8)
    for value, color in VIEW_COLORS.items():
        rgb[picture == value] = color
    image = Image.fromarray(np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1))
    draw = ImageDraw.Draw(image)
    c0 = VIEW_RADIUS * scale
    draw.rectangle((c0, c0, c0 + scale - 1, c0 + scale - 1), outline=COLORS["hero"], width=max(1, scale // 6))
    if action is not None:
        dx, dz = DIRECTIONS[action % 8]
        talent = action >= 8
        length = (VIEW_RADIUS if talent else 2) * scale
        cx = cy = (VIEW_RADIUS + 0.5) * scale
        norm = (dx * dx + dz * dz) ** 0.5
        tip = (cx + length * dx / norm, cy - length * dz / norm)
        draw.line([(cx, cy), tip], fill=COLORS["flash"] if talent else COLORS["arrow"], width=max(1, scale // 4))
    return np.asarray(image, dtype=np.uint8).copy()
