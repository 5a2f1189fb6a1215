"""The learner's checkpoints, written by the real Trainee over the project's package: the newest K
plus the best are kept, user saves apart, nothing is pruned that the run cannot vouch for, and a
resume starts from the newest checkpoint whose content is sound."""
import json

import pytest
import torch

from agent.checkpoint_io import WriteFailed, progress_file, train_state_file
from fake_obs import rows_from
from agent.back_to_the_realm.ppo_config import Settings
from agent.model import ModelConfig
from agent.ppo import PPOConfig
from kaiwudrl.common.config.config_control import CONFIG
from workflow.checkpoints import ckpt_files
from workflow.checkpoints.manager import CheckpointManager
from workflow.host.kaiwu_package import PROJECT_ALGO, PROJECT_LAYOUT, REPO_ROOT, KaiwuPackage
from workflow.precision import resolve_precision
from workflow.checkpoints.run_state import COPY_FILE, RUN_STATE_FILE, incomplete_ids
from workflow.host.trainee import LearnerHandler, Trainee


SETTINGS = Settings(model=ModelConfig(channels=[4], kernel_sizes=[5], strides=[5], hidden_size=8),
                    ppo=PPOConfig(update_epochs=2, num_minibatches=2))


@pytest.fixture(autouse=True)
def restore_platform_config():
    """Loading a package fills the process-wide CONFIG: leave it as the next test expects it."""
    saved = CONFIG.to_dict()
    yield
    CONFIG.load(saved)


def make_trainee(tmp_path, keep: int, keep_best: bool = False, user_keep: int = 2, seed: int = 0) -> Trainee:
    """The learner's trainee over the project's package, wired as workflow.learner.make_trainee
    wires it, with its checkpoints in tmp_path/ckpt and user saves in tmp_path/user."""
    values = {"app": "back_to_the_realm", "algo": PROJECT_ALGO, "svr_name": "learner",
              "package_settings": SETTINGS}
    package = KaiwuPackage.load(REPO_ROOT, PROJECT_ALGO, values, PROJECT_LAYOUT)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        agent = package.make_agent("learner", None, None)
    ckpts = CheckpointManager(tmp_path / "ckpt", keep=keep, keep_best=keep_best, user_dir=tmp_path / "user",
                              user_keep=user_keep)
    trainee = Trainee(package, agent, ckpts, publish_freq=0, staging_dir=tmp_path / "pool")
    agent.framework_handler = LearnerHandler(tmp_path / "user", user_keep, lambda: trainee.train_step,
                                             resolve_precision("fp32", "cpu"), "cpu")
    return trainee


def checkpoint_at(trainee: Trainee, step: int, score=None, extra=None) -> None:
    trainee.train_step = step
    trainee.checkpoint(extra if extra is not None else {}, score)


def ids(path):
    return [c.id for c in ckpt_files.list_checkpoints(path)]


def run_state(ckpt_dir) -> dict:
    return json.loads((ckpt_dir / RUN_STATE_FILE).read_text())


def test_keeps_newest_k_plus_best(tmp_path):
    trainee = make_trainee(tmp_path, keep=5, keep_best=True)
    scores = {10: 50.0, 20: 900.0, 30: 100.0, 40: 120.0, 50: 130.0, 60: 140.0, 70: 150.0, 80: 160.0}
    for step, score in scores.items():
        checkpoint_at(trainee, step, score, {"counters": {"env_steps": step}})
    kept = [20, 40, 50, 60, 70, 80]  # 20 is the best, then the newest five
    assert ids(tmp_path / "ckpt") == kept
    # a pruned checkpoint leaves nothing behind: neither of its files, nor its counters
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == sorted(
        [f"model.ckpt-{i}.{kind}" for i in kept for kind in ("pkl", "progress.json", "train.pt")] + [COPY_FILE, RUN_STATE_FILE])
    assert sorted(int(k) for k in run_state(tmp_path / "ckpt")) == kept


