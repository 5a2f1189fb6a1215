"""Env options: every rule the public sources leave UNKNOWN that changes what an agent learns,
as a named constructor keyword with the spec's best guess as default (docs/GORGE_RULES.md
prints this table).

OPTIONS: name -> (default, allowed values, why).
"""
from __future__ import annotations

from numbers import Integral

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
}


def check_option(name: str, value):
    """The value if allowed, else ValueError naming the option and what it allows."""
    default, allowed, why = OPTIONS[name]
    if isinstance(default, str):
        ok = isinstance(value, str) and value in allowed
    else:
        ok = isinstance(value, Integral) and not isinstance(value, bool) and value in allowed
    if not ok:
        shown = (f"an int in {allowed.start}..{allowed.stop - 1}" if isinstance(allowed, range)
                 else " | ".join(repr(v) for v in allowed))
        raise ValueError(f"option {name} = {value!r} is invalid: allowed {shown} ({why})")
    return value if isinstance(default, str) else int(value)


def defaults() -> dict:
    return {name: spec[0] for name, spec in OPTIONS.items()}


def options_table() -> str:
    """The options as a markdown table (name, default, allowed, why)."""
    lines = ["| option | default | allowed | why |", "| --- | --- | --- | --- |"]
    for name, (default, allowed, why) in OPTIONS.items():
        shown = f"{allowed.start}..{allowed.stop - 1}" if isinstance(allowed, range) else ", ".join(map(repr, allowed))
        lines.append(f"| `{name}` | `{default!r}` | {shown} | {why} |")
    return "\n".join(lines)
