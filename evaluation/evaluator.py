"""The run's evaluator ([eval]): a role beside the aisrv and the learner that scores the greedy
policy of the run's checkpoints on fixed episodes as the run trains.

It polls the checkpoint directory for whole checkpoints (workflow.checkpoints.ckpt_files) and
plays the newest one that is due (`every_train_steps` past the last evaluated, or
`every_minutes` after the last evaluation began) with the package's own `exploit`, loaded by the
package's `load_model` (evaluation.episodes.load_agent: the project's agents and any hosted Kaiwu
package, every platform version, with the package's own feature code). The route planner plays
the same episodes once per setting. Each result goes to the run's evaluations.json
(workflow.checkpoints.evaluations, written atomically by this process alone): the learner turns
it into eval/* rows of metrics.csv and TensorBoard and keeps the best checkpoint through pruning;
the launcher shows it on the progress line and, when an evaluation reaches `stop_value`, stops
the run cleanly.

The supervisor restarts it when it dies or hangs; its failure never ends the run. It stands on
the evaluation floor (tests/test_layering.py): the training system starts it by module name
(workflow.supervision.processes.ROLE_MODULES) and never imports it.
"""
from __future__ import annotations

import json
import os
import time
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, ProcessPoolExecutor, wait
from pathlib import Path

import numpy as np
import torch
from loguru import logger

from agent.checkpoint_io import CheckpointError
from evaluation import pool
from evaluation.worker import PLANNER, EvalWorker, episodes_of
from workflow.platforms.project import run_platform
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.evaluations import (Evaluations, describe, read_evaluations, set_aside,
                                              write_evaluations)
from workflow.checkpoints.run_state import RunStateError, read_run_state
from workflow.supervision.processes import ChildContext

POLL_S = 1.0  # how often the checkpoint directory is listed
NICENESS = 5  # below training's priority: on a busy machine the evaluations wait, not the learner


class Setting:
    """What the run's evaluations play: the episodes of a preset of the run's platform version (or
    [eval] usr_conf) on the run's map, seeds seed, seed+1, ...; and how a policy plays them."""

    def __init__(self, cfg, config_file: Path | None):
        ev = cfg.eval
        self.platform = run_platform(cfg.app)  # a package's version, or the one hosting the project's agent
        self.package_dir = cfg.app.package or None
        self.config_file = str(config_file) if config_file is not None else None
        self.label, self.usr_conf = ev.episode_usr_conf(self.platform)
        self.env_kwargs = ev.env_kwargs(cfg.env, self.platform)
        import realm

        self.episodes = episodes_of(realm.make_env(**self.env_kwargs), self.usr_conf, ev.episodes, ev.seed)
        self.description = json.loads(json.dumps({
            "platform": self.platform.name, "preset": self.label, "usr_conf": self.usr_conf, "env": self.env_kwargs,
            "episodes": ev.episodes, "seed": ev.seed, "policy": "exploit"}, sort_keys=True, default=str))


class Players:
    """Plays (policy key, episode) tasks: in this process (workers = 1), else on a pool of worker
    processes kept for the whole run (each with its env and loaded policies: evaluation.worker,
    which plays the env's game). The heartbeat beats as each episode ends; a stop request abandons
    the rest."""

    def __init__(self, setting: Setting, workers: int):
        self.setting = setting
        self.local = None
        self.executor = None
        if workers > 1:
            self.executor = ProcessPoolExecutor(max_workers=workers, mp_context=pool.worker_context(),
                                                initializer=pool._init_worker,
                                                initargs=(setting.env_kwargs, setting.config_file, "greedy",
                                                          setting.package_dir))
        else:
            self.local = EvalWorker(setting.env_kwargs, setting.config_file, "greedy", setting.package_dir)

    def load(self, key: str) -> None:
        """Load a checkpoint played in this process now (a CheckpointError when it does not load);
        pool workers load it themselves and raise the same."""
        if self.local is not None:
            self.local.policy(key)

    def play(self, key: str, ctx: ChildContext) -> list | None:
        """Records of every episode in order, or None when a stop came first."""
        episodes = self.setting.episodes
        if self.executor is None:
            records = []
            for episode in episodes:
                if ctx.should_stop():
                    return None
                records.append(self.local.play(key, episode))
                ctx.beat()
            return records
        futures = {self.executor.submit(pool._play, key, episode) for episode in episodes}
        found = {}
        while futures:
            done, futures = wait(futures, timeout=POLL_S, return_when=FIRST_COMPLETED)
            ctx.beat()
            for future in done:
                _, index, record = future.result()
                found[index] = record
            if ctx.should_stop():
                for future in futures:
                    future.cancel()
                return None
        return [found[e.index] for e in episodes]

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)


