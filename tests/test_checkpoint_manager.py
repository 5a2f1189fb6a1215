"""The learner's checkpoint manager: keeps the newest K plus the best, user saves apart."""
from agent.agent import Agent
from agent.model import ModelConfig
from workflow import ckpt_files
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
