"""Evaluation episodes spread over worker processes.

Each worker (forked from a fork server: `worker_context`; one torch thread) builds its env once
and keeps the policies it has loaded, so a task is just "play episode e with policy p". Tasks are (policy key, Episode)
pairs: the key is "planner" or a checkpoint path (of the project's agent, or of one Kaiwu package), so one pool evaluates many checkpoints and
the planner on the same episodes. `workers <= 1` runs the same code in this process.
"""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Iterable

from evaluation.worker import PLANNER, EvalWorker  # noqa: F401 (PLANNER: the tools' key for the planner)
from evaluation.episodes import Episode, EpisodeRecord
from workflow.supervision.processes import fork_context

_worker: EvalWorker | None = None


def worker_context():
    """The workers' multiprocessing context: forked from a fork server that imported torch and the
    training system once (a warm one when REALM_FORK_SERVER names one that fits), not spawned
    each importing them again (~3–4 CPU-seconds a worker). Like a spawned one, a worker starts
    from modules only imported: no thread pool, no env, no package."""
    return fork_context()


def _init_worker(env_kwargs: dict, config_file: str | None, agent_mode: str, package_dir: str | None) -> None:
    global _worker
    import torch

    torch.set_num_threads(1)
    _worker = EvalWorker(env_kwargs, config_file, agent_mode, package_dir)


def _play(key: str, episode: Episode) -> tuple[str, int, EpisodeRecord]:
    return key, episode.index, _worker.play(key, episode)


def play_all(tasks: Iterable[tuple[str, Episode]], env_kwargs: dict, workers: int = 1,
             config_file: str | None = None, agent_mode: str = "greedy", package_dir: str | None = None,
             on_done: Callable[[str, int, EpisodeRecord], None] | None = None,
             ray_address: str | None = None) -> dict[str, dict[int, EpisodeRecord]]:
    """Play every (policy key, episode) task; returns {key: {episode index: record}}.

    With `ray_address` the episodes are spread over a Ray cluster's CPUs (evaluation.ray_workers;
    `workers` caps the actors) instead of this machine's processes.

    `on_done` is called as each episode finishes (a progress bar). A worker's exception (bad
    checkpoint, planner failure) is raised here with its message.
    """
    tasks = list(tasks)
    results: dict[str, dict[int, EpisodeRecord]] = {}

    def collect(key: str, index: int, record: EpisodeRecord) -> None:
        results.setdefault(key, {})[index] = record
        if on_done is not None:
            on_done(key, index, record)

    if ray_address is not None:
        from evaluation.ray_workers import play_on_ray  # Ray is an optional extra

        play_on_ray(ray_address, tasks, env_kwargs, workers, config_file, agent_mode, package_dir, collect)
        return results
    if workers <= 1 or len(tasks) <= 1:
        worker = EvalWorker(env_kwargs, config_file, agent_mode, package_dir)
        for key, episode in tasks:
            collect(key, episode.index, worker.play(key, episode))
        return results
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=worker_context(),
                             initializer=_init_worker,
                             initargs=(env_kwargs, config_file, agent_mode, package_dir)) as pool:
        futures = [pool.submit(_play, key, episode) for key, episode in tasks]
        try:
            for future in as_completed(futures):
                collect(*future.result())
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return results
