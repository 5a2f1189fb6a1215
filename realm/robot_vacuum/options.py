"""Env options: every rule of robot_vacuum the public sources leave UNKNOWN, as a named
constructor keyword with the spec's best guess as default (docs/games/robot_vacuum.md prints this
table; the spec is ../shared/kaiwu_vacuum/SPEC_DRAFT.md, its § numbers below).

OPTIONS: name -> (default, allowed values, why).
CANDIDATES: name -> the readings an env with `randomize_rules` draws for each episode, so a
policy learns what holds under all of them.
"""
from __future__ import annotations

from realm.rule_options import MIXED, RuleOptions

OPTIONS = {
    "npc_moves": (
        "4dir", ("4dir", "8dir"),
        "an official robot's random move (§6): '4dir' = each try picks one of E, W, S, N uniformly (the sister "
        "game's Lua); '8dir' = one of the 8 directions (a diagonal under diagonal_rule)"),
    "npc_tries": (
        6, range(1, 11),
        "random directions an official robot tries per step before it stays put; a try succeeds when the cell is "
        "walkable, inside its 21x21 square and not held by another robot (the sister game: 6)"),
    "npc_spawns": (
        "random", ("random", "map"),
        "where the official robots start (§2): 'random' = drawn per episode on road cells (off the chargers) with "
        "non-overlapping 21x21 squares (the toml: '每局...在道路上随机生成'); 'map' = a random subset of the map's "
        "spawn points (its objects; a map without them falls back to 'random', as the sister game's Lua does)"),
    "npc_on_chargers": (
        "allowed", ("allowed", "avoided"),
        "whether an official robot may step onto a charger's 3x3 footprint"),
    "collision_check": (
        "after_npcs", ("after_npcs", "before_and_after"),
        "when contact is checked in a step (§7): 'after_npcs' = once, after the hero's and the robots' moves (the "
        "sister game's order); 'before_and_after' = also right after the hero's move, before the robots move"),
    "hero_spawn_distance": (
        "chebyshev", ("chebyshev", "euclidean"),
        "the metric of the hero spawn's '5格以上' (more than 5 cells) from every official robot's spawn point"),
    "hero_spawn_cell": (
        "dirty", ("dirty", "cleaned"),
        "the hero's spawn cell at reset: 'dirty' = it scores when the hero comes back onto it (cleaning happens on "
        "entering a cell); 'cleaned' = cleaned at reset, scoring nothing (dirt_cleaned is 0 at reset either way)"),
    "npc_spawn_cell": (
        "dirty", ("dirty", "cleaned"),
        "an official robot's spawn cell at reset: 'dirty' (a robot cleans the cells it moves onto) or 'cleaned'"),
    "charge_count_full": (
        "counts", ("counts", "skips"),
        "whether entering a charger with a full battery adds to env_info.charge_count (the sister game counts "
        "every entry)"),
    "charger_pos": (
        "top_left", ("top_left", "centre"),
        "OrganState.pos of a charger: the footprint's top-left cell (the Lua's anchor, beside w and h) or its "
        "centre cell (where the entity stands)"),
    "reward_value": (
        "delta", ("delta", "total"),
        "env_reward.reward ('当前得分'): this step's change of the score (as gorge_chase) or the score so far"),
    "step_cleaned_cells": (
        "hero", ("hero", "hero_and_npcs"),
        "env_info.step_cleaned_cells ('本步清扫的坐标列表'): the cell the hero cleaned this step (0 or 1 entries) or "
        "also the cells the official robots cleaned"),
    "legal_action_key": (
        "legal_action", ("legal_action", "legal_act", "both"),
        "the observation's key of the 8 legal flags: the guide names it legal_act, the template and competitors' "
        "strict parsers read legal_action (§10)"),
    "legal_action_type": (
        "int", ("int", "bool"),
        "the legal flags' type: ints 1 (the guide's list[int]) or True (as gorge_chase's wire delivers them)"),
    "total_map": (
        "map_list", ("map_list", "open"),
        "env_info.total_map ('总地图数'): the number of maps in the usr_conf's map list, or 10 (the open maps)"),
    "npc_out_of_view": (
        "hidden", ("hidden", "shown"),
        "observation.frame_state.npcs of a robot beyond the 21x21 view: 'hidden' = pos {-1, -1}, is_in_view 0 (the "
        "dumps' distances and gorge_chase's wire); 'shown' = its true pos (extra_info always has the true one)"),
    "map_order": (
        "cycle", ("cycle", "first"),
        "map_random = false ('按顺序抽取'): 'cycle' = episode k plays map[k % len(map)] (a seed given to reset "
        "restarts the count); 'first' = always map[0]"),
    "diagonal_rule": (
        "one_free", ("one_free", "both_free", "target_only"),
        "a diagonal move (the hero's, and an official robot's under npc_moves '8dir'): the target walkable and "
        "'one_free' = one of the two orthogonal cells walkable (the guide's wording), 'both_free' = both, "
        "'target_only' = no corner rule"),
    "vacuum_extra_info": (
        "full", ("full", "withheld", MIXED),
        "what env_obs's extra_info holds: 'full' = frame_state (the robots' true cells), map_id, result_code and "
        "result_message, as the guide lists them; 'withheld' = result_code and result_message only, as an "
        "evaluation that hands the package no global information would; 'mixed' = each episode one of the "
        "two, drawn from the rule RNG (one agent trained for both)"),
}

#: The readings drawn per episode with `randomize_rules`: the rules a step meets. Not drawn: what
#: the wire shows (charger_pos, reward_value, step_cleaned_cells, legal_action_key,
#: legal_action_type, total_map, npc_out_of_view, vacuum_extra_info: a package reads one format,
#: set it per run) and map_order (the run's curriculum). Narrowed: npc_tries to 1 (a robot that
#: often stays) and 6 (the sister game's).
CANDIDATES = {
    "npc_moves": ("4dir", "8dir"),
    "npc_tries": (1, 6),
    "npc_spawns": ("random", "map"),
    "npc_on_chargers": ("allowed", "avoided"),
    "collision_check": ("after_npcs", "before_and_after"),
    "hero_spawn_distance": ("chebyshev", "euclidean"),
    "hero_spawn_cell": ("dirty", "cleaned"),
    "npc_spawn_cell": ("dirty", "cleaned"),
    "charge_count_full": ("counts", "skips"),
    "diagonal_rule": ("one_free", "both_free", "target_only"),
}

RULES = RuleOptions(OPTIONS, CANDIDATES)


def check_option(name: str, value):
    """The value if allowed, else ValueError naming the option and what it allows."""
    return RULES.check(name, value)


def defaults() -> dict:
    return RULES.defaults()


def options_table() -> str:
    """The options as a markdown table (docs/games/robot_vacuum.md holds it verbatim)."""
    return RULES.table()


def episode_value(name: str, value, rng):
    """What an episode plays of option `name` set to `value` (a MIXED reading drawn from `rng`)."""
    return RULES.episode_value(name, value, rng)
