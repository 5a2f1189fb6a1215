"""The PPO objective against hand computation, and the update's mechanics."""
import math

import numpy as np
import pytest
import torch

from feature.back_to_the_realm.layout import INPUT_SHAPE
from agent.model import ActorCritic, ModelConfig
from agent.ppo import PPOConfig, ValueNorm, ppo_loss, ppo_update, scheduled
from feature.back_to_the_realm.ppo_definition import SEGMENT_FRAMES
from feature.back_to_the_realm.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM

# separate actor and critic: regressing the synthetic batches' random returns cannot move the
# policy's features, so a test sees the policy loss's own effect
TINY = ModelConfig(channels=[4], kernel_sizes=[5], strides=[4], hidden_size=16, share_backbone=False)

# Four samples, numbers chosen so every branch of the loss shows up.
RATIO = [1.5, 0.5, 1.1, 5.0]
ADV = [1.0, -2.0, 0.5, -1.0]
OLD_V, NEW_V, RET = [0.0, 1.0, 2.0, 0.0], [0.5, 1.1, 1.0, 0.0], [1.0, 1.0, 1.5, 0.0]
ENTROPY = [1.0, 2.0, 1.5, 0.5]


def _loss(cfg, ent_coef=0.01):
    t = lambda xs: torch.tensor(xs, dtype=torch.float64)  # noqa: E731
    old_lp = t([-0.7, -1.2, -0.3, -2.0])
    new_lp = old_lp + torch.log(t(RATIO))
    return ppo_loss(new_lp, t(ENTROPY), t(NEW_V), old_lp, t(OLD_V), t(ADV), t(RET), cfg, ent_coef)


def test_ppo_loss_matches_hand_computation():
    cfg = PPOConfig(clip_coef=0.2, vf_coef=0.5, clip_vloss=True)
    loss, stats = _loss(cfg)
    # clipped surrogate per sample: min(r·A, clip(r, .8, 1.2)·A) = 1.2, -1.6, .55, -5
    policy_loss = -(1.2 - 1.6 + 0.55 - 5.0) / 4  # 1.2125
    # value: max((v-R)², (v_clip-R)²) with v_clip = old ± .2: .64, .01, .25, 0
    value_loss = 0.5 * (0.64 + 0.01 + 0.25 + 0.0) / 4  # 0.1125
    entropy = 1.25
    assert stats["policy_loss"].item() == pytest.approx(policy_loss)
    assert stats["value_loss"].item() == pytest.approx(value_loss)
    assert stats["entropy"].item() == pytest.approx(entropy)
    assert loss.item() == pytest.approx(policy_loss - 0.01 * entropy + 0.5 * value_loss)
    kl = np.mean([(r - 1) - math.log(r) for r in RATIO])
    assert stats["approx_kl"].item() == pytest.approx(kl)
    assert stats["clip_frac"].item() == pytest.approx(0.75)  # |r-1| > .2 for 1.5, 0.5, 5.0


def test_dual_clip_bounds_negative_advantages():
    _, stats = _loss(PPOConfig(clip_coef=0.2, dual_clip=3.0))
    # the last sample (r=5, A=-1): max(-5, 3·-1) = -3; the others are unchanged
    assert stats["policy_loss"].item() == pytest.approx(-(1.2 - 1.6 + 0.55 - 3.0) / 4)


def test_unclipped_value_loss():
    _, stats = _loss(PPOConfig(clip_vloss=False))
    assert stats["value_loss"].item() == pytest.approx(0.5 * (0.25 + 0.01 + 0.25 + 0.0) / 4)


def test_schedules():
    assert scheduled(1.0, 0.0, "constant", 0.7) == 1.0
    assert scheduled(1.0, 0.2, "linear", 0.5) == pytest.approx(0.6)
    assert scheduled(1.0, 0.2, "linear", 3.0) == pytest.approx(0.2)


def test_value_norm_matches_numpy_over_all_batches():
    rng = np.random.default_rng(0)
    batches = [rng.normal(5, 3, size=n) for n in (7, 1, 30)]
    norm = ValueNorm()
    for b in batches:
        norm.update(torch.tensor(b))
    data = np.concatenate(batches)
    assert norm.mean.item() == pytest.approx(data.mean())
    assert norm.var.item() == pytest.approx(data.var())
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    assert torch.allclose(norm.denormalize(norm.normalize(x)), x)


