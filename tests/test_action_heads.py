"""The factored action head ([model] action_head = "factored"): a direction head and a
walk/flash head whose log-probabilities add, over the same 16 actions as the joint head."""
import dataclasses

import numpy as np
import pytest
import torch

from feature.back_to_the_realm.layout import INPUT_SHAPE
from agent.back_to_the_realm.ppo_agent import Agent
from agent.back_to_the_realm.ppo_config import Settings
from agent.model import ActorCritic, ModelConfig
from feature.back_to_the_realm.layout import NUM_ACTIONS, NUM_MOVES, legal_mask
from test_agent import obs_batch

TINY = ModelConfig(channels=[4, 8], kernel_sizes=[5, 3], strides=[4, 2], hidden_size=16)
FACTORED = dataclasses.replace(TINY, action_head="factored")


def make(model=FACTORED, seed=0) -> Agent:
    return Agent(agent_type="learner", settings=Settings(model=model), seed=seed)


@pytest.mark.parametrize("core", ["none", "lstm"])
def test_probabilities_sum_to_one_and_an_illegal_flash_is_never_drawn(core):
    agent = make(dataclasses.replace(FACTORED, core=core, core_size=8))
    with torch.no_grad():
        agent.model.policy_head.mode.bias[1] = 50.0  # flashing would win by far if it were legal
    for flash_ready in (True, False):
        obs = obs_batch(64, seed=3, flash_ready=flash_ready)
        tensors = agent._obs_tensors(obs)
        with torch.no_grad():
            logits = (agent.model.step(*tensors, agent._core_states(obs))[0] if core != "none"
                      else agent.model.policy(*tensors))
        probs = torch.softmax(logits, -1)
        torch.testing.assert_close(probs.sum(-1), torch.ones(64))
        if flash_ready:
            assert (probs[:, NUM_MOVES:].sum(-1) > 0.99).all()
        else:
            assert (probs[:, NUM_MOVES:] == 0).all()
            actions = [a.action for _ in range(5) for a in agent.predict(obs)] + [a.action for a in agent.exploit(obs)]
            assert max(actions) < NUM_MOVES


def test_the_heads_log_probabilities_add():
    """log π(m × 8 + d) = log p_direction(d) + log p_mode(m); the entropy is the heads' sum."""
    model = ActorCritic(FACTORED, INPUT_SHAPE)
    with torch.no_grad():
        model.policy_head.mode.bias.copy_(torch.tensor([0.3, -0.4]))
        maps, states, legal = make()._obs_tensors(obs_batch(8, seed=1))
        features = model.actor_backbone(maps, states)
        direction = torch.log_softmax(model.policy_head.direction(features), -1)
        mode = torch.log_softmax(model.policy_head.mode(features), -1)
        joint = torch.log_softmax(model.policy(maps, states, legal), -1)
    torch.testing.assert_close(joint, (mode[:, :, None] + direction[:, None, :]).flatten(1))
    entropy = torch.distributions.Categorical(logits=joint).entropy()
    heads = sum(torch.distributions.Categorical(logits=x).entropy() for x in (direction, mode))
    torch.testing.assert_close(entropy, heads)


@pytest.mark.parametrize("flash_ready", [True, False])
def test_joint_and_factored_give_the_same_log_probability_to_the_same_distribution(flash_ready):
    """A joint head whose logits are the factored head's sums (W[m × 8 + d] = W_dir[d] + W_mode[m])
    is the same distribution: the same log-probability for every action, legal or not."""
    factored = ActorCritic(FACTORED, INPUT_SHAPE)
    joint = ActorCritic(TINY, INPUT_SHAPE)
    joint.load_state_dict({k: v for k, v in factored.state_dict().items() if not k.startswith("policy_head")},
                          strict=False)
    head = factored.policy_head
    with torch.no_grad():
        head.mode.bias.copy_(torch.tensor([0.2, -0.7]))
        joint.policy_head.weight.copy_((head.mode.weight[:, None] + head.direction.weight[None]).flatten(0, 1))
        joint.policy_head.bias.copy_((head.mode.bias[:, None] + head.direction.bias[None]).flatten())
        maps, states, _ = make()._obs_tensors(obs_batch(8, seed=2))
        legal = torch.from_numpy(np.stack([legal_mask([1, int(flash_ready)])] * 8))
        a = torch.log_softmax(factored.policy(maps, states, legal), -1)
        b = torch.log_softmax(joint.policy(maps, states, legal), -1)
    torch.testing.assert_close(a, b, atol=1e-5, rtol=0)
    assert a.shape == (8, NUM_ACTIONS)
