"""The fast masked distribution gives sb3-contrib's results: same log-probs, entropies, gradients and probabilities."""

import pytest
import torch as th
from sb3_contrib.common.maskable.distributions import MaskableCategorical

from lama_dice.train.masked_distribution import FastMaskableCategorical, LamaMaskablePolicy


@pytest.mark.parametrize("legal_share", [0.02, 0.3, 1.0])
def test_fast_masking_matches_sb3_contrib(legal_share):
    gen = th.Generator().manual_seed(1)
    x = (3 * th.randn(64, 129, generator=gen)).requires_grad_(True)
    mask = th.rand(64, 129, generator=gen) < legal_share
    mask[:, 5] = True
    ref = MaskableCategorical(logits=x)
    ref.apply_masking(mask)
    fast = FastMaskableCategorical(logits=x)
    fast.apply_masking(mask)
    actions = th.multinomial(ref.probs.detach(), 1).squeeze(1)
    assert th.allclose(fast.probs, ref.probs, atol=1e-6)
    assert (fast.probs[~mask] == 0).all()
    assert th.allclose(fast.log_prob(actions), ref.log_prob(actions), atol=1e-5)
    assert th.allclose(fast.entropy(), ref.entropy(), atol=1e-5)
    g_ref = th.autograd.grad(ref.log_prob(actions).sum() + ref.entropy().sum(), x)[0]
    g_fast = th.autograd.grad(fast.log_prob(actions).sum() + fast.entropy().sum(), x)[0]
    assert th.allclose(g_fast, g_ref, atol=1e-5)
    # samples never pick a masked action
    assert mask.gather(1, fast.sample((20,)).T).all()
    # removing the mask restores the plain distribution
    fast.apply_masking(None)
    assert th.allclose(fast.probs, th.softmax(x, -1), atol=1e-6)


def test_policy_uses_the_fast_distribution():
    import gymnasium

    import lama_env  # noqa: F401

    env = gymnasium.make("LamaDice-v1", num_players=2, opponents=["random"])
    policy = LamaMaskablePolicy(env.observation_space, env.action_space, lambda _: 1e-3)
    obs, info = env.reset(seed=0)
    dist = policy.get_distribution(th.as_tensor(obs[None]), action_masks=info["action_mask"][None])
    assert isinstance(dist.distribution, FastMaskableCategorical)
    action = int(dist.get_actions(deterministic=True))
    assert info["action_mask"][action]
