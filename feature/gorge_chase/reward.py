"""Reward shaping for gorge_chase (feature.terms' way): every term named, weighted, reported on
its own, declared once in `TERM_TABLE`; `RewardConfig` is the TOML's [reward_gorge].

`reward_shaping(prev, cur, action, cfg)` compares the `StepView`s of two consecutive steps
(`step_view(memory, terminated, truncated)`, a snapshot of the episode's GorgeMemory) and
returns `(total, terms)`. The events weigh what the game scores, in units of 100 points: a chest
1.0, a step survived 0.015 (1.5 points); being caught ends the scoring, so it costs what the
remaining steps would have scored, roughly; the danger terms read the monsters' path distance
over the view (they chase 4-connected).
"""
from __future__ import annotations

from dataclasses import dataclass

from feature.gorge_chase.constants import FAR, NUM_MOVES
from feature.gorge_chase.memory import GorgeMemory
from feature.gorge_chase.paths import UNKNOWN_STEPS
from feature.terms import Shaping, Term

DANGER_CELLS = 5  # the danger term grows as the nearest monster comes within this many path cells


@dataclass(frozen=True)
class StepView:
    """What the reward reads of one step, in cells and counts."""

    hero: tuple[int, int]
    monster_dist: int  # path cells from the nearest monster in view (FAR + 1: none within FAR)
    chest_steps: int | None  # path steps to the nearest live chest known (memory.chest_steps), None: none near
    chest_count: int = 0
    buff_count: int = 0
    flash_ready: bool = True
    new_cells: int = 0
    revisit: float = 0.0
    terminated: bool = False
    truncated: bool = False


def step_view(m: GorgeMemory, terminated: bool = False, truncated: bool = False) -> StepView:
    steps = int(m.chest_steps()[1, 1])
    return StepView(hero=m.hero, monster_dist=min(m.monster_distance(), FAR + 1),
                    chest_steps=None if steps == UNKNOWN_STEPS else steps,
                    chest_count=m.chest_count, buff_count=m.buff_count, flash_ready=bool(m.legal_action[NUM_MOVES]),
                    new_cells=m.new_cells, revisit=m.revisit, terminated=bool(terminated), truncated=bool(truncated))


@dataclass(frozen=True)
class StepChange:
    prev: StepView
    cur: StepView
    is_flash: bool
    stuck: bool  # a move that left the hero on its cell


def _monster_gain(s: StepChange) -> float:
    if s.prev.monster_dist > FAR and s.cur.monster_dist > FAR:
        return 0.0
    return float(s.cur.monster_dist - s.prev.monster_dist)


def _danger(s: StepChange) -> float:
    return max(0.0, DANGER_CELLS - s.cur.monster_dist) / DANGER_CELLS


def _chest_progress(s: StepChange) -> float:
    """Path steps gained toward the nearest live chest (whichever it is: a potential, so walking
    away costs what walking toward gave); nothing on the step a chest is taken."""
    if s.prev.chest_steps is None or s.cur.chest_steps is None or s.cur.chest_count > s.prev.chest_count:
        return 0.0
    return float(s.prev.chest_steps - s.cur.chest_steps)


TERM_TABLE: tuple[Term, ...] = (
    Term("survive", 0.015, "every step survived (1.5 points)", lambda s: 0.0 if s.cur.terminated else 1.0),
    Term("chest_pickup", 1.0, "per chest collected (100 points)", lambda s: s.cur.chest_count - s.prev.chest_count),
    Term("buff_pickup", 0.05, "per speed buff collected", lambda s: s.cur.buff_count - s.prev.buff_count),
    Term("caught", -1.0, "caught by a monster (the episode ends, its remaining steps unscored)",
         lambda s: 1.0 if s.cur.terminated else 0.0),
    Term("monster_gain", 0.01, "per path cell gained from the nearest monster in view (a flash's jump counts)",
         _monster_gain),
    Term("danger", -0.05, f"the nearest monster within {DANGER_CELLS} path cells: (5 - cells) / 5", _danger),
    Term("chest_progress", 0.005, "per path step gained toward the nearest live chest known", _chest_progress),
    Term("explore", 0.0002, "per cell first seen", lambda s: float(s.cur.new_cells)),
    Term("stuck", -0.01, "a move that left the hero on its cell", lambda s: 1.0 if s.stuck else 0.0),
    Term("revisit", 0.0, "x visits on the new cell before this step (0.2 each, capped at 1)", lambda s: s.cur.revisit),
    Term("flash", 0.0, "per flash fired (a price on the cooldown)", lambda s: 1.0 if s.is_flash else 0.0),
)


def step_change(prev: StepView, cur: StepView, action: int, cfg=None) -> StepChange:
    is_flash = action >= NUM_MOVES and prev.flash_ready
    return StepChange(prev=prev, cur=cur, is_flash=is_flash,
                      stuck=not is_flash and not cur.terminated and cur.hero == prev.hero)


SHAPING = Shaping(TERM_TABLE, step_change, "Weights of the gorge_chase shaped reward ([reward_gorge]): one per "
                  "entry of feature.gorge_chase.reward's TERM_TABLE, plus scale (multiplies every term).", __name__)
TERMS, RewardConfig, reward_shaping = SHAPING.terms, SHAPING.config, SHAPING
