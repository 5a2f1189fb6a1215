"""Env options: every rule the public sources leave UNKNOWN that changes what an agent learns,
as a named constructor keyword (and a run's [env] key of the same name) with the spec's best
guess as default (docs/games/gorge_chase.md prints this table).

OPTIONS: name -> (default, allowed values, why).
CANDIDATES: name -> the readings an env with `randomize_rules` (a run's [env]
randomize_unknown_rules) draws for each episode, so a policy learns what holds under all of them.
"""
from __future__ import annotations

from realm.rule_options import MIXED, RuleOptions

OPTIONS = {
    "monster_distance": (
        "bfs4", ("bfs4", "bfs8", "chebyshev", "manhattan"),
        "what the engine's pathfinding.get_distance returns when a monster ranks its 4 neighbours: "
        "'bfs4' exact 4-connected shortest path (the guess: monsters chase round walls as the guide's "
        "'A*' says); 'bfs8' 8-connected with the diagonal rule; 'chebyshev' / 'manhattan' straight-line "
        "heuristics (monsters can stick behind walls)"),
    "map_order": (
        "cycle", ("cycle", "first"),
        "map_random = false ('按顺序抽取'): 'cycle' = the env's episode counter walks the list "
        "(episode k plays map[k % len(map)], the counter survives a changed list); 'first' = always map[0]"),
    "random_values_in_env_info": (
        "resolved", ("resolved", "raw"),
        "monster_interval / monster_speedup configured -1: env_info shows the value drawn at reset "
        "('resolved', as the script overwrites its config) or -1 ('raw')"),
    "diagonal_rule": (
        "one_free", ("one_free", "both_free", "target_only"),
        "a diagonal single-cell move (hero moves, the monsters' greedy fallback): the target must be "
        "walkable and 'one_free' = at least one of the two orthogonal cells walkable (the guide's wording), "
        "'both_free' = both, 'target_only' = no corner rule"),
    "capture_radius": (
        1, range(0, 3),
        "caught when a monster is within this Chebyshev distance after the step (1 = the monster's "
        "3x3 square, the guide's wording)"),
    "hero_move_bonus": (
        0, range(0, 4),
        "robot-profile player_move_bonus added to every move's cells (the script clamps 0..3; its value "
        "on the platform is not public)"),
    "monster_speed_bonus": (
        0, range(0, 4),
        "robot-profile monster_speed_bonus added to the monsters' base speed 1 (clamped 0..3 by the script; "
        "value not public)"),
    "gorge_extra_info": (
        "full", ("full", "withheld", MIXED),
        "what env_obs's extra_info holds: 'full' = frame_state (every chest and buff, the monsters' true "
        "cells), map_id, result_code and result_message, as the 15.0.1 env returns them; 'withheld' = "
        "result_code and result_message only (frame_state and map_id gone), as an evaluation that hands "
        "the package no global information would; 'mixed' = each episode one of the "
        "two, drawn from the rule RNG (one agent trained for both)"),
}

#: The readings drawn per episode with `randomize_rules`. Not drawn: map_order (which map an
#: episode plays is the run's curriculum, not a rule a step meets) and gorge_extra_info (what the
#: host hands the package: set it per run). Narrowed: monster_distance to the path distances
#: (straight-line heuristics leave monsters stuck behind walls, against the guide's 'A*' chasers);
#: the robot-profile bonuses to 0 | 1 (the dumps show monster speed 1; a bonus of 2 or 3 makes
#: another game).
CANDIDATES = {
    "monster_distance": ("bfs4", "bfs8"),
    "random_values_in_env_info": ("resolved", "raw"),
    "diagonal_rule": ("one_free", "both_free", "target_only"),
    "capture_radius": (0, 1, 2),
    "hero_move_bonus": (0, 1),
    "monster_speed_bonus": (0, 1),
}


RULES = RuleOptions(OPTIONS, CANDIDATES)


def check_option(name: str, value):
    """The value if allowed, else ValueError naming the option and what it allows."""
    return RULES.check(name, value)


def defaults() -> dict:
    return RULES.defaults()


def options_table() -> str:
    """The options as a markdown table (name, default, allowed, drawn by randomize_unknown_rules, why)."""
    return RULES.table()


def episode_value(name: str, value, rng):
    """What an episode plays of option `name` set to `value` (a MIXED reading drawn from `rng`)."""
    return RULES.episode_value(name, value, rng)
