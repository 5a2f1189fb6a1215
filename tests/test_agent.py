"""Agent: masking, predict/exploit, learn, checkpoints (state dicts, exact resume)."""
import dataclasses
import json
import os

import numpy as np
import pytest
import torch

from feature.back_to_the_realm.layout import INPUT_SHAPE
from agent.back_to_the_realm.ppo_agent import Agent
from agent.checkpoint_io import CheckpointError, latest_checkpoint_id, progress_file, train_state_file
from agent.back_to_the_realm.ppo_config import Settings
from agent.model import ActorCritic, ModelConfig
from agent.ppo import PPOConfig
from feature.back_to_the_realm.ppo_definition import ActData, Frame, ObsData, SampleData2NumpyData, NumpyData2SampleData, sample_process
from feature.back_to_the_realm.constants import VIEW_SIZE
from feature.segments import NUM_ACTIONS
from feature.back_to_the_realm.layout import MAP_SHAPE, MEMORY_CHANNEL, NUM_MOVES, STATE_DIM, earlier_visits, legal_mask

TINY = ModelConfig(channels=[4, 8], kernel_sizes=[5, 3], strides=[4, 2], hidden_size=16)
PPO = PPOConfig(update_epochs=2, num_minibatches=2)


def make(model=TINY, ppo=PPO, seed=None) -> Agent:
    return Agent(agent_type="learner", settings=Settings(model=model, ppo=ppo), seed=seed)