def test_keeps_newest_k_without_scores(tmp_path):
    trainee = make_trainee(tmp_path, keep=3, keep_best=True)
    for step in range(1, 8):
        checkpoint_at(trainee, step)
    assert ids(tmp_path / "ckpt") == [5, 6, 7]


def test_user_saves_obey_their_own_cap(tmp_path):
    trainee = make_trainee(tmp_path, keep=3, keep_best=False, user_keep=2)
    for step in range(4):
        trainee.train_step = step
        trainee.save_user()  # the package's save_model() without a path: the user directory
    checkpoint_at(trainee, 100)
    assert ids(tmp_path / "user") == [2, 3]
    assert ids(tmp_path / "ckpt") == [100]


def learn_and_checkpoint(trainee: Trainee, rows, times: int) -> None:
    """`times` train steps, each followed by a checkpoint with the step as its env-step counter."""
    for _ in range(times):
        trainee.learn(rows)
        trainee.checkpoint({"counters": {"env_steps": trainee.train_step}}, None)


def test_stray_files_with_higher_ids_never_cost_a_good_checkpoint(tmp_path):
    """A resumed run next to garbage named like a newer checkpoint: pruning keeps the run's own
    newest K and never deletes the garbage it cannot vouch for (nor lets it count as one of K)."""
    ckpt = tmp_path / "ckpt"
    first = make_trainee(tmp_path, keep=2)
    rows = rows_from(first.agent)
    learn_and_checkpoint(first, rows, 3)
    (ckpt / "model.ckpt-99993.pkl").write_bytes(b"not a checkpoint")
    resumed = make_trainee(tmp_path, keep=2, seed=1)
    assert resumed.restore_newest() == (3, {"counters": {"env_steps": 3}})
    learn_and_checkpoint(resumed, rows, 6)
    assert ids(ckpt) == [8, 9, 99993]
    loaded = make_trainee(tmp_path, keep=2, seed=2).agent
    loaded.load_model(path=str(ckpt), id=9)  # the newest is a real, loadable checkpoint
    assert loaded.train_step == 9


def block_run_state_after_save_model(trainee: Trainee, ckpt, aside) -> None:
    """From now on the package's files are written, then the run's counters cannot be (a
    directory where run_state.json goes; on a disk, ENOSPC)."""
    save_model = trainee.agent.save_model

    def save_then_block(*args, **kwargs):
        save_model(*args, **kwargs)
        (ckpt / RUN_STATE_FILE).rename(aside)
        (ckpt / RUN_STATE_FILE).mkdir()

    trainee.agent.save_model = save_then_block


