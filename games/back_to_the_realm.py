"""Back to the Realm, the 2024 game (realm/): its presets (realm/presets.py), the route planner
as reference, the chests of an evaluation episode drawn up front, and its pictures. Packages of
2024 (8.x–10.x) and 2025 (18.0.2) play it; an 18.0.2 agent meets the same 2024 env through its
platform's eval_episode (realm/env18.py)."""
from __future__ import annotations

import math

from games.base import Game, Rendering, frame_indices


class BackToTheRealm(Game):
    name = "back_to_the_realm"
    title = "Back to the Realm (2024 game)"
    policy_modes = ("greedy", "sample")
    map_companion = "positions_file"
    eval_workflows = "kaiwu_agent.back_to_the_realm.{algo}"
    policy_extras = {"state": "conf.back_to_the_realm_state.BackToTheRealmState",
                     "action": "conf.back_to_the_realm_action.BackToTheRealmAction"}

    def presets(self) -> dict[str, dict]:
        from realm.presets import PRESETS

        return PRESETS

    def check_usr_conf(self, usr_conf: dict) -> None:
        from realm.usr_conf import parse_usr_conf

        parse_usr_conf(usr_conf)

    def episodes(self, env, usr_conf: dict, count: int, base_seed: int = 0) -> list:
        """Random chests drawn here (each seed's draw made explicit), so every policy plays the
        same chests."""
        from evaluation.episodes import resolve_episodes

        return resolve_episodes(env, usr_conf, count, base_seed)

    def env_kwargs(self, env_config, platform) -> dict:
        """Always the 2024 protocol: an agent of a later version plays through its eval_episode;
        the flash rule stays its platform's."""
        kwargs = env_config.make_kwargs(platform.name)
        kwargs.pop("protocol", None)
        kwargs.pop("map_window", None)  # the agent's window: load_agent reads it from the run's config
        return kwargs

    def train_env_conf(self, settings) -> tuple[dict, str]:
        """The episodes of the run's curriculum at its last stage (the task it trains toward). Chests
        drawn by the platform when the curriculum may place them anywhere, else one draw of the
        curriculum's own (its chest_ids are narrower)."""
        from feature.curriculum import SLOT_IDS, CurriculumSampler, env_conf
        from realm.usr_conf import UsrConfError, validate_env_conf

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

    def agent_policy(self, loaded, name: str, mode: str):
        from evaluation.episodes import AgentPolicy

        return AgentPolicy(loaded, name=name, mode=mode)

    def reference_policy(self):
        from evaluation.episodes import PlannerPolicy

        return PlannerPolicy()

    def render(self, env, policy, usr_conf: dict, seed: int, title: str, options) -> Rendering:
        """The policy plays, then the episode is replayed from its actions through the episode
        runner (the env is deterministic for a seed), so the planner and checkpoints draw alike."""
        from evaluation.pictures import draw_map, draw_view, replay

        episode = self.episodes(env, usr_conf, 1, seed)[0]
        record = policy.play(env, episode.usr_conf, episode.seed)
        rec = replay(env, episode.usr_conf, episode.seed, record.actions)
        if not math.isclose(rec.total_score, record.total_score, abs_tol=1e-6) or rec.steps != record.steps:
            raise RuntimeError(f"replaying the episode gave score {rec.total_score} in {rec.steps} steps, the policy "
                               f"got {record.total_score} in {record.steps}: the env is not deterministic for this seed")
        png = draw_map(env, rec, title, options.scale)
        frames = []
        if options.gif:
            picked = frame_indices(len(rec.frames), options.frame_stride, options.max_frames)
            frames = [draw_view(rec.frames[i], options.view_scale) for i in picked]
        return Rendering(record, png, frames)


GAME = BackToTheRealm()
