"""The reward terms both Back to the Realm games (2024 and v2) share: progress toward the end and
the chest headed for, the pick-ups, and what the game scores at a step and at the end. Each
game's table takes them beside its own terms; they read its `StepChange` (is_flash, end_delta,
chest_delta) and its step views (chest_count, buff_count, terminated, truncated). The events
weigh what the game scores, in units of 100 points: a chest 1.0, a step -0.002, the end 1.5."""
from __future__ import annotations

from feature.terms import Term

PROGRESS: tuple[Term, ...] = (
    Term("end_progress", 0.005, "per path cell walked toward the end (the game's end_delta)",
         lambda s: 0.0 if s.is_flash else s.end_delta),
    Term("chest_progress", 0.01, "per path cell walked toward the chest headed for (its pick-up counts the cells "
         "left; the next target's distance is no penalty); above end_progress so a detour for a chest pays",
         lambda s: 0.0 if s.is_flash else s.chest_delta),
    Term("flash_progress", 0.005, "per path cell a flash gains toward the end and the chest",
         lambda s: s.end_delta + s.chest_delta if s.is_flash else 0.0),
)

PICKUPS: tuple[Term, ...] = (
    Term("chest_pickup", 1.0, "per chest collected (100 points)", lambda s: s.cur.chest_count - s.prev.chest_count),
    Term("buff_pickup", 0.02, "per buff collected", lambda s: s.cur.buff_count - s.prev.buff_count),
)

SCORED: tuple[Term, ...] = (
    Term("step", -0.002, "every step (0.2 points)", lambda s: 1.0),
    Term("win", 1.5, "reaching the end (150 points)", lambda s: 1.0 if s.cur.terminated else 0.0),
    # 0 by default: the step limit is not in the observation and a truncated episode bootstraps
    # V(s') as if it went on, so a penalty there lands, through GAE, on the last ~30 actions of
    # every timed-out episode whatever they were (tools/back_to_the_realm/bench_near_end.py: 7 of 10 seeds learn
    # with -2, 10 of 10 and 4x faster with 0). The game's 0 on a timeout is carried by the win
    # bonus, chests_left and the step cost.
    Term("timeout", 0.0, "hitting max_step without reaching the end (the game then scores 0)",
         lambda s: 1.0 if s.cur.truncated and not s.cur.terminated else 0.0),
)
