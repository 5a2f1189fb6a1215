"""One evaluation process's state: the env built once and the policies it has loaded (the
planner, or checkpoints by path, at most MAX_CACHED_AGENTS at a time), so a task is just
"play episode e with policy p". Used by the process pool (evaluation.pool), by Ray's
evaluation actors (evaluation.ray_workers) and by a run's evaluator. The env's game (games)
decides how a checkpoint and the reference play, and how episodes are drawn."""
from __future__ import annotations

from collections import OrderedDict

import games
from evaluation.episodes import Episode, load_agent

PLANNER = "planner"
MAX_CACHED_AGENTS = 2


def episodes_of(env, usr_conf: dict, count: int, base_seed: int = 0) -> list[Episode]:
    """`count` evaluation episodes of `usr_conf` on `env`, seeds base_seed, base_seed+1, ..., as
    the env's game draws them (games.Game.episodes). Raises realm.UsrConfError."""
    return games.of_env(env).episodes(env, usr_conf, count, base_seed)


class EvalWorker:
    """The env and loaded policies of one process."""

    def __init__(self, env_kwargs: dict, config_file: str | None, agent_mode: str = "greedy",
                 package_dir: str | None = None):
        import realm

        self.env = realm.make_env(**env_kwargs)
        self.game = games.of_env(self.env)
        self.config_file = config_file
        self.agent_mode = agent_mode
        self.package_dir = package_dir
        self.agents: OrderedDict[str, object] = OrderedDict()

    def policy(self, key: str):
        if key == PLANNER:
            return self.game.reference_policy()
        if key not in self.agents:
            if len(self.agents) >= MAX_CACHED_AGENTS:
                self.agents.popitem(last=False)
            self.agents[key] = self.game.agent_policy(load_agent(key, self.config_file, self.package_dir), name=key,
                                                      mode=self.agent_mode)
        self.agents.move_to_end(key)
        return self.agents[key]

    def play(self, key: str, episode: Episode):
        return self.policy(key).play(self.env, episode.usr_conf, episode.seed)