def test_a_failed_write_leaves_no_partial_checkpoint_and_prunes_nothing(tmp_path):
    """The package's files are written, then the run's counters cannot be. The partial checkpoint
    goes away again, the older ones stay (pruning waits for a complete one) and the pool keeps
    the last complete one."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=2)
    rows = rows_from(trainee.agent)
    learn_and_checkpoint(trainee, rows, 2)
    state = ckpt / RUN_STATE_FILE
    before = {p.name: p.read_bytes() for p in ckpt.glob("model.ckpt-*")}
    save_model = trainee.agent.save_model
    block_run_state_after_save_model(trainee, ckpt, tmp_path / "state.json")
    trainee.learn(rows)
    with pytest.raises(OSError):
        trainee.checkpoint({"counters": {"env_steps": 3}}, None)
    trainee.agent.save_model = save_model
    assert {p.name: p.read_bytes() for p in ckpt.glob("model.ckpt-*")} == before  # no model.ckpt-3*, 1 and 2 kept
    assert incomplete_ids(ckpt) == {3}  # from the copy: what is left of 3 vouches for nothing
    assert trainee.model_version == 2 and sorted(trainee.pool_item()) == ["model.ckpt-2.pkl", "model.ckpt-2.progress.json"]
    state.rmdir()
    (tmp_path / "state.json").rename(state)  # the disk recovers: the retry is a whole checkpoint
    trainee.checkpoint({"counters": {"env_steps": 3}}, None)
    assert ids(ckpt) == [2, 3] and sorted(run_state(ckpt)) == ["2", "3"]


class Killed(BaseException):
    """Stands for a SIGKILL or a power loss: nothing after it in the learner runs."""


def cut_off_after_save_model(trainee: Trainee) -> None:
    def save_then_die(*args, **kwargs):
        trainee.agent.__class__.save_model(trainee.agent, *args, **kwargs)
        raise Killed

    trainee.agent.save_model = save_then_die


@pytest.mark.parametrize("rewrite", [False, True], ids=["new-step", "same-step-again"])
def test_resume_passes_over_a_checkpoint_whose_write_was_cut_off(tmp_path, rewrite):
    """The learner dies after the package wrote checkpoint 9's files but before the run state
    says it is whole (or while it writes checkpoint 2 again, its files now a mix of two saves):
    --resume takes the newest checkpoint the run state vouches for, with its own counters, and
    the cut-off one counts for nothing while the run goes on."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=5)
    rows = rows_from(trainee.agent)
    learn_and_checkpoint(trainee, rows, 2)
    cut_off_after_save_model(trainee)
    trainee.learn(rows)
    cut = "2" if rewrite else "9"
    with pytest.raises(Killed):
        checkpoint_at(trainee, int(cut), extra={"counters": {"env_steps": 999}})
    assert run_state(ckpt)[cut]["incomplete"] is True and (ckpt / f"model.ckpt-{cut}.pkl").is_file()

    newest = 1 if rewrite else 2
    assert [c.id for c in ckpt_files.cut_off_checkpoints(ckpt)] == [int(cut)]
    assert ckpt_files.latest_checkpoint(ckpt).id == newest  # what evaluate, render and clean_ckpt see
    with pytest.raises(FileNotFoundError, match=f"cut off while they were written .*: \\[{cut}\\]"):
        ckpt_files.find_checkpoint(ckpt, int(cut))
    resumed = make_trainee(tmp_path, keep=2, seed=1)
    assert resumed.restore_newest() == (newest, {"counters": {"env_steps": newest}})
    assert resumed.ckpts.resumed_from == newest
    learn_and_checkpoint(resumed, rows, 3)  # training on: the cut-off 9 never counts among the 2 kept
    assert ids(ckpt) == [newest + 2, newest + 3]
    assert [c.id for c in ckpt_files.cut_off_checkpoints(ckpt)] == ([] if rewrite else [9])  # 2: written whole again


def test_a_failed_write_on_a_writable_disk_takes_its_entry_away_too(tmp_path):
    """The package's save_model fails (OSError) after writing part of checkpoint 3: its files and
    its flagged entry go, and the table is what it was."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=5)
    learn_and_checkpoint(trainee, rows_from(trainee.agent), 2)
    before = run_state(ckpt)

    def save_part_then_fail(path=None, id="1"):
        (ckpt / f"model.ckpt-{id}.pkl").write_bytes(b"part of a checkpoint")
        raise OSError(28, "No space left on device")

    trainee.agent.save_model = save_part_then_fail
    with pytest.raises(OSError):
        checkpoint_at(trainee, 3, extra={"counters": {"env_steps": 3}})
    assert run_state(ckpt) == before and json.loads((ckpt / COPY_FILE).read_text()) == before
    assert not ckpt_files.checkpoint_files(ckpt, 3)


def test_whatever_save_model_raises_is_a_write_failure_and_what_it_leaves_goes_with_the_next_checkpoint(tmp_path):
    """A disk that fills while the package's save_model writes shows as anything (torch's
    serializer: a RuntimeError): a WriteFailed (an OSError, which the learner retries). A new
    checkpoint's partial files go at once; a failed rewrite's (checkpoint 2 again, its files now a
    mix of two saves) stay flagged until the next whole checkpoint removes them."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=5)
    learn_and_checkpoint(trainee, rows_from(trainee.agent), 2)

    def save_part_then_fail(path=None, id="1"):
        (ckpt / f"model.ckpt-{id}.pkl").write_bytes(b"part of a checkpoint")
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")

    trainee.agent.save_model = save_part_then_fail
    with pytest.raises(WriteFailed, match=r"cannot write model.ckpt-3 into .*RuntimeError: .*unexpected pos"):
        checkpoint_at(trainee, 3, extra={"counters": {"env_steps": 3}})
    assert not ckpt_files.checkpoint_files(ckpt, 3) and sorted(run_state(ckpt)) == ["1", "2"]
    with pytest.raises(WriteFailed):
        checkpoint_at(trainee, 2, extra={"counters": {"env_steps": 22}})
    assert incomplete_ids(ckpt) == {2} and ids(ckpt) == [1]
    del trainee.agent.save_model  # the disk recovers
    checkpoint_at(trainee, 4, extra={"counters": {"env_steps": 4}})
    assert ids(ckpt) == [1, 4] and not ckpt_files.checkpoint_files(ckpt, 2) and sorted(run_state(ckpt)) == ["1", "4"]