def summary(records: list) -> dict:
    """Means over one policy's episodes."""
    return {"score": float(np.mean([r.total_score for r in records])),
            "win": float(np.mean([r.won for r in records])),
            "chests": float(np.mean([r.chests for r in records])),
            "steps": float(np.mean([r.steps for r in records]))}


class Evaluator:
    def __init__(self, ctx: ChildContext, setting: Setting, players: Players):
        self.ctx = ctx
        self.ev = ctx.config.eval
        self.ckpt_dir = ctx.paths.ckpt
        self.setting = setting
        self.players = players
        self.records = self.load_records()
        self.last_started = 0.0  # monotonic time the last evaluation began
        self.failed: set[int] = set()  # checkpoints that did not load: not tried again

    def load_records(self) -> Evaluations:
        found = read_evaluations(self.ckpt_dir)
        if found is not None and found.settings == self.setting.description:
            if found.best is not None:
                logger.info(f"{len(found.checkpoints)} evaluations of this run on the same episodes so far; "
                            f"best {describe(found.best, found.checkpoints[found.best])}")
            found.pending = None
            return found
        if found is not None:
            kept = set_aside(self.ckpt_dir)
            self.ctx.post("warning", {"message": f"the evaluation settings changed: earlier evaluations (other episodes) "
                                                 f"kept in {kept}; scoring starts again"})
        return Evaluations(settings=self.setting.description)

    def write(self) -> None:
        write_evaluations(self.ckpt_dir, self.records)

    # --- the planner, once per setting -----------------------------------------------------------

    def score_planner(self) -> bool:
        """The planner's means over the episodes (recorded once per setting); False if stopped first."""
        if self.records.planner is not None:
            return True
        started = time.monotonic()
        records = self.players.play(PLANNER, self.ctx)
        if records is None:
            return False
        self.records.planner = {**summary(records), "seconds": round(time.monotonic() - started, 2)}
        self.write()
        logger.info(f"planner on {self.setting.label}: score {self.records.planner['score']:.1f}, "
                    f"won {self.records.planner['win']:.0%} ({self.records.planner['seconds']:.1f} s)")
        return True

    # --- which checkpoint --------------------------------------------------------------------------

    def due(self) -> ckpt_files.Checkpoint | None:
        """The newest whole checkpoint when it is due, else None."""
        newest = ckpt_files.latest_checkpoint(self.ckpt_dir)
        if newest is None or newest.id in self.records.checkpoints or newest.id in self.failed:
            return None
        done = [i for i in self.records.checkpoints if i <= newest.id]
        if not done:
            return newest
        ev = self.ev
        by_steps = ev.every_train_steps > 0 and newest.id >= max(done) + ev.every_train_steps
        by_time = ev.every_minutes > 0 and time.monotonic() - self.last_started >= ev.every_minutes * 60
        return newest if by_steps or by_time else None

    def env_steps(self, ckpt_id: int) -> int | None:
        """The run's env steps when the checkpoint was written (its run-state entry)."""
        try:
            found = read_run_state(self.ckpt_dir)
        except RunStateError:
            return None
        entry = found.entries.get(str(ckpt_id)) if found is not None else None
        counters = entry.get("counters") if isinstance(entry, dict) else None
        steps = counters.get("env_steps") if isinstance(counters, dict) else None
        return int(steps) if isinstance(steps, (int, float)) else None

    # --- one evaluation -------------------------------------------------------------------------------

    def evaluate(self, ckpt: ckpt_files.Checkpoint) -> dict | None:
        """Play the checkpoint's greedy policy on the episodes and record it; None when it did not
        load (pruned meanwhile, or refused by the package's load_model) or a stop came first."""
        self.last_started = time.monotonic()
        self.records.pending = ckpt.id  # the learner prunes around it from now on
        self.write()
        key = str(ckpt.path)
        try:
            if ckpt.id not in {c.id for c in ckpt_files.list_checkpoints(self.ckpt_dir)}:
                raise CheckpointError(f"{ckpt.path.name} was pruned before it could be evaluated")
            self.players.load(key)
            records = self.players.play(key, self.ctx)
        except BrokenExecutor:
            raise  # a worker process died: the supervisor starts the evaluator again
        except CheckpointError as e:
            self.failed.add(ckpt.id)
            logger.warning(f"not evaluated: {e}")
            records = None
        except Exception as e:  # the package's exploit or load_model failed on it: the next checkpoint may not
            self.failed.add(ckpt.id)
            logger.exception(f"evaluating {ckpt.path.name} failed: {type(e).__name__}: {e}")
            self.ctx.post("warning", {"message": f"evaluating {ckpt.path.name} failed ({type(e).__name__}: {e}); "
                                                 f"training goes on, see {self.ctx.paths.log / 'evaluator.log'}"})
            records = None
        self.records.pending = None
        if records is None:
            self.write()
            return None
        entry = summary(records)
        planner = (self.records.planner or {}).get("score")
        entry["ratio"] = entry["score"] / planner if planner and planner > 0 else None
        entry.update(env_steps=self.env_steps(ckpt.id), wall_time=round(time.time(), 3),
                     seconds=round(time.monotonic() - self.last_started, 2))
        self.records.checkpoints[ckpt.id] = entry
        self.write()
        return entry

    def reached(self, entry: dict) -> bool:
        value = entry.get(self.ev.stop_metric)
        return self.ev.stop_value is not None and value is not None and value >= self.ev.stop_value

    def report(self, ckpt_id: int, entry: dict) -> None:
        best = self.records.best
        logger.info(f"evaluated {describe(ckpt_id, entry)} in {entry['seconds']:.1f} s; "
                    f"best {describe(best, self.records.checkpoints[best])}")
        self.ctx.post("status", {"train_step": ckpt_id, "score": entry["score"], "ratio": entry["ratio"],
                                 "best": best, "best_score": self.records.checkpoints[best]["score"],
                                 "best_ratio": self.records.checkpoints[best].get("ratio"),
                                 "evaluations": len(self.records.checkpoints)})

    def stop_at_target(self, ckpt_id: int, entry: dict) -> None:
        value = entry[self.ev.stop_metric]
        self.records.target = {"metric": self.ev.stop_metric, "value": self.ev.stop_value, "train_step": ckpt_id}
        self.write()
        message = (f"reached the evaluation target {self.ev.stop_metric} {self.ev.stop_value:g} at train step "
                   f"{ckpt_id} ({self.ev.stop_metric} {value:.3f}); stopping the run")
        logger.info(message)
        self.ctx.post("target", {"message": message, "train_step": ckpt_id, "value": value})

    def run(self) -> None:
        if not self.score_planner():
            return
        while not self.ctx.should_stop():
            self.ctx.beat()
            ckpt = self.due()
            if ckpt is None:
                time.sleep(POLL_S)
                continue
            entry = self.evaluate(ckpt)
            if entry is None:
                continue
            self.report(ckpt.id, entry)
            if self.reached(entry):
                self.stop_at_target(ckpt.id, entry)
                break
        while not self.ctx.should_stop():  # the launcher stops the run; until then stay alive, idle
            self.ctx.beat()
            time.sleep(POLL_S)


def main(ctx: ChildContext) -> None:
    torch.set_num_threads(1)  # batch-1 inference
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    config = ctx.paths.effective_config if ctx.paths.effective_config.is_file() else None
    setting = Setting(ctx.config, config)
    logger.info(f"evaluating on {setting.label} ({len(setting.episodes)} episodes from seed {ctx.config.eval.seed}, "
                f"{setting.platform.title or setting.platform.name} env {setting.env_kwargs}); "
                f"checkpoints in {ctx.paths.ckpt}")
    players = Players(setting, ctx.config.eval.workers)
    try:
        Evaluator(ctx, setting, players).run()
    finally:
        players.close()
