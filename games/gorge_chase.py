"""gorge_chase (峡谷追猎), the 2026 game (realm/gorge_chase/, docs/games/gorge_chase.md): survive a chasing
monster (two after monster_interval steps) for max_step steps, collecting chests and speed buffs.
Packages 15.0.1 play it.

An evaluation episode is (usr_conf, seed) with one map: the env draws spawns from the seed at
reset, and each episode's usr_conf names the single map it plays (the env's own map cycling
would give a process's episodes different maps by the order they come in). A checkpoint plays
with its package's own `exploit` on the raw env_obs; the reference is the simulator's
full-information policy; pictures are the simulator's (the map with the routes) and the hero's
21×21 view step by step. Records, policies and pictures: evaluation/gorge_chase.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from games.base import EngineGame, EngineRules, ScoreGap, ScoreRow


@dataclass
class GorgeRules(EngineRules):
    """[env] keys of gorge_chase's rules beside the map keys: the options realm.gorge_chase.options.OPTIONS
    names (docs/games/gorge_chase.md: ranges and meaning), how the env answers errors, and whether each
    episode draws the options (conf/gorge_chase.toml documents them)."""

    monster_distance: str = "bfs4"  # the monsters' distance to the hero: bfs4 | bfs8 | chebyshev | manhattan
    map_order: str = "cycle"  # map_random = false: cycle | first
    random_values_in_env_info: str = "resolved"  # a -1 config value in env_info: resolved | raw
    diagonal_rule: str = "one_free"  # a diagonal step's corner cells: one_free | both_free | target_only
    capture_radius: int = 1  # caught within this Chebyshev distance: 0..2
    hero_move_bonus: int = 0  # cells added to every hero move: 0..3
    monster_speed_bonus: int = 0  # added to the monsters' base speed 1: 0..3
    # what env_obs's extra_info holds: "full" (frame_state, map_id, result_code, result_message) |
    # "withheld" (result_code and result_message only)
    gorge_extra_info: str = "full"
    # a bad usr_conf, or a step after the episode's end: "env_obs" (answered as the platform
    # answers: observation None, extra_info.result_code < 0, truncated True; the message on
    # stderr) | "raise" (GorgeUsrConfError / EpisodeOverError stops the workflow)
    gorge_errors: Literal["env_obs", "raise"] = "env_obs"
    # each episode draws the options from their readings (realm.gorge_chase.options.CANDIDATES),
    # ignoring their values
    randomize_unknown_rules: bool = False

    options_module: ClassVar[str] = "realm.gorge_chase.options"
    errors_key: ClassVar[str] = "gorge_errors"


class GorgeChase(EngineGame):
    name = "gorge_chase"
    title = "gorge_chase (2026)"
    outcomes = ("survived", "caught")
    map_animation = False
    algorithms = ("ppo",)
    renamed_agents = {"ppo_gorge": "ppo"}
    env_rules = GorgeRules
    maps_dir_holds = "official map files by map id: gorge_chase_map_<id>.json or map_<id>.txt"
    renamed_env_keys = {"gorge_maps": "maps_dir"}
    info_rule = "gorge_extra_info"  # "full" | "withheld": extra_info with or without frame_state
    features_section = "features_gorge"
    global_info_holds = "every chest and buff, the monsters' true cells"
    #: the project's agent's targets (docs/games/gorge_chase.md, "The scorecard"): on maps it never
    #: saw, at the official defaults and the harder settings, 0.95x the reference with extra_info
    #: and 0.85x without it; generated maps with 60 episodes, the two open maps and the harder sets with 20
    scorecard = tuple(ScoreRow(preset, episodes, (("full", 0.95), ("withheld", 0.85))) for preset, episodes in (
        ("gorge-generated-heldout", 60), ("gorge-heldout", 20),
        ("gorge-generated-heldout-harder", 20), ("gorge-heldout-harder", 20)))
    scorecard_gap = ScoreGap("gorge-generated-train", "gorge-generated-heldout", 20, 0.10)
    curriculum_section = "curriculum_gorge"


GAME = GorgeChase()