def test_a_directory_taken_away_while_save_model_writes_is_a_write_failure_not_the_packages(tmp_path):
    """The checkpoint directory moves away (a disk unmounted, a folder renamed) after save_model
    wrote into it: no file is there to find, and that is the disk's fault (retried), not a
    package that ignored the platform's naming rule."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=5)
    learn_and_checkpoint(trainee, rows_from(trainee.agent), 2)
    save = trainee.agent.save_model

    def save_then_lose_the_directory(path=None, id="1"):
        save(path=path, id=id)
        ckpt.rename(tmp_path / "moved")
        ckpt.write_text("not a directory")

    trainee.agent.save_model = save_then_lose_the_directory
    with pytest.raises(WriteFailed, match=r"cannot write model.ckpt-3: .*ckpt is no longer a directory"):
        checkpoint_at(trainee, 3, extra={"counters": {"env_steps": 3}})


def test_a_rewrite_that_fails_before_any_file_keeps_the_checkpoint_whole(tmp_path):
    """Writing checkpoint 2 again (the final one at the same step) fails while the flag is being
    written (its copy: here a directory; on a disk, ENOSPC): no file was touched, so checkpoint 2
    keeps its entry unflagged and stays the newest."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=5)
    learn_and_checkpoint(trainee, rows_from(trainee.agent), 2)
    before = run_state(ckpt)
    (ckpt / COPY_FILE).unlink()
    (ckpt / COPY_FILE).mkdir()
    with pytest.raises(OSError):
        checkpoint_at(trainee, 2, extra={"counters": {"env_steps": 999}})
    assert run_state(ckpt) == before
    (ckpt / COPY_FILE).rmdir()
    assert make_trainee(tmp_path, keep=5, seed=1).restore_newest() == (2, {"counters": {"env_steps": 2}})


def test_after_a_reset_and_a_cut_off_write_the_older_whole_checkpoint_resumes_at_zero(tmp_path):
    """The user emptied the table (`{}`), the run went on to checkpoint 3, and 4 was cut off:
    --resume takes 3 with its counters; with 3 gone too, 2 (no entry since the reset) with the
    counters at 0."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=5)
    rows = rows_from(trainee.agent)
    learn_and_checkpoint(trainee, rows, 2)
    for name in (RUN_STATE_FILE, COPY_FILE):
        (ckpt / name).write_text("{}")
    learn_and_checkpoint(trainee, rows, 1)
    cut_off_after_save_model(trainee)
    trainee.learn(rows)
    with pytest.raises(Killed):
        checkpoint_at(trainee, 4, extra={"counters": {"env_steps": 4}})
    assert make_trainee(tmp_path, keep=5, seed=1).restore_newest() == (3, {"counters": {"env_steps": 3}})
    for path in ckpt_files.checkpoint_files(ckpt, 3):
        path.unlink()
    assert make_trainee(tmp_path, keep=5, seed=2).restore_newest() == (2, {})


def test_an_empty_run_state_resumes_the_newest_checkpoint_with_counters_at_zero(tmp_path):
    """`{}` in run_state.json is the reset a user writes on purpose (the launcher's advice when
    both files are lost): no checkpoint is ruled out for want of an entry."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=5)
    learn_and_checkpoint(trainee, rows_from(trainee.agent), 2)
    (ckpt / RUN_STATE_FILE).write_text("{}")
    (ckpt / COPY_FILE).write_text("{}")
    assert make_trainee(tmp_path, keep=5, seed=1).restore_newest() == (2, {})


