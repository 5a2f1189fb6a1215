"""Reward shaping for back_to_the_realm_v2, in feature.back_to_the_realm.reward's style: every term named,
weighted, reported on its own, declared once in `TERM_TABLE`.

`reward_shaping(prev, cur, action, cfg)` compares the `StepView`s of two consecutive steps
(`step_view(memory, terminated, truncated)`, a snapshot of the episode's feature.back_to_the_realm_v2.memory) and
returns `(total, terms)`; `sum(terms.values()) == total` and each term includes `cfg.scale`.
`RewardConfig` (the TOML's [reward_v2]) is built from the table (with the terms both realm
games share, feature.back_to_the_realm.realm_terms): adding a term is one entry
here plus, to tune it, its weight in conf/back_to_the_realm_v2.toml. The events weigh what the game scores, in
units of 100 points: a chest 1.0, reaching the end 1.5, a step -0.002.
"""
from __future__ import annotations

from dataclasses import dataclass

from feature.back_to_the_realm_v2.constants import NUM_MOVES
from feature.back_to_the_realm_v2.memory import V2Memory
from feature.back_to_the_realm.realm_terms import PICKUPS, PROGRESS, SCORED
from feature.terms import Shaping, Term


@dataclass(frozen=True)
class StepView:
    """What the reward reads of one step, in cells and counts."""

    hero: tuple[int, int]
    end_dist: int | None  # path cells to the end over the explored map (None: unknown)
    end_field: object  # the GoalField end_dist was read from: a progress counts only on one field
    chest_target: int | None  # the chest headed for
    chest_dist: int | None
    chest_field: object
    chest_count: int = 0
    buff_count: int = 0
    talent_ready: bool = True
    revisit: float = 0.0  # visits on the new cell before this step's (0.2 each, capped at 1)
    new_cells: int = 0  # cells first seen on this step
    live_chests: int = 0  # chests known to be still on the map
    terminated: bool = False
    truncated: bool = False


def _at(field, hero) -> int | None:
    if field is None:
        return None
    d = field.at(*hero)
    return d if d >= 0 else None


def step_view(m: V2Memory, terminated: bool = False, truncated: bool = False) -> StepView:
    return StepView(hero=m.hero, end_dist=_at(m.end_field, m.hero), end_field=m.end_field,
                    chest_target=m.target_chest, chest_dist=_at(m.chest_field, m.hero), chest_field=m.chest_field,
                    chest_count=m.chest_count, buff_count=m.buff_count, talent_ready=m.talent_ready,
                    revisit=m.revisit, new_cells=m.new_cells, live_chests=len(m.live_chests()),
                    terminated=bool(terminated), truncated=bool(truncated))


@dataclass(frozen=True)
class StepChange:
    prev: StepView
    cur: StepView
    is_flash: bool  # a talent that fired
    end_delta: float  # path cells gained toward the end (on one field)
    chest_delta: float  # path cells gained toward the chest headed for (its pick-up counts what was left)
    stuck: bool  # a move that left the hero on its cell
    ended: bool


def _end_delta(prev: StepView, cur: StepView) -> float:
    if cur.terminated and prev.end_dist is not None:
        return float(prev.end_dist)
    if prev.end_dist is None or cur.end_dist is None or prev.end_field is not cur.end_field:
        return 0.0
    return float(prev.end_dist - cur.end_dist)


def _chest_delta(prev: StepView, cur: StepView) -> float:
    if prev.chest_dist is None:
        return 0.0
    if cur.chest_count > prev.chest_count:
        return float(prev.chest_dist) if cur.chest_target != prev.chest_target else 0.0
    if cur.chest_dist is None or prev.chest_field is not cur.chest_field:
        return 0.0
    return float(prev.chest_dist - cur.chest_dist)


TERM_TABLE: tuple[Term, ...] = (
    *PROGRESS,  # feature.back_to_the_realm.realm_terms: end_delta and chest_delta are path cells over the explored map
    *PICKUPS,
    Term("explore", 0.0005, "per cell first seen", lambda s: float(s.cur.new_cells)),
    Term("stuck", -0.005, "a move that left the hero on its cell", lambda s: 1.0 if s.stuck else 0.0),
    Term("revisit", -0.002, "x visits on the new cell before this step (0.2 each, capped at 1)",
         lambda s: s.cur.revisit),
    *SCORED,
    Term("chests_left", -0.5, "per chest known to be on the map when the episode ends either way",
         lambda s: float(s.cur.live_chests) if s.ended else 0.0),
)


def step_change(prev: StepView, cur: StepView, action: int, cfg=None) -> StepChange:
    is_flash = action >= NUM_MOVES and prev.talent_ready
    stuck = not is_flash and not cur.terminated and cur.hero == prev.hero
    return StepChange(prev=prev, cur=cur, is_flash=is_flash, end_delta=_end_delta(prev, cur),
                      chest_delta=_chest_delta(prev, cur), stuck=stuck, ended=cur.terminated or cur.truncated)


SHAPING = Shaping(TERM_TABLE, step_change, "Weights of the v2 shaped reward ([reward_v2]): one per entry of "
                  "feature.back_to_the_realm_v2.reward's TERM_TABLE, plus scale (multiplies every term).", __name__)
TERMS, RewardConfig, reward_shaping = SHAPING.terms, SHAPING.config, SHAPING
