"""back_to_the_realm_v2, the 2025 competition's game (realm/v2/, docs/V2_RULES.md): its presets
(realm/v2/presets.py), the full-information v2 planner as reference, episodes whose random points
and obstacle the env draws from the seed, a checkpoint played by its package's own exploit
(evaluation/back_to_the_realm_v2.py), and its pictures (realm/v2/render.py). Packages 24.x and 28.x play it."""
from __future__ import annotations

from games.base import Episode, Game


class BackToTheRealmV2(Game):
    name = "back_to_the_realm_v2"
    title = "back_to_the_realm_v2 (2025 competition)"
    policy_modes = ("greedy",)  # the platform evaluates exploit; a v2 package's predict takes its own batches
    map_companion = "obstacles_file"
    map_animation = True
    project_agents = {"ppo": {"config": "agent.ppo_v2_config", "definition": "feature.definition_v2",
                              "agent": "agent.ppo_v2_agent", "workflow": "episodes.ppo_v2_workflow"}}
    renamed_agents = {"ppo_v2": "ppo"}
    reward_episodes = "episodes.training_v2:v2_episodes"
    feature_layout = "feature.layout_v2"

    def presets(self) -> dict[str, dict]:
        from realm.v2.presets import V2_PRESETS

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
        from realm.usr_conf import UsrConfError
        from realm.v2.usr_conf import validate_usr_conf

        usr_conf = settings.curriculum_v2.usr_conf()
        try:
            validate_usr_conf(usr_conf)
        except UsrConfError as e:
            raise ValueError(f"the run's [curriculum_v2] gives no valid train_env_conf.toml: {e}") from e
        return usr_conf, ("# the run's [curriculum_v2]: the package's own train workflow reads it from "
                          "conf/settings.json,\n# the platform's eval workflows read this file\n")


GAME = BackToTheRealmV2()
