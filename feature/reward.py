"""Reward shaping: every term named, weighted in `RewardConfig`, reported on its own.

`reward_shaping(prev, cur, action, cfg)` compares the StepViews (feature.unpack) of two
consecutive steps and returns `(total, terms)`; `sum(terms.values()) == total` and each term
already includes `cfg.scale`. The episode loop sums terms per episode, so the monitor shows
which term drives learning.

Terms (weight in RewardConfig of the same name):
  end_progress    per BFS cell walked toward the end
  chest_progress  per BFS cell walked toward the chest that was nearest at the previous step
                  (a pick-up counts the last cells; the next target's distance is no penalty)
  flash_progress  per BFS cell gained toward the end and that chest on a flash step
  chest_pickup    per chest collected
  buff_pickup     per buff collected
  wall_bump       a move that stopped short (< blocked_ratio of 700, 1000 with the buff) with an
                  obstacle on its path in the previous obstacle map
  flash_wall      a flash that stopped short of 8000 units with its target blocked or off the map
  revisit         × memory at the hero's new cell (0.2 per earlier visit, capped at 1)
  step            every step
  win             reaching the end
  timeout         hitting max_step without reaching the end (the game then scores 0)
  chests_left     per chest still on the map when the episode ends either way
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from feature.layout import NUM_MOVES
from feature.unpack import StepView
from realm.constants import BUFF_STEP_LENGTH, FLASH_DISTANCE, STEP_LENGTH, VIEW_RADIUS
from realm.env import UNIT_VECTORS
from realm.maps import cell_of


@dataclass
class RewardConfig:
    """Weights of the shaped reward. Defaults: dense BFS progress dominates, events are sparse
    bonuses on the same scale as ~50 cells of progress, the step penalty is small."""

    end_progress: float = 0.1
    chest_progress: float = 0.2  # above end_progress: a detour for a chest pays
    flash_progress: float = 0.1
    chest_pickup: float = 5.0
    buff_pickup: float = 0.5
    wall_bump: float = -0.2
    flash_wall: float = -2.0
    revisit: float = -0.05
    step: float = -0.01
    win: float = 10.0
    timeout: float = -5.0
    chests_left: float = -1.0
    scale: float = 1.0  # multiplies every term
    blocked_ratio: float = 0.5  # a move covering less than this fraction of its length was blocked

    def validate(self):
        if not 0.0 < self.blocked_ratio <= 1.0:
            raise ValueError(f"blocked_ratio must be in (0, 1], got {self.blocked_ratio}")
        if self.scale <= 0:
            raise ValueError(f"scale must be > 0, got {self.scale}")


TERMS = ("end_progress", "chest_progress", "flash_progress", "chest_pickup", "buff_pickup", "wall_bump",
         "flash_wall", "revisit", "step", "win", "timeout", "chests_left")


def _displacement(prev: StepView, cur: StepView) -> float:
    return math.hypot(cur.pos[0] - prev.pos[0], cur.pos[1] - prev.pos[1])


def _blocked_on_path(view: StepView, action: int, length: float, points: tuple[float, ...]) -> bool:
    """True when a point at one of the fractions `points` of a straight move of `length` from
    the hero lies on a blocked (or off-map) cell of the view's obstacle window."""
    if view.obstacle is None:
        return True  # no map to confirm with: trust the displacement alone
    dx, dz = UNIT_VECTORS[action % NUM_MOVES]  # the env's own direction vectors
    xc, zc = cell_of(*view.pos)
    for frac in points:
        txc, tzc = cell_of(view.pos[0] + dx * length * frac, view.pos[1] + dz * length * frac)
        row, col = VIEW_RADIUS + tzc - zc, VIEW_RADIUS + txc - xc
        inside = 0 <= row < view.obstacle.shape[0] and 0 <= col < view.obstacle.shape[1]
        if not inside or view.obstacle[row, col] == 0:
            return True
    return False


def _end_delta(prev: StepView, cur: StepView) -> float:
    cur_end = 0.0 if cur.terminated else cur.end_dist
    if prev.end_dist is None or cur_end is None:
        return 0.0
    return prev.end_dist - cur_end


def _chest_delta(prev: StepView, cur: StepView) -> float:
    """Cells gained toward the chest nearest at the previous step; its pick-up counts as 0 left."""
    if not prev.chest_dists:
        return 0.0
    target = min(prev.chest_dists, key=prev.chest_dists.get)
    if target in cur.chest_dists:
        return prev.chest_dists[target] - cur.chest_dists[target]
    if cur.chest_count > prev.chest_count:
        return prev.chest_dists[target]
    return 0.0  # vanished without a pick-up (became unreachable): no signal


def reward_shaping(prev: StepView, cur: StepView, action: int, cfg: RewardConfig) -> tuple[float, dict[str, float]]:
    """Shaped reward of the step from `prev` to `cur` taken with `action` -> (total, terms)."""
    is_flash = action >= NUM_MOVES and prev.flash_ready
    moved = _displacement(prev, cur)
    end_delta, chest_delta = _end_delta(prev, cur), _chest_delta(prev, cur)
    ended = cur.terminated or cur.truncated

    wall_bump = flash_wall = False
    if not cur.terminated:  # reaching the end may stop the hero mid-step
        if is_flash:
            flash_wall = (moved < cfg.blocked_ratio * FLASH_DISTANCE
                          and _blocked_on_path(prev, action, FLASH_DISTANCE, (1.0,)))
        else:
            length = BUFF_STEP_LENGTH if prev.speed_up else STEP_LENGTH
            wall_bump = (moved < cfg.blocked_ratio * length
                         and _blocked_on_path(prev, action, length, (1 / 3, 2 / 3, 1.0)))

    raw = {
        "end_progress": 0.0 if is_flash else cfg.end_progress * end_delta,
        "chest_progress": 0.0 if is_flash else cfg.chest_progress * chest_delta,
        "flash_progress": cfg.flash_progress * (end_delta + chest_delta) if is_flash else 0.0,
        "chest_pickup": cfg.chest_pickup * (cur.chest_count - prev.chest_count),
        "buff_pickup": cfg.buff_pickup * (cur.buff_count - prev.buff_count),
        "wall_bump": cfg.wall_bump if wall_bump else 0.0,
        "flash_wall": cfg.flash_wall if flash_wall else 0.0,
        "revisit": cfg.revisit * cur.memory,
        "step": cfg.step,
        "win": cfg.win if cur.terminated else 0.0,
        "timeout": cfg.timeout if cur.truncated and not cur.terminated else 0.0,
        "chests_left": cfg.chests_left * len(cur.chest_dists) if ended else 0.0,
    }
    terms = {name: float(value * cfg.scale) for name, value in raw.items()}
    return sum(terms.values()), terms
