"""robot_vacuum (清扫大作战), a 2026 game on gorge_chase's engine (realm/robot_vacuum/,
docs/games/robot_vacuum.md): clean as many dirty cells as possible in max_step steps, recharging
on the chargers, without touching an official robot. Packages 13.0.1 play it.

An evaluation episode is (usr_conf, seed) with one map: the env draws the chargers and spawns
from the seed at reset, and each episode's usr_conf names the single map it plays (the env's own
map cycling would give a process's episodes different maps by the order they come in). A
checkpoint plays with its package's own `exploit` on the raw env_obs; the reference is the
simulator's full-information policy; pictures are the simulator's (the map with the dirt left and
the routes) and the hero's 21×21 view step by step. Records, policies and pictures:
evaluation/robot_vacuum.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from games.base import COMPASS, EngineGame, EngineRules


@dataclass
class VacuumRules(EngineRules):
    """[env] keys of robot_vacuum's rules beside the map keys: the options
    realm.robot_vacuum.options.OPTIONS names (docs/games/robot_vacuum.md: readings and meaning), how
    the env answers errors, and whether each episode draws the options."""

    npc_moves: str = "4dir"  # an official robot's random move: 4dir | 8dir
    npc_tries: int = 6  # random directions a robot tries per step before it stays: 1..10
    npc_spawns: str = "random"  # where the robots start: random | map (the map's spawn points)
    npc_on_chargers: str = "allowed"  # whether a robot may step onto a charger: allowed | avoided
    collision_check: str = "after_npcs"  # when contact is checked: after_npcs | before_and_after
    hero_spawn_distance: str = "chebyshev"  # the metric of "more than 5 cells from every robot": chebyshev | euclidean
    hero_spawn_cell: str = "dirty"  # the hero's spawn cell at reset: dirty | cleaned
    npc_spawn_cell: str = "dirty"  # a robot's spawn cell at reset: dirty | cleaned
    charge_count_full: str = "counts"  # entering a charger on a full battery adds to charge_count: counts | skips
    charger_pos: str = "top_left"  # a charger's OrganState.pos: top_left | centre
    reward_value: str = "delta"  # env_reward.reward: delta (this step's change of the score) | total
    step_cleaned_cells: str = "hero"  # env_info.step_cleaned_cells: hero | hero_and_npcs
    legal_action_key: str = "legal_action"  # the observation's key of the legal flags: legal_action | legal_act | both
    legal_action_type: str = "int"  # the legal flags' type: int | bool
    total_map: str = "map_list"  # env_info.total_map: map_list (the usr_conf's maps) | open (10)
    npc_out_of_view: str = "hidden"  # a robot beyond the view in frame_state.npcs: hidden (pos -1, -1) | shown
    map_order: str = "cycle"  # map_random = false: cycle | first
    diagonal_rule: str = "one_free"  # a diagonal step's corner cells: one_free | both_free | target_only
    # what env_obs's extra_info holds: "full" (frame_state, map_id, result_code, result_message) |
    # "withheld" (result_code and result_message only)
    vacuum_extra_info: str = "full"
    # a bad usr_conf, or a step after the episode's end: "env_obs" (answered as the platform
    # answers: observation None, extra_info.result_code < 0, truncated True; the message on
    # stderr) | "raise" (VacuumUsrConfError / EpisodeOverError stops the workflow)
    vacuum_errors: Literal["env_obs", "raise"] = "env_obs"
    # each episode draws the options from their readings (realm.robot_vacuum.options.CANDIDATES),
    # ignoring their values
    randomize_unknown_rules: bool = False

    options_module: ClassVar[str] = "realm.robot_vacuum.options"
    errors_key: ClassVar[str] = "vacuum_errors"


class RobotVacuum(EngineGame):
    name = "robot_vacuum"
    title = "robot_vacuum (2026)"
    outcomes = ("survived", "failed")  # to max_step | early: the battery ran out or an official robot touched it
    map_animation = False
    algorithms = ("ppo",)
    env_rules = VacuumRules
    maps_dir_holds = ("official map files by map id: room_grid_map_<id>.json, robot_vacuum_map_<id>.json, "
                      "map<id>.json or map_<id>.txt")
    info_rule = "vacuum_extra_info"  # "full" | "withheld": extra_info with or without frame_state
    features_section = "features_vacuum"
    global_info_holds = "every official robot's true cell"
    action_names = COMPASS  # 8 moves, no flash
    curriculum_section = "curriculum_vacuum"


GAME = RobotVacuum()
