"""The learner's checkpoint manager: keeps the newest K plus the best, user saves apart, never
prunes what it cannot vouch for, and resumes from the newest checkpoint whose content is sound."""
import numpy as np
import pytest
import torch

from agent.agent import Agent
from agent.model import ModelConfig
from workflow import ckpt_files
from feature.definition import SAMPLE_DIM
from workflow.checkpoint import CheckpointManager


def small_agent() -> Agent:
    return Agent(ModelConfig(channels=[4], kernel_sizes=[5], strides=[5], hidden_size=8), seed=0)


def ids(path):
    return [c.id for c in ckpt_files.list_checkpoints(path)]


def test_keeps_newest_k_plus_best(tmp_path):
    manager = CheckpointManager(tmp_path / "ckpt", keep=5, keep_best=True, user_dir=tmp_path / "user", user_keep=2)
    agent = small_agent()
    scores = {10: 50.0, 20: 900.0, 30: 100.0, 40: 120.0, 50: 130.0, 60: 140.0, 70: 150.0, 80: 160.0}
    for step, score in scores.items():
        manager.save(agent, step, extra={}, recent_score=score)
    assert ids(tmp_path / "ckpt") == [20, 40, 50, 60, 70, 80]  # 20 is the best, then the newest five


def test_keeps_newest_k_without_scores(tmp_path):
    manager = CheckpointManager(tmp_path / "ckpt", keep=3, keep_best=True, user_dir=tmp_path / "user", user_keep=2)
    agent = small_agent()
    for step in range(1, 8):
        manager.save(agent, step, extra={}, recent_score=None)
    assert ids(tmp_path / "ckpt") == [5, 6, 7]


def test_user_saves_obey_their_own_cap(tmp_path):
    manager = CheckpointManager(tmp_path / "ckpt", keep=3, keep_best=False, user_dir=tmp_path / "user", user_keep=2)
    agent = small_agent()
    for step in range(4):
        manager.save_user(agent, step)
    manager.save(agent, 100, extra={}, recent_score=None)
    assert ids(tmp_path / "user") == [2, 3]
    assert ids(tmp_path / "ckpt") == [100]


def test_stray_files_with_higher_ids_never_cost_a_good_checkpoint(tmp_path):
    """A resumed run next to garbage named like a newer checkpoint: pruning keeps the run's own
    newest K and never deletes the garbage it cannot vouch for (nor lets it count as one of K)."""
    ckpt = tmp_path / "ckpt"
    first = CheckpointManager(ckpt, keep=2, keep_best=False, user_dir=tmp_path / "user", user_keep=2)
    agent = small_agent()
    for step in (1, 2, 3):
        first.save(agent, step, extra={}, recent_score=None)
    (ckpt / "model.ckpt-99993.pkl").write_bytes(b"not a checkpoint")
    resumed = CheckpointManager(ckpt, keep=2, keep_best=False, user_dir=tmp_path / "user", user_keep=2)
    assert resumed.restore_newest(small_agent())[0] == 3
    for step in range(4, 10):
        resumed.save(agent, step, extra={}, recent_score=None)
    assert ids(ckpt) == [8, 9, 99993]
    assert "rng" in small_agent().load_model(ckpt, 9)  # the newest is a real, loadable checkpoint


def _corrupt_rng(payload):
    payload["extra"]["rng"]["numpy"] = "not a state"


def _corrupt_counters(payload):
    payload["extra"]["counters"] = {"env_steps": "many"}


def _corrupt_optimizer(payload):
    state = payload["optimizer"]["state"]
    first = next(iter(state))
    state[first]["exp_avg"] = state[first]["exp_avg"].flatten()[:3].clone()


def _corrupt_weights(payload):
    name = next(k for k, v in payload["model"].items() if v.is_floating_point())
    payload["model"][name] = payload["model"][name].clone().fill_(float("nan"))


@pytest.mark.parametrize("corrupt", [_corrupt_rng, _corrupt_counters, _corrupt_optimizer, _corrupt_weights],
                         ids=["rng", "counters", "optimizer-shape", "nan-weights"])
def test_a_checkpoint_that_reads_but_holds_bad_content_falls_back_to_the_older_one(tmp_path, corrupt):
    ckpt = tmp_path / "ckpt"
    manager = CheckpointManager(ckpt, keep=3, keep_best=False, user_dir=tmp_path / "user", user_keep=2)
    agent = small_agent()
    rows = np.zeros((4, SAMPLE_DIM), dtype=np.float32)
    agent.learn(rows)  # optimizer moments exist
    manager.save(agent, 1, extra={"counters": {"env_steps": 10}}, recent_score=None)
    manager.save(agent, 2, extra={"counters": {"env_steps": 20}}, recent_score=None)
    newest = ckpt / "model.ckpt-2.pkl"
    payload = torch.load(newest, weights_only=True)
    corrupt(payload)
    torch.save(payload, newest)
    restored = small_agent()
    ckpt_id, extra = CheckpointManager(ckpt, keep=3, keep_best=False, user_dir=tmp_path / "user",
                                       user_keep=2).restore_newest(restored)
    assert ckpt_id == 1 and extra["counters"] == {"env_steps": 10}
    assert all(torch.isfinite(p).all() for p in restored.model.parameters())
    restored.learn(rows)  # the restored optimizer state fits: training goes on
