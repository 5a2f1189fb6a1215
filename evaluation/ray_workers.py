"""Evaluation episodes spread over a Ray cluster (`tools/evaluate.py --ray`, `tools/bench_learn.py
--ray`): the same per-process worker (evaluation.worker) as evaluation.pool (its env built once, its policies
cached), one per actor with one CPU each, spread over the nodes. Checkpoint paths must mean the
same file on every node (a shared directory, or the same path)."""
from __future__ import annotations

import os
from typing import Callable, Iterable

import ray

from evaluation.worker import EvalWorker
from evaluation.episodes import Episode, EpisodeRecord
from workflow.supervision.ray_cluster import join, normal_priority


@ray.remote(num_cpus=1)
class EvalActor:
    def __init__(self, env_kwargs: dict, config_file: str | None, agent_mode: str, package_dir: str | None, cwd: str):
        import torch

        if os.path.isdir(cwd):  # relative paths (map files, checkpoints) mean what they mean on the driver
            os.chdir(cwd)
        normal_priority()
        torch.set_num_threads(1)
        self.worker = EvalWorker(env_kwargs, config_file, agent_mode, package_dir)

    def play(self, key: str, episode: Episode) -> tuple[str, int, EpisodeRecord]:
        return key, episode.index, self.worker.play(key, episode)


def play_on_ray(address: str, tasks: Iterable[tuple[str, Episode]], env_kwargs: dict, workers: int | None,
                config_file: str | None, agent_mode: str, package_dir: str | None,
                collect: Callable[[str, int, EpisodeRecord], None]) -> None:
    """Play every task on `workers` actors (default: one per CPU of the cluster); `collect`
    gets each record as it finishes. A worker's exception is raised here."""
    tasks = list(tasks)
    joined_here = not ray.is_initialized()
    if joined_here:
        join(address, local_resources={})
    actors = []
    try:
        count = workers or int(ray.cluster_resources().get("CPU", 1))
        actors = [EvalActor.options(scheduling_strategy="SPREAD").remote(env_kwargs, config_file, agent_mode,
                                                                         package_dir, os.getcwd())
                  for _ in range(max(1, min(count, len(tasks))))]
        pool = ray.util.ActorPool(actors)
        for key, index, record in pool.map_unordered(lambda actor, task: actor.play.remote(*task), tasks):
            collect(key, index, record)
    finally:
        for actor in actors:
            ray.kill(actor)
        if joined_here:
            ray.shutdown()
