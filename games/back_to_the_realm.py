"""Back to the Realm, the 2024 game (realm/): its presets (realm/back_to_the_realm/presets.py), the route planner
as reference, the chests of an evaluation episode drawn up front, and its pictures. Packages of
2024 (8.x–10.x) and 2025 (18.0.2) play it; an 18.0.2 agent meets the same 2024 env through its
platform's eval_episode (realm/back_to_the_realm/env18.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from games.base import Episode, Game
from realm.back_to_the_realm.protocol import EpisodeConfig


def resolved_usr_conf(episode: EpisodeConfig) -> dict:
    """An EpisodeConfig as the usr_conf that replays it exactly (chests listed, none random)."""
    return {"diy": {
        "start": episode.start,
        "end": episode.end,
        "treasure_random": 0,
        "treasure_id": list(episode.treasure_id),
        "max_step": episode.max_step,
        "talent_type": episode.talent_type,
    }}


def resolve_episodes(env, usr_conf: dict | None, count: int, base_seed: int = 0) -> list[Episode]:
    """`count` episodes of `usr_conf` with seeds base_seed, base_seed+1, ...; random chests are
    drawn here, exactly as `env.reset` would draw them with that seed. Raises UsrConfError."""
    episodes = []
    for i in range(count):
        seed = base_seed + i
        env.reset(usr_conf=usr_conf, seed=seed)
        episodes.append(Episode(i, seed, resolved_usr_conf(env.episode)))
    return episodes


@dataclass
class RealmRules:
    """[env] keys of the 2024 game beside the map keys (conf/configure_app.toml documents them)."""

    # a flash whose target is blocked: "fail" (2024 rule: the hero stays) | "nearest" (2025 rule:
    # the nearest passable cell) | "auto" (the rule of the protocol the run speaks)
    flash_blocked: Literal["auto", "fail", "nearest"] = "auto"
    step_jitter: bool = False  # seeded step lengths within the observed ranges
    # 2025 packages' map_info window: "hero" (centred on the hero's cell, as the official guide
    # defines it) | "platform" (what the platform's env adapter serves: centred on the x/z-swapped cell)
    map_window: Literal["hero", "platform"] = "hero"

    def make_kwargs(self, platform) -> dict:
        """realm.make_env's rules: flash_blocked with "auto" resolved to the platform version's own
        rule (2024 "fail", 2025 "nearest", as the 2025 guide states); map_window is the 2025
        protocol's, which its platform version hands over (workflow.platforms.v18)."""
        flash = platform.flash_rule if self.flash_blocked == "auto" else self.flash_blocked
        return {"flash_blocked": flash, "step_jitter": self.step_jitter}


class BackToTheRealm(Game):
    name = "back_to_the_realm"
    title = "Back to the Realm (2024 game)"
    policy_modes = ("greedy", "sample")
    map_companion = "positions_file"
    eval_workflows = "kaiwu_agent.back_to_the_realm.{algo}"
    policy_extras = {"state": "conf.back_to_the_realm_state.BackToTheRealmState",
                     "action": "conf.back_to_the_realm_action.BackToTheRealmAction"}
    env_rules = RealmRules
    algorithms = ("ppo", "dqn_plus")

    def presets(self) -> dict[str, dict]:
        from realm.back_to_the_realm.presets import PRESETS

        return PRESETS

    def usr_conf_of_settings_file(self, tree: dict) -> dict:
        """An 18.0.2 package's `{"env_conf": {...}}` as the 2024 `{"diy": {...}}` of the same episodes
        (realm.back_to_the_realm.usr_conf.env_conf_to_diy; raises UsrConfError naming the key)."""
        from realm.back_to_the_realm.usr_conf import env_conf_to_diy

        return env_conf_to_diy(tree)

    def check_usr_conf(self, usr_conf: dict) -> None:
        from realm.back_to_the_realm.usr_conf import parse_usr_conf

        parse_usr_conf(usr_conf)

    def episodes(self, env, usr_conf: dict, count: int, base_seed: int = 0) -> list:
        """Random chests drawn here (each seed's draw made explicit), so every policy plays the
        same chests."""
        return resolve_episodes(env, usr_conf, count, base_seed)

    def env_kwargs(self, env_config, platform) -> dict:
        """Always the 2024 protocol: an agent of a later version plays through its eval_episode;
        the flash rule stays its platform's."""
        kwargs = env_config.make_kwargs(platform)
        kwargs.pop("protocol", None)
        kwargs.pop("map_window", None)  # the agent's window: load_agent reads it from the run's config
        return kwargs

    def train_env_conf(self, settings) -> tuple[dict, str]:
        """The episodes of the run's curriculum at its last stage (the task it trains toward). Chests
        drawn by the platform when the curriculum may place them anywhere, else one draw of the
        curriculum's own (its chest_ids are narrower)."""
        from feature.back_to_the_realm.curriculum import SLOT_IDS, CurriculumSampler, env_conf
        from realm.back_to_the_realm.usr_conf import UsrConfError, validate_env_conf

        curriculum = settings.curriculum
        last = curriculum.stages[-1] if curriculum.chest_mode == "staged" and curriculum.stages else curriculum
        drawn = env_conf(CurriculumSampler(curriculum, seed=0).sample(episode=2**62, env_step=2**62))["env_conf"]
        if sorted(curriculum.chest_ids) == SLOT_IDS and last.chest_mode == "fixed":
            drawn.update(treasure_random=True, treasure_count=last.chest_num, treasure_id=[])
        try:
            validate_env_conf({"env_conf": drawn})
        except UsrConfError as e:
            raise ValueError(f"the run's [curriculum] gives no valid train_env_conf.toml: {e}") from e
        return {"env_conf": drawn}, ("# the episodes of the run's curriculum at its last stage; the package's own "
                                     "train workflow draws\n# its episodes from the curriculum (conf/settings.json), "
                                     "the platform's eval workflows read their own\n")


GAME = BackToTheRealm()
