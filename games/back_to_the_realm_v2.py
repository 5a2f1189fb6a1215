"""back_to_the_realm_v2, the 2025 competition's game (realm/back_to_the_realm_v2/, docs/games/back_to_the_realm_v2.md): its presets
(realm/back_to_the_realm_v2/presets.py), the full-information v2 planner as reference, episodes whose random points
and obstacle the env draws from the seed, a checkpoint played by its package's own exploit
(evaluation/back_to_the_realm_v2.py), and its pictures (realm/back_to_the_realm_v2/render.py). Packages 24.x and 28.x play it."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from games.base import Episode, Game


@dataclass
class V2Rules:
    """[env] keys of back_to_the_realm_v2's rules beside the map keys: the rule options
    realm.back_to_the_realm_v2.env.OPTIONS names (docs/games/back_to_the_realm_v2.md: ranges and meaning) and whether each episode
    draws them (conf/back_to_the_realm_v2.toml documents them)."""

    # when extra_info's game_info.end_pos holds the end: "always" (as the training server does) |
    # "found" (once in view, and on the last frame) | "at_end" (last frame only)
    reveal_end_pos: Literal["always", "found", "at_end"] = "always"
    step_length: int = 1  # cells per plain step: 1 | 2
    buff_step_length: int = 2  # cells per step while the buff lasts: step_length..4
    buff_duration: int = 50  # steps the buff lasts: 1..2000
    distance_bands: Literal["uniform20", "v1"] = "uniform20"  # relative_pos.l2_distance thresholds
    talent_when_cooling: Literal["move", "stay"] = "move"  # a talent action while cooling down
    taken_chest_status: Literal["stays_0", "taken_frame"] = "stays_0"  # how long a taken chest reads status 0
    treasure_count_reads: Literal["chests", "chests_plus_2"] = "chests"  # what game_info.treasure_count counts
    view_size: int = 11  # map_info's rows and values around the hero: an odd int in 11..51
    # each episode draws every rule above but view_size from its readings (realm.back_to_the_realm_v2.env.CANDIDATES),
    # ignoring their values
    randomize_unknown_rules: bool = False

    def validate(self) -> None:
        """Every option in the simulator's ranges (ValueError naming the key)."""
        from realm.back_to_the_realm_v2.env import OPTIONS, check_option

        for name in OPTIONS:
            check_option(name, getattr(self, name))
        if self.buff_step_length < self.step_length:
            raise ValueError(f"buff_step_length = {self.buff_step_length} is invalid: allowed "
                             f"{self.step_length}..{max(OPTIONS['buff_step_length'][1])} (at least step_length)")

    def make_kwargs(self, platform) -> dict:
        """realm.make_env's rules: the options under their own names, randomize_rules."""
        options = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "randomize_unknown_rules"}
        return {**options, "randomize_rules": self.randomize_unknown_rules}


class BackToTheRealmV2(Game):
    name = "back_to_the_realm_v2"
    title = "back_to_the_realm_v2 (2025 competition)"
    policy_modes = ("greedy",)  # the platform evaluates exploit; a v2 package's predict takes its own batches
    map_companion = "obstacles_file"
    map_animation = True
    algorithms = ("ppo",)
    renamed_agents = {"ppo_v2": "ppo"}
    env_rules = V2Rules
    maps_dir_holds = "official map files by map_name: <map_name>.json beside <map_name>_obstacles.json"
    renamed_env_keys = {"v2_maps": "maps_dir"}

    def presets(self) -> dict[str, dict]:
        from realm.back_to_the_realm_v2.presets import V2_PRESETS

        return V2_PRESETS

    def check_usr_conf(self, usr_conf: dict) -> None:
        """Checked by a reset of the evaluation env (the map decides which points are legal)."""

    def episodes(self, env, usr_conf: dict, count: int, base_seed: int = 0) -> list:
        """The env draws an episode's random points and obstacle at reset from its seed, so the
        usr_conf stands as it is; one reset checks it (realm.UsrConfError)."""
        env.reset(usr_conf=usr_conf, seed=base_seed)
        return [Episode(i, base_seed + i, usr_conf) for i in range(count)]

    def env_kwargs(self, env_config, platform) -> dict:
        return env_config.make_kwargs(platform)

    def train_env_conf(self, settings) -> tuple[dict, str]:
        """The run's [curriculum_v2] as the parsed toml tree (`{"env_conf": {"map_name",
        "<map_name>": {...}}}`), checked by the simulator's rules."""
        from realm.back_to_the_realm.usr_conf import UsrConfError
        from realm.back_to_the_realm_v2.usr_conf import validate_usr_conf

        usr_conf = settings.curriculum_v2.usr_conf()
        try:
            validate_usr_conf(usr_conf)
        except UsrConfError as e:
            raise ValueError(f"the run's [curriculum_v2] gives no valid train_env_conf.toml: {e}") from e
        return usr_conf, ("# the run's [curriculum_v2]: the package's own train workflow reads it from "
                          "conf/settings.json,\n# the platform's eval workflows read this file\n")


GAME = BackToTheRealmV2()