def obs_batch(n, seed=0, flash_ready=True) -> list[ObsData]:
    """Random observations on cells the hero has not been on before (exploit is then greedy)."""
    rng = np.random.default_rng(seed)
    out = [ObsData(map=rng.random(MAP_SHAPE, dtype=np.float32), state=rng.random(STATE_DIM, dtype=np.float32),
                   legal=legal_mask([1, int(flash_ready)])) for _ in range(n)]
    for o in out:
        o.map[MEMORY_CHANNEL, VIEW_SIZE // 2, VIEW_SIZE // 2] = 0.0
    return out


def samples(agent, n=24, seed=0, segment=10, terminated=False):
    """n frames of one episode the agent plays, as segments of `segment` frames (the last one
    shorter) with their next observations; the last frame `terminated` or cut."""
    obs = obs_batch(n + 1, seed)
    acts = agent.predict(obs[:n])
    rewards = np.random.default_rng(seed).normal(size=n)
    frames = [Frame(obs=o, act=a, reward=float(r), terminated=terminated and t == n - 1)
              for t, (o, a, r) in enumerate(zip(obs, acts, rewards))]
    return [s for start in range(0, n, segment)
            for s in sample_process(frames[start:start + segment], obs[min(start + segment, n)])]


def favour_flashes(agent):
    with torch.no_grad():
        agent.model.policy_head.bias[NUM_MOVES:] = 50.0  # flashes would win by far if they were legal


def test_predict_returns_act_data_with_consistent_log_prob():
    agent = make(seed=0)
    obs = obs_batch(5)
    acts = agent.predict(obs)
    assert len(acts) == 5 and all(isinstance(a, ActData) and 0 <= a.action < 16 for a in acts)
    logits, _ = agent.model(*agent._obs_tensors(obs))
    log_probs = torch.log_softmax(logits, -1)
    for i, a in enumerate(acts):
        assert a.log_prob == pytest.approx(log_probs[i, a.action].item(), abs=1e-5)
    assert agent.predict([]) == []


def test_no_flash_is_sampled_or_chosen_during_cooldown():
    agent = make(seed=0)
    favour_flashes(agent)
    cooling = obs_batch(64, flash_ready=False)
    sampled = [a.action for _ in range(30) for a in agent.predict(cooling)]
    assert max(sampled) < NUM_MOVES
    assert max(a.action for a in agent.exploit(cooling)) < NUM_MOVES
    logits, _ = agent.model(*agent._obs_tensors(cooling))
    assert (torch.softmax(logits, -1)[:, NUM_MOVES:] == 0).all()  # exactly zero probability
    ready = obs_batch(8, flash_ready=True)
    assert min(a.action for a in agent.exploit(ready)) >= NUM_MOVES  # the mask is the only thing stopping them


def on_visited_cell(obs: list[ObsData], visits: int) -> list[ObsData]:
    """The same observations with the hero's own cell visited `visits` times before."""
    out = []
    for o in obs:
        m = o.map.copy()
        m[MEMORY_CHANNEL, VIEW_SIZE // 2, VIEW_SIZE // 2] = min(1.0, 0.2 * visits)
        out.append(ObsData(map=m, state=o.state, legal=o.legal))
    return out


def test_exploit_is_greedy_on_fresh_cells():
    for policy in ("greedy", "unstuck"):
        agent = make(ppo=dataclasses.replace(PPO, exploit_policy=policy), seed=0)
        obs = on_visited_cell(obs_batch(6), 1)
        logits, _ = agent.model(*agent._obs_tensors(obs))
        assert [a.action for a in agent.exploit(obs)] == logits.argmax(-1).tolist()


def test_unstuck_exploit_draws_where_the_hero_keeps_coming_back():
    agent = make(ppo=dataclasses.replace(PPO, exploit_policy="unstuck", unstuck_visits=2), seed=0)
    obs = obs_batch(1)
    logits, _ = agent.model(*agent._obs_tensors(obs))
    best = int(logits.argmax(-1))
    looping = on_visited_cell(obs, 2)
    drawn = [agent.exploit(looping)[0].action for _ in range(60)]
    assert len(set(drawn)) > 3  # an untrained policy is near uniform: draws spread over the moves
    mixed = on_visited_cell(obs, 1) + looping  # per observation: greedy where fresh, drawn where looping
    assert all(agent.exploit(mixed)[0].action == best for _ in range(20))
    greedy = make(ppo=dataclasses.replace(PPO, exploit_policy="greedy"), seed=0)
    assert {greedy.exploit(looping)[0].action for _ in range(20)} == {best}


def test_earlier_visits_reads_the_simulators_memory_map():
    import realm
    from feature.back_to_the_realm.ppo_definition import observation_process

    env = realm.make_env(map_seed=0)
    obs = env.reset(usr_conf={"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 0}})
    seen = [earlier_visits(observation_process(obs).map)]
    for action in (0, 4, 0, 4, 0):  # east, west, ...: the cell east of the start, three times
        obs = env.step(action)[1]
        seen.append(earlier_visits(observation_process(obs).map))
    assert (seen[1], seen[3], seen[5]) == (0, 1, 2)


def test_model_init_follows_the_recipe():
    model = ActorCritic(ModelConfig(share_backbone=False), INPUT_SHAPE)
    assert model.critic_backbone is not None and model.critic_backbone is not model.actor_backbone
    w = model.policy_head.weight.detach()
    # orthogonal rows scaled by the gain 0.01: W Wᵀ = 0.01² I
    assert torch.allclose(w @ w.T, torch.eye(w.shape[0]) * 1e-4, atol=1e-6)
    assert torch.all(model.value_head.bias == 0)
    shared = ActorCritic(ModelConfig(), INPUT_SHAPE)  # the default
    assert shared.critic_backbone is None and shared.value_backbone is shared.actor_backbone
    assert sum(p.numel() for p in shared.parameters()) < sum(p.numel() for p in model.parameters())


def test_either_conv_layout_computes_the_same_function_and_reads_the_others_weights():
    """[model] conv_layout changes where the towers' numbers lie in memory, not what they compute:
    one set of weights gives the same logits and values (to float rounding) in both layouts, and
    a checkpoint of one loads into the other."""
    torch.manual_seed(0)
    nhwc = ActorCritic(ModelConfig(), INPUT_SHAPE)
    nchw = ActorCritic(ModelConfig(conv_layout="plain"), INPUT_SHAPE)
    nchw.load_state_dict(nhwc.state_dict())
    assert nchw.actor_backbone.conv[0].weight.is_contiguous() and not nhwc.actor_backbone.conv[0].weight.is_contiguous()
    channels, size, state_dim = INPUT_SHAPE
    maps, state = torch.rand(8, channels, size, size), torch.rand(8, state_dim)
    legal = torch.ones(8, NUM_ACTIONS)
    (logits_a, value_a), (logits_b, value_b) = nhwc(maps, state, legal), nchw(maps, state, legal)
    assert torch.allclose(logits_a, logits_b, atol=1e-5) and torch.allclose(value_a, value_b, atol=1e-5)
    assert nchw.conv_input(maps).is_contiguous() and nhwc.conv_input(maps).is_contiguous(
        memory_format=torch.channels_last)
    with pytest.raises(ValueError, match=r"conv_layout: got 'nhwc', allowed: channels_last \| plain"):
        ModelConfig(conv_layout="nhwc").validate()


def test_model_config_rejects_a_tower_that_eats_the_map():
    with pytest.raises(ValueError, match="below 1"):
        ModelConfig(channels=[8, 8], kernel_sizes=[9, 9], strides=[8, 8]).validate(INPUT_SHAPE)


def test_learn_updates_and_counts():
    agent = make(seed=0)
    before = {k: v.clone() for k, v in agent.model.state_dict().items()}
    metrics = agent.learn(samples(agent))
    assert agent.train_step == 1 and agent.model_version == 1 and agent.samples_learned == 24
    assert metrics["ppo/batch_size"] == 24 and metrics["ppo/segments"] == 3 and np.isfinite(metrics["loss/policy"])
    assert any(not torch.equal(before[k], v) for k, v in agent.model.state_dict().items())


def test_acting_after_learning_switches_the_model_to_eval_mode_and_learning_back():
    """One process that learns and acts (a learner's own evaluation): acting after a learn step runs
    every layer in eval mode, and the next update runs in train mode."""
    agent = make(seed=0)
    batch = samples(agent)
    assert not agent.model.training  # predict in samples() left it in eval mode
    seen = []  # each layer's mode as it runs
    for layer in agent.model.modules():
        if not list(layer.children()):
            layer.register_forward_pre_hook(lambda module, args: seen.append(module.training))
    agent.learn(batch)
    assert seen[-1] and agent.model.training  # the update ran in train mode (the critic pass before it may not)
    seen.clear()
    agent.predict(obs_batch(3)), agent.exploit(obs_batch(3))
    assert seen and not any(seen) and not agent.model.training

def captured_batches(monkeypatch) -> list[dict]:
    """Every batch Agent.learn hands ppo_update, as it was handed over (the update still runs)."""
    import agent.ppo_base_agent as agent_module

    seen, update = [], agent_module.ppo_update

    def recording(model, optimizer, batch, *args):
        seen.append({k: v.clone() for k, v in batch.items()})
        return update(model, optimizer, batch, *args)
    monkeypatch.setattr(agent_module, "ppo_update", recording)
    return seen


def reference_batch(agent, segments) -> dict[str, np.ndarray]:
    """What learn should train on: each segment's frames, valued one segment at a time by the
    agent's critic as it is now, advantages by the plain loop of tests/test_gae.py."""
    from test_gae import reference_gae

    out = {k: [] for k in ("action", "log_prob", "value", "advantage", "ret")}
    for seg in segments:
        n = int(seg.mask.sum())
        with torch.no_grad():
            maps = torch.from_numpy(np.concatenate([seg.map[:n], seg.next_map[None]]))
            states = torch.from_numpy(np.concatenate([seg.state[:n], seg.next_state[None]]))
            values = agent.model.value_norm.denormalize(agent.model.value(maps, states)).double().numpy()
        adv = reference_gae(seg.reward[:n].tolist(), values[:n].tolist(), values[n], seg.terminated[:n].tolist(),
                            agent.ppo_cfg.gamma, agent.ppo_cfg.gae_lambda)
        out["action"] += seg.action[:n].tolist()
        out["log_prob"] += seg.log_prob[:n].tolist()
        out["value"] += values[:n].tolist()
        out["advantage"] += adv
        out["ret"] += (np.asarray(adv) + values[:n]).tolist()
    return {k: np.asarray(v) for k, v in out.items()}


def assert_trained_on(batch, reference):
    assert batch["action"].tolist() == reference["action"].tolist()
    np.testing.assert_allclose(batch["log_prob"].numpy(), reference["log_prob"], rtol=1e-6)
    for key in ("value", "advantage", "ret"):
        assert batch[key].dtype == torch.float32
        np.testing.assert_allclose(batch[key].numpy(), reference[key], rtol=1e-4, atol=1e-4, err_msg=key)


@pytest.mark.parametrize("value_norm", [False, True])
def test_learn_recomputes_advantages_with_its_current_critic(monkeypatch, value_norm):
    """The advantages, returns and old values of an update come from the learner's critic at
    that update, not from anything the actor computed: after the critic changes, the same
    segments train on other advantages, those of the new critic."""
    agent = make(ppo=dataclasses.replace(PPO, value_norm=value_norm, gamma=0.9, gae_lambda=0.8), seed=0)
    if value_norm:  # values leave the critic normalised: learn must de-normalise them for GAE
        agent.model.value_norm.update(torch.tensor([-3.0, 1.0, 8.0]))
    rows = [SampleData2NumpyData(s) for s in samples(agent, n=23, segment=8, terminated=True)
            + samples(agent, n=9, seed=1, segment=8)]
    segments = [NumpyData2SampleData(r) for r in rows]  # as the learner gets them from the replay
    seen = captured_batches(monkeypatch)
    first = reference_batch(agent, segments)
    agent.learn(segments)
    assert_trained_on(seen[0], first)

    with torch.no_grad():  # another critic
        for p in agent.model.value_backbone.parameters():
            p.add_(0.3 * torch.randn_like(p))
        agent.model.value_head.bias.add_(2.0)
    second = reference_batch(agent, segments)
    agent.learn(segments)
    assert_trained_on(seen[1], second)
    assert np.abs(second["advantage"] - first["advantage"]).max() > 0.1
    assert agent.samples_learned == 2 * 32  # frames, not segments


def test_learn_values_its_frames_in_the_learners_precision(monkeypatch):
    """The value pass runs inside learn, so under the autocast the learner runs learn in."""
    agent = make(seed=0)
    calls = []
    agent.model.value_backbone.conv[0].register_forward_hook(
        lambda module, inputs, output: calls.append((torch.is_grad_enabled(), inputs[0].dtype)))
    seen = captured_batches(monkeypatch)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        agent.learn(samples(agent, n=12))
    assert calls[0] == (False, torch.bfloat16)  # the no-grad value pass, before the update's passes
    assert seen[0]["value"].dtype == seen[0]["advantage"].dtype == torch.float32
    assert torch.isfinite(seen[0]["advantage"]).all()


def test_same_seed_same_losses():
    a, b = make(seed=3), make(seed=3)
    for step in range(2):
        assert a.learn(samples(a, seed=step)) == b.learn(samples(b, seed=step))


def test_checkpoint_is_a_state_dict_the_platform_loads(tmp_path, monkeypatch):
    src = make(ppo=PPOConfig(value_norm=True, update_epochs=1), seed=0)
    src.learn(samples(src))
    file = src.save_model(tmp_path, 5)
    assert file.name == "model.ckpt-5.pkl"
    assert sorted(p.name for p in tmp_path.iterdir()) == [  # no temp file
        "model.ckpt-5.pkl", "model.ckpt-5.progress.json", "model.ckpt-5.train.pt"]
    model = ActorCritic(TINY, INPUT_SHAPE)
    model.load_state_dict(torch.load(file))  # what the platform's own agents do
    assert float(model.value_norm.count) == 24  # the return statistics travel with the weights
    obs = obs_batch(8, seed=4)
    logits, _ = model(*src._obs_tensors(obs))
    assert logits.argmax(-1).tolist() == [a.action for a in src.exploit(obs)]

    weights_only = tmp_path / "upload"  # a package uploaded with the .pkl alone still acts
    weights_only.mkdir()
    (weights_only / file.name).write_bytes(file.read_bytes())
    with monkeypatch.context() as acting:  # an actor never builds an optimizer (its first one costs ~1 CPU-s)
        acting.setattr(Agent, "_new_optimizer", lambda self: pytest.fail("an acting agent built an optimizer"))
        dst = make(seed=99)
        dst.load_model(str(weights_only), 5)
        assert [(a.action, a.log_prob) for a in dst.exploit(obs)] == [(a.action, a.log_prob) for a in src.exploit(obs)]
        assert dst.train_step == 0

        actor = tmp_path / "pool"  # what the model pool carries: the weights and the progress record
        actor.mkdir()
        for name in (file.name, progress_file(tmp_path, 5).name):
            (actor / name).write_bytes((tmp_path / name).read_bytes())
        dst.load_model(str(actor), 5)
        dst.predict(obs)
        assert (dst.train_step, dst.samples_learned, dst.model_version) == (1, src.samples_learned, 1)
    assert not dst.optimizer.state_dict()["state"]  # the optimizer is the learner's alone


def test_resume_is_exact(tmp_path):
    """Save, load into a fresh agent, learn the same batches: identical losses and weights."""
    cfg = PPOConfig(value_norm=True, update_epochs=2, num_minibatches=3, lr_schedule="linear", schedule_samples=100)
    src = make(ppo=cfg, seed=0)
    src.learn(samples(src, seed=1))
    src.save_model(tmp_path, 1)
    batches = [samples(src, seed=s) for s in (2, 3)]
    dst = make(ppo=cfg, seed=42)
    dst.load_model(tmp_path, "latest")
    assert (dst.train_step, dst.samples_learned, dst.model_version) == (src.train_step, src.samples_learned, 1)
    for batch in batches:
        assert dst.learn(batch) == src.learn(batch)
    for key, value in src.model.state_dict().items():
        assert torch.equal(value, dst.model.state_dict()[key]), key


def test_save_load_round_trip_gives_identical_actions(tmp_path):
    src = make(ppo=PPOConfig(value_norm=True, update_epochs=1), seed=0)
    src.learn(samples(src))
    src.save_model(tmp_path, 5)
    src.save_model(tmp_path, 12)
    assert latest_checkpoint_id(tmp_path) == 12
    dst = make(ppo=PPOConfig(value_norm=True, update_epochs=1), seed=99)
    dst.load_model(tmp_path, 5)
    obs = obs_batch(16, seed=4)
    assert [(a.action, a.log_prob) for a in dst.exploit(obs)] == [(a.action, a.log_prob) for a in src.exploit(obs)]
    src.sample_generator.manual_seed(1)
    dst.sample_generator.manual_seed(1)
    assert [a.action for a in dst.predict(obs)] == [a.action for a in src.predict(obs)]
    assert dst.train_step == src.train_step and dst.samples_learned == src.samples_learned
    assert dst.optimizer.state_dict()["state"][0]["step"] == src.optimizer.state_dict()["state"][0]["step"]
    dst.train_step = -1
    dst.load_model(tmp_path, "latest")  # numbers and "latest" both work
    assert dst.train_step == src.train_step


def _negative_counter(path):
    file = progress_file(path, 1)
    file.write_text(json.dumps({**json.loads(file.read_text()), "train_step": -3}))


def _edit_train_state(edit):
    def corrupt(path):
        state = torch.load(train_state_file(path, 1))
        edit(state)
        torch.save(state, train_state_file(path, 1))
    return corrupt


_short_rng = _edit_train_state(lambda state: state.__setitem__("shuffle_rng", torch.zeros(5, dtype=torch.uint8)))
_no_param_groups = _edit_train_state(lambda state: state["optimizer"].__setitem__("param_groups", []))


@pytest.mark.parametrize("corrupt, message", [(_negative_counter, "train_step"), (_short_rng, "shuffle_rng"),
                                              (_no_param_groups, "optimizer state does not fit")])
def test_a_bad_training_state_leaves_the_agent_as_it_was(tmp_path, corrupt, message):
    agent = make(seed=0)
    agent.learn(samples(agent))
    agent.save_model(tmp_path, 1)
    corrupt(tmp_path)
    other = make(seed=5)
    before = {k: v.clone() for k, v in other.model.state_dict().items()}
    with pytest.raises(CheckpointError, match=message):
        other.load_model(tmp_path, 1)
    assert all(torch.equal(v, other.model.state_dict()[k]) for k, v in before.items()) and other.train_step == 0
    assert not other.optimizer.state_dict()["state"]


def test_an_acting_agent_loads_the_weights_and_counters_and_leaves_the_training_state(tmp_path):
    """A checkpoint whose optimizer state a learner refuses still plays: an aisrv, actor or
    evaluation agent never trains, so it neither checks nor applies the training state, and in a
    fresh process its load imports no torch._dynamo (which any optimizer imports, ~1 CPU-second)."""
    import subprocess
    import sys

    from agent.checkpointed import ACTING_TYPES
    from tests.conftest import REPO_ROOT

    agent = make(seed=0)
    agent.learn(samples(agent))
    agent.save_model(tmp_path, 1)
    _no_param_groups(tmp_path)
    with pytest.raises(CheckpointError, match="optimizer state does not fit"):
        make(seed=5).load_model(tmp_path, 1)
    for kind in ACTING_TYPES:
        actor = Agent(agent_type=kind, settings=Settings(model=TINY, ppo=PPO), seed=5)
        actor.load_model(tmp_path, 1)
        assert all(torch.equal(v, actor.model.state_dict()[k]) for k, v in agent.model.state_dict().items())
        assert (actor.train_step, actor.samples_learned) == (agent.train_step, agent.samples_learned)
        assert actor._optimizer is None
    code = f"""
import sys
from agent.back_to_the_realm.ppo_agent import Agent
from agent.back_to_the_realm.ppo_config import Settings
from agent.model import ModelConfig
from agent.ppo import PPOConfig
settings = Settings(model=ModelConfig(**{dataclasses.asdict(TINY)!r}), ppo=PPOConfig(**{dataclasses.asdict(PPO)!r}))
actor = Agent(agent_type="eval", settings=settings, seed=5)
actor.load_model({str(tmp_path)!r}, 1)
print(actor.train_step, "torch._dynamo" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(agent.train_step), "False"]


def test_corrupt_checkpoint_names_the_file(tmp_path):
    agent = make(seed=0)
    file = agent.save_model(tmp_path, 1)
    file.write_bytes(file.read_bytes()[: os.path.getsize(file) // 2])  # truncated write
    with pytest.raises(CheckpointError, match="model.ckpt-1.pkl"):
        agent.load_model(tmp_path, 1)
    (tmp_path / "model.ckpt-2.pkl").write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="model.ckpt-2.pkl"):
        agent.load_model(tmp_path, "latest")
    with pytest.raises(CheckpointError, match="not found"):
        agent.load_model(tmp_path, 3)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        agent.load_model(tmp_path / "empty", "latest")


def test_foreign_architecture_is_refused_naming_tensors(tmp_path):
    make(seed=0).save_model(tmp_path, 1)
    other_cfg = ModelConfig(channels=[8, 8], kernel_sizes=[5, 3], strides=[4, 2], hidden_size=16, share_backbone=False)
    other = make(model=other_cfg)
    with pytest.raises(CheckpointError) as err:
        other.load_model(tmp_path, 1)
    message = str(err.value)
    assert "model.ckpt-1.pkl" in message
    assert "actor_backbone.conv.0.weight: checkpoint (4, 4, 5, 5) vs model (8, 4, 5, 5)" in message
    assert "missing critic_backbone.conv.0.weight" in message


@pytest.mark.parametrize("share_backbone", [False, True])
def test_the_actor_and_the_critic_alone_give_what_the_whole_model_gives(share_backbone):
    """Acting runs the actor alone and the learner's value pass the critic alone."""
    agent = make(model=dataclasses.replace(TINY, share_backbone=share_backbone), seed=0)
    maps, states, legal = agent._obs_tensors(obs_batch(6, flash_ready=False))
    with torch.no_grad():
        logits, value = agent.model(maps, states, legal)
        assert torch.allclose(agent.model.policy(maps, states, legal), logits, atol=1e-6)
        assert torch.allclose(agent.model.value(maps, states), value, atol=1e-6)
