"""StepView: the small per-step summary that reward shaping compares between two consecutive
steps. Reward code never reads protocol objects directly, so its tests build StepViews by hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from feature.back_to_the_realm.constants import GRID_DISTANCE_SCALE, NUM_TREASURE_SLOTS, VIEW_RADIUS, VIEW_SIZE, WORLD_SIZE, as_grid, is_null


def _cells(rel) -> float | None:
    """BFS distance in cells, None for a null object."""
    return None if is_null(rel) else rel.grid_distance * GRID_DISTANCE_SCALE


@dataclass
class StepView:
    """What reward shaping needs from one step, in plain units (world units, BFS cells)."""

    pos: tuple[float, float]  # hero world (x, z)
    end_dist: float | None  # BFS cells to the end; None when null
    chest_dists: dict[int, float] = field(default_factory=dict)  # live chest id -> BFS cells
    chest_count: int = 0  # chests collected so far
    buff_count: int = 0
    flash_count: int = 0  # flashes used so far
    flash_ready: bool = True  # legal_act[1]
    speed_up: bool = False  # buff active (steps are 1000 long instead of 700)
    memory: float = 0.0  # memory_map at the hero's cell: 0.2 × earlier visits, capped at 1
    obstacle: np.ndarray | None = None  # 51×51 passable window centred on the hero's cell
    terminated: bool = False  # reached the end on this step
    truncated: bool = False  # hit max_step on this step


def step_view(obs, score=None, env_info=None,
              terminated: bool = False, truncated: bool = False) -> StepView:
    """Build the StepView of one step from the env's outputs (after reset: score None)."""
    f = obs.feature
    if env_info is not None:
        hero = env_info.frame_state.heroes[0]
        pos, speed_up = (float(hero.pos.x), float(hero.pos.z)), bool(hero.speed_up)
    else:
        pos, speed_up = (f.norm_pos.x * WORLD_SIZE, f.norm_pos.z * WORLD_SIZE), False
    chest_dists = {}
    for i in range(NUM_TREASURE_SLOTS):
        d = _cells(f.treasure_pos[i])
        if d is not None:
            chest_dists[i + 1] = d
    return StepView(
        pos=pos,
        end_dist=_cells(f.end_pos),
        chest_dists=chest_dists,
        chest_count=int(score.treasure_count) if score is not None else 0,
        buff_count=int(score.buff_count) if score is not None else 0,
        flash_count=int(score.talent_count) if score is not None else 0,
        flash_ready=bool(obs.legal_act[1]),
        speed_up=speed_up,
        memory=float(f.memory_map[VIEW_RADIUS * VIEW_SIZE + VIEW_RADIUS]),
        obstacle=as_grid(f.obstacle_map),
        terminated=bool(terminated),
        truncated=bool(truncated),
    )
