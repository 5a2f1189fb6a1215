"""Reward shaping: every term named, weighted, reported on its own, and declared once.

`reward_shaping(prev, cur, action, cfg)` compares the StepViews (feature.back_to_the_realm.unpack) of two
consecutive steps and returns `(total, terms)`; `sum(terms.values()) == total` and each term
already includes `cfg.scale`. The episode loop sums terms per episode, so the monitor shows
which term drives learning.

A term is one entry of `TERM_TABLE`: its name, default weight, what it measures and how (a
function of the step's `StepChange`). `RewardConfig` (the TOML's [reward] section) is built from
the table, so adding a term is one entry here plus, to tune it, its weight in conf/back_to_the_realm.toml.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from feature.back_to_the_realm.constants import BUFF_STEP_LENGTH, FLASH_DISTANCE, STEP_LENGTH, UNIT_VECTORS, VIEW_RADIUS, cell_of
from feature.back_to_the_realm.layout import NUM_MOVES
from feature.back_to_the_realm.realm_terms import PICKUPS, PROGRESS, SCORED
from feature.terms import Shaping, Term
from feature.back_to_the_realm.unpack import StepView


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


@dataclass(frozen=True)
class StepChange:
    """What the terms read about one step: the two views, the action, and what it did."""

    prev: StepView
    cur: StepView
    is_flash: bool  # a flash that fired (the action was a flash and it was ready)
    end_delta: float  # BFS cells gained toward the end
    chest_delta: float  # BFS cells gained toward the chest nearest at the previous step
    wall_bump: bool  # a move that stopped short against an obstacle
    flash_wall: bool  # a flash that stopped short, its target blocked or off the map
    ended: bool  # the episode ended on this step, either way


TERM_TABLE: tuple[Term, ...] = (
    *PROGRESS,  # feature.back_to_the_realm.realm_terms: end_delta and chest_delta are BFS cells over the whole map
    *PICKUPS,
    Term("wall_bump", -0.005, "a move that stopped short (< blocked_ratio of 700, 1000 with the buff) with an "
         "obstacle on its path in the previous obstacle map", lambda s: 1.0 if s.wall_bump else 0.0),
    Term("flash_wall", -0.05, "a flash that stopped short of 8000 units with its target blocked or off the map",
         lambda s: 1.0 if s.flash_wall else 0.0),
    Term("revisit", -0.002, "x memory at the hero's new cell (0.2 per earlier visit, capped at 1)",
         lambda s: s.cur.memory),
    *SCORED,
    Term("chests_left", -1.0, "per chest still on the map when the episode ends either way",
         lambda s: float(len(s.cur.chest_dists)) if s.ended else 0.0),
)


def _validate(cfg) -> None:
    if not 0.0 < cfg.blocked_ratio <= 1.0:
        raise ValueError(f"blocked_ratio must be in (0, 1], got {cfg.blocked_ratio}")


def step_change(prev: StepView, cur: StepView, action: int, cfg) -> StepChange:
    is_flash = action >= NUM_MOVES and prev.flash_ready
    moved = _displacement(prev, cur)
    wall_bump = flash_wall = False
    if not cur.terminated:  # reaching the end may stop the hero mid-step
        if is_flash:
            flash_wall = (moved < cfg.blocked_ratio * FLASH_DISTANCE
                          and _blocked_on_path(prev, action, FLASH_DISTANCE, (1.0,)))
        else:
            length = BUFF_STEP_LENGTH if prev.speed_up else STEP_LENGTH
            wall_bump = (moved < cfg.blocked_ratio * length
                         and _blocked_on_path(prev, action, length, (1 / 3, 2 / 3, 1.0)))
    return StepChange(prev=prev, cur=cur, is_flash=is_flash, end_delta=_end_delta(prev, cur),
                      chest_delta=_chest_delta(prev, cur), wall_bump=wall_bump, flash_wall=flash_wall,
                      ended=cur.terminated or cur.truncated)


SHAPING = Shaping(
    TERM_TABLE, step_change,
    "Weights of the shaped reward ([reward]): one per entry of TERM_TABLE, plus scale and blocked_ratio. The "
    "events weigh what the game scores, in units of 100 points: a chest 1.0, a step -0.002, reaching the end 1.5; "
    "the dense progress terms only guide the way (100 cells toward a chest are worth one chest).", __name__,
    extra=[("blocked_ratio", float, 0.5)], validate=_validate)  # a move covering less of its length was blocked
TERMS, RewardConfig, reward_shaping = SHAPING.terms, SHAPING.config, SHAPING
