"""Reward shaping for robot_vacuum (feature.terms' way): every term named, weighted, reported on
its own, declared once in `TERM_TABLE`; `RewardConfig` is the TOML's [reward_vacuum].

`reward_shaping(prev, cur, action, cfg)` compares the `StepView`s of two consecutive steps
(`step_view(memory, terminated, truncated)`, a snapshot of the episode's VacuumMemory) and
returns `(total, terms)`. The game scores the cells the hero cleans, so a cell weighs 0.1; an
episode that ends early (an official robot's contact, an empty battery) scores nothing more, so
each costs what about fifty cells would give. The battery terms read the reserve
(layout.reserve_of): the battery left on arriving at the nearest charger, the quantity that
decides whether the hero can still get home (full when the battery lasts the episode).
"""
from __future__ import annotations

from dataclasses import dataclass

from feature.bitgrid import UNKNOWN_STEPS
from feature.robot_vacuum.layout import RESERVE_LOW, charger_reserve, danger, reserve_of
from feature.robot_vacuum.memory import VacuumMemory
from feature.terms import Shaping, Term

RESERVE_CAP = 2.0  # the low_reserve term's value at most (twice the threshold's shortfall)


@dataclass(frozen=True)
class StepView:
    """What the reward reads of one step, in cells and counts."""

    hero: tuple[int, int]
    score: int  # cells the hero cleaned so far
    battery: int
    battery_max: int
    steps_left: int  # max_step - step_no
    charger_steps: int  # path steps to the nearest charger (memory.charger_steps; CHARGER_LIMIT when none near)
    dirt_steps: int | None  # path steps to the nearest dirt known, None: none within reach
    robot_gap: int  # Chebyshev distance to the nearest official robot known (memory.FAR_ROBOT: none known)
    new_cells: int = 0
    revisit: float = 0.0
    terminated: bool = False
    truncated: bool = False

    @property
    def reserve(self) -> int:
        """layout.reserve_of this step."""
        return reserve_of(self.battery, self.battery_max, self.charger_steps, self.steps_left)

    @property
    def low(self) -> float:
        """The reserve's shortfall below RESERVE_LOW × battery_max, in units of that threshold."""
        threshold = RESERVE_LOW * self.battery_max
        return min(max(0.0, (threshold - self.reserve) / threshold), RESERVE_CAP)


def step_view(m: VacuumMemory, terminated: bool = False, truncated: bool = False) -> StepView:
    steps, _, _ = charger_reserve(m)
    dirt = int(m.dirt_steps()[1, 1])
    return StepView(hero=m.hero, score=m.score, battery=m.battery, battery_max=m.battery_max,
                    steps_left=max(m.max_step - m.step_no, 0), charger_steps=steps,
                    dirt_steps=None if dirt == UNKNOWN_STEPS else dirt, robot_gap=m.robot_gap(*m.hero),
                    new_cells=m.new_cells, revisit=m.revisit, terminated=bool(terminated), truncated=bool(truncated))


@dataclass(frozen=True)
class StepChange:
    prev: StepView
    cur: StepView
    charged: bool  # the battery went up: the hero stepped onto a charger
    stuck: bool  # a move that left the hero on its cell


def _recharge(s: StepChange) -> float:
    """The share of the battery a charge refilled, when the battery would not have lasted the
    episode without it (a charge in the last steps is worth nothing)."""
    prev = s.prev
    if not s.charged or prev.battery >= prev.steps_left:
        return 0.0
    return (prev.battery_max - prev.battery) / prev.battery_max


def _charger_progress(s: StepChange) -> float:
    """Path steps gained toward the nearest charger while the reserve was low (a potential: walking
    away costs what walking toward gave); nothing on the step that charges."""
    if s.prev.low <= 0.0 or s.charged or s.cur.terminated:
        return 0.0
    return float(max(-1, min(s.prev.charger_steps - s.cur.charger_steps, 1)))


def _dirt_progress(s: StepChange) -> float:
    """Path steps gained toward the nearest dirt known; nothing on a step that cleans."""
    if s.prev.dirt_steps is None or s.cur.dirt_steps is None or s.cur.score > s.prev.score:
        return 0.0
    return float(max(-1, min(s.prev.dirt_steps - s.cur.dirt_steps, 1)))


def _ended_by(s: StepChange, battery_empty: bool) -> float:
    return 1.0 if s.cur.terminated and (s.cur.battery <= 0) == battery_empty else 0.0


TERM_TABLE: tuple[Term, ...] = (
    Term("clean", 0.1, "per cell the hero cleaned (the game's score)", lambda s: float(s.cur.score - s.prev.score)),
    Term("collision", -5.0, "an official robot's contact ended the episode (its remaining steps unscored)",
         lambda s: _ended_by(s, battery_empty=False)),
    Term("battery_out", -5.0, "the battery ran out and ended the episode", lambda s: _ended_by(s, battery_empty=True)),
    Term("low_reserve", -0.05, f"every step the reserve (the battery left on arriving at the nearest charger) lies "
         f"below {RESERVE_LOW} x battery_max: the shortfall in units of that, at most {RESERVE_CAP}",
         lambda s: 0.0 if s.cur.terminated else s.cur.low),
    Term("recharge", 0.5, "a charge the episode needed: the share of the battery it refilled", _recharge),
    Term("charger_progress", 0.05, "per path step gained toward the nearest charger while the reserve is low",
         _charger_progress),
    Term("dirt_progress", 0.01, "per path step gained toward the nearest dirt known", _dirt_progress),
    Term("danger", -0.1, "an official robot near after the step: 1 in contact range, 2/3 at 2 cells, 1/3 at 3",
         lambda s: 0.0 if s.cur.terminated else danger(s.cur.robot_gap)),
    Term("explore", 0.0005, "per map cell first seen", lambda s: float(s.cur.new_cells)),
    Term("stuck", -0.02, "a move that left the hero on its cell (the step and the battery spent)",
         lambda s: 1.0 if s.stuck else 0.0),
    Term("revisit", 0.0, "x visits on the new cell before this step (0.2 each, capped at 1)", lambda s: s.cur.revisit),
)


def step_change(prev: StepView, cur: StepView, action: int, cfg=None) -> StepChange:
    charged = cur.battery > prev.battery
    return StepChange(prev=prev, cur=cur, charged=charged,
                      stuck=not cur.terminated and cur.hero == prev.hero and not charged
                      and cur.battery < cur.battery_max)


SHAPING = Shaping(TERM_TABLE, step_change, "Weights of the robot_vacuum shaped reward ([reward_vacuum]): one per "
                  "entry of feature.robot_vacuum.reward's TERM_TABLE, plus scale (multiplies every term).", __name__)
TERMS, RewardConfig, reward_shaping = SHAPING.terms, SHAPING.config, SHAPING