def test_a_checkpoint_newer_than_the_run_state_knows_is_passed_over(tmp_path):
    """Its counters are unknown (a copy from elsewhere, say): resuming from it would lose them."""
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=5)
    learn_and_checkpoint(trainee, rows_from(trainee.agent), 2)
    for name in (RUN_STATE_FILE, COPY_FILE):
        (ckpt / name).write_text(json.dumps({"1": {"counters": {"env_steps": 1}}}))
    assert make_trainee(tmp_path, keep=5, seed=1).restore_newest() == (1, {"counters": {"env_steps": 1}})


def _corrupt_shuffle_rng(ckpt, _):
    _edit(train_state_file(ckpt, 2), lambda train: train.__setitem__("shuffle_rng", torch.zeros(8)))


def _corrupt_agent_counters(ckpt, _):
    file = progress_file(ckpt, 2)
    file.write_text(json.dumps({**json.loads(file.read_text()), "samples_learned": -16}))


def _corrupt_run_counters(ckpt, _):
    state = run_state(ckpt)
    state["2"]["counters"] = {"env_steps": "many"}
    (ckpt / RUN_STATE_FILE).write_text(json.dumps(state))


def _corrupt_optimizer(ckpt, _):
    def shrink(train):
        state = train["optimizer"]["state"]
        first = next(iter(state))
        state[first]["exp_avg"] = state[first]["exp_avg"].flatten()[:3].clone()
    _edit(train_state_file(ckpt, 2), shrink)


def _corrupt_weights(ckpt, newest):
    def poison(model):
        name = next(k for k, v in model.items() if v.is_floating_point())
        model[name] = model[name].clone().fill_(float("nan"))
    _edit(newest, poison)


def _edit(file, change):
    payload = torch.load(file, weights_only=True)
    change(payload)
    torch.save(payload, file)


@pytest.mark.parametrize("corrupt", [_corrupt_shuffle_rng, _corrupt_agent_counters, _corrupt_run_counters,
                                     _corrupt_optimizer, _corrupt_weights],
                         ids=["rng", "agent-counters", "run-counters", "optimizer-shape", "nan-weights"])
def test_a_checkpoint_that_reads_but_holds_bad_content_falls_back_to_the_older_one(tmp_path, corrupt):
    ckpt = tmp_path / "ckpt"
    trainee = make_trainee(tmp_path, keep=3)
    rows = rows_from(trainee.agent, n=16)
    trainee.learn(rows)  # optimizer moments exist
    trainee.checkpoint({"counters": {"env_steps": 10}}, None)
    at_one = {k: v.clone() for k, v in trainee.agent.model.state_dict().items()}
    trainee.learn(rows)
    trainee.checkpoint({"counters": {"env_steps": 20}}, None)
    corrupt(ckpt, ckpt / "model.ckpt-2.pkl")

    restored = make_trainee(tmp_path, keep=3, seed=1)
    ckpt_id, extra = restored.restore_newest()
    assert ckpt_id == 1 and extra["counters"] == {"env_steps": 10}
    assert restored.train_step == 1 and restored.agent.train_step == 1 and restored.agent.samples_learned == 16  # frames
    state = restored.agent.model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in at_one.items())  # all of checkpoint 1, nothing of 2
    restored.learn(rows)  # the restored optimizer state fits: training goes on
    assert all(torch.isfinite(p).all() for p in restored.agent.model.parameters())
