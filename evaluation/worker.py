"""One evaluation process's state: the env built once and the policies it has loaded (the
planner, or checkpoints by path, at most MAX_CACHED_AGENTS at a time), so a task is just
"play episode e with policy p". Used by the process pool (evaluation.pool) and by Ray's
evaluation actors (evaluation.ray_workers)."""
from __future__ import annotations

from collections import OrderedDict

from evaluation.episodes import AgentPolicy, Episode, EpisodeRecord, PlannerPolicy, load_agent

PLANNER = "planner"
MAX_CACHED_AGENTS = 2


class EvalWorker:
    """The env and loaded policies of one process."""

    def __init__(self, env_kwargs: dict, config_file: str | None, agent_mode: str = "greedy",
                 package_dir: str | None = None):
        import realm

        self.env = realm.make_env(**env_kwargs)
        self.config_file = config_file
        self.agent_mode = agent_mode
        self.package_dir = package_dir
        self.agents: OrderedDict[str, AgentPolicy] = OrderedDict()

    def policy(self, key: str):
        if key == PLANNER:
            return PlannerPolicy()
        if key not in self.agents:
            if len(self.agents) >= MAX_CACHED_AGENTS:
                self.agents.popitem(last=False)
            self.agents[key] = AgentPolicy(load_agent(key, self.config_file, self.package_dir), name=key, mode=self.agent_mode)
        self.agents.move_to_end(key)
        return self.agents[key]

    def play(self, key: str, episode: Episode) -> EpisodeRecord:
        return self.policy(key).play(self.env, episode.usr_conf, episode.seed)