def _batch(n=64, seed=0, good_action=3):
    g = torch.Generator().manual_seed(seed)
    actions = torch.randint(0, NUM_ACTIONS, (n,), generator=g)
    return {
        "map": torch.rand((n,) + MAP_SHAPE, generator=g),
        "state": torch.rand((n, STATE_DIM), generator=g),
        "legal": torch.ones(n, NUM_ACTIONS),
        "action": actions,
        "log_prob": torch.full((n,), -math.log(NUM_ACTIONS)),
        "value": torch.zeros(n),
        "advantage": (actions == good_action).float() - 0.2,
        "ret": torch.randn(n, generator=g),
    }


def _model(seed=0):
    torch.manual_seed(seed)
    return ActorCritic(TINY, INPUT_SHAPE)


def test_update_raises_probability_of_advantaged_action():
    model, batch = _model(), _batch()
    cfg = PPOConfig(learning_rate=1e-2, update_epochs=4, num_minibatches=2)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    with torch.no_grad():
        before = torch.softmax(model(batch["map"], batch["state"], batch["legal"])[0], -1)[:, 3].mean()
    metrics = ppo_update(model, opt, batch, cfg, 0.0, None, torch.Generator().manual_seed(0))
    with torch.no_grad():
        after = torch.softmax(model(batch["map"], batch["state"], batch["legal"])[0], -1)[:, 3].mean()
    assert after > before + 0.05
    for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac", "explained_variance",
                "grad_norm", "lr"):
        assert key in metrics and math.isfinite(metrics[key]), key
    assert metrics["minibatches"] == 8 and metrics["early_stop"] == 0.0


def test_target_kl_stops_the_update_early():
    model, batch = _model(), _batch()
    with torch.no_grad():  # on-policy samples: the first minibatch has KL 0
        logits = model(batch["map"], batch["state"], batch["legal"])[0]
        batch["log_prob"] = torch.log_softmax(logits, -1).gather(1, batch["action"][:, None]).squeeze(1)
    cfg = PPOConfig(learning_rate=5e-2, update_epochs=4, num_minibatches=4, target_kl=1e-6)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    metrics = ppo_update(model, opt, batch, cfg, 0.0, None, torch.Generator().manual_seed(0))
    # the second minibatch sees the first step's change and stops the update
    assert metrics["early_stop"] == 1.0 and metrics["minibatches"] == 2


def test_linear_lr_schedule_is_applied_to_the_optimizer():
    model, batch = _model(), _batch(16)
    cfg = PPOConfig(learning_rate=1e-3, lr_schedule="linear", lr_final=0.0, update_epochs=1, num_minibatches=1)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    metrics = ppo_update(model, opt, batch, cfg, 0.25, None, torch.Generator().manual_seed(0))
    assert metrics["lr"] == pytest.approx(7.5e-4) and opt.param_groups[0]["lr"] == pytest.approx(7.5e-4)


def test_value_norm_update_uses_batch_returns():
    model, batch = _model(), _batch(32)
    norm = ValueNorm()
    cfg = PPOConfig(update_epochs=1, num_minibatches=1, value_norm=True)
    ppo_update(model, torch.optim.Adam(model.parameters()), batch, cfg, 0.0, norm, torch.Generator())
    assert norm.mean.item() == pytest.approx(batch["ret"].double().mean().item())
    assert norm.count.item() == 32


def test_explained_variance_of_perfect_values_is_one():
    model, batch = _model(), _batch(16)
    batch["value"] = batch["ret"].clone()
    cfg = PPOConfig(update_epochs=1, num_minibatches=1)
    metrics = ppo_update(model, torch.optim.Adam(model.parameters()), batch, cfg, 0.0, None, torch.Generator())
    assert metrics["explained_variance"] == pytest.approx(1.0)


def test_ppo_config_validation():
    with pytest.raises(ValueError, match="dual_clip"):
        PPOConfig(dual_clip=1.0).validate()
    with pytest.raises(ValueError, match="num_steps"):
        PPOConfig(num_steps=0).validate()
    with pytest.raises(ValueError, match=f"num_steps \\({SEGMENT_FRAMES + 1}\\) must be <= {SEGMENT_FRAMES}"):
        PPOConfig(num_steps=SEGMENT_FRAMES + 1).validate()
    PPOConfig(num_steps=SEGMENT_FRAMES).validate()
    assert PPOConfig(num_steps=32).max_frames(16) == 512
