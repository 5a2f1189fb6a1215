"""One evaluation process's state: the env built once and the policies it has loaded (the
planner, or checkpoints by path, at most MAX_CACHED_AGENTS at a time), so a task is just
"play episode e with policy p". Used by the process pool (evaluation.pool), by Ray's
evaluation actors (evaluation.ray_workers) and by a run's evaluator. The env's game decides how
a policy plays (`POLICIES`): the 2024 game's records are evaluation.episodes.EpisodeRecord,
back_to_the_realm_v2's evaluation.v2.EpisodeV2."""
from __future__ import annotations

from collections import OrderedDict

from evaluation.episodes import AgentPolicy, Episode, EpisodeRecord, PlannerPolicy, load_agent, resolve_episodes
from evaluation.v2 import AgentPolicyV2, EpisodeV2, PlannerPolicyV2
from realm.env import RealmEnv
from realm.v2.env import RealmEnvV2

PLANNER = "planner"
MAX_CACHED_AGENTS = 2
#: per game (the env's GAME): how a checkpoint plays, and the planner
POLICIES = {RealmEnv.GAME: (AgentPolicy, PlannerPolicy), RealmEnvV2.GAME: (AgentPolicyV2, PlannerPolicyV2)}


def episodes_of(env, usr_conf: dict, count: int, base_seed: int = 0) -> list[Episode]:
    """`count` evaluation episodes of `usr_conf` on `env`, seeds base_seed, base_seed+1, ...: the
    2024 game's with their random chests drawn here (resolve_episodes); a v2 env draws its random
    points and obstacle at reset from the seed, so the usr_conf stands (one reset checks it).
    Raises realm.UsrConfError."""
    if env.GAME == RealmEnv.GAME:
        return resolve_episodes(env, usr_conf, count, base_seed)
    env.reset(usr_conf=usr_conf, seed=base_seed)
    return [Episode(i, base_seed + i, usr_conf) for i in range(count)]


class EvalWorker:
    """The env and loaded policies of one process."""

    def __init__(self, env_kwargs: dict, config_file: str | None, agent_mode: str = "greedy",
                 package_dir: str | None = None):
        import realm

        self.env = realm.make_env(**env_kwargs)
        self.agent_policy, self.planner_policy = POLICIES[self.env.GAME]
        self.config_file = config_file
        self.agent_mode = agent_mode
        self.package_dir = package_dir
        self.agents: OrderedDict[str, AgentPolicy] = OrderedDict()

    def policy(self, key: str):
        if key == PLANNER:
            return self.planner_policy()
        if key not in self.agents:
            if len(self.agents) >= MAX_CACHED_AGENTS:
                self.agents.popitem(last=False)
            self.agents[key] = self.agent_policy(load_agent(key, self.config_file, self.package_dir), name=key,
                                                 mode=self.agent_mode)
        self.agents.move_to_end(key)
        return self.agents[key]

    def play(self, key: str, episode: Episode) -> EpisodeRecord | EpisodeV2:
        return self.policy(key).play(self.env, episode.usr_conf, episode.seed)
