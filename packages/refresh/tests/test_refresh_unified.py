"""The unified objective: every instance reproduces its standalone formula on one batch."""

import copy

import pytest
import torch
import torch.nn.functional as F
from iclr24_refresh import DER, ER, MLP, DERpp, EWCOnline, LwF, Replay, bregman
from iclr24_refresh.baselines import mammoth_lwf_term, standalone_loss
from iclr24_refresh.unified import mean_square, neg_entropy


@pytest.fixture
def setup():
    torch.manual_seed(0)
    old, net = MLP(8, 6), MLP(8, 6)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(12, 8, generator=g), torch.randint(0, 6, (12,), generator=g)
    xo, yo = torch.randn(20, 8, generator=g), torch.randint(0, 4, (20,), generator=g)
    replay = Replay(x_logits=torch.randn(7, 8, generator=g), logits=torch.randn(7, 6, generator=g),
                    x_labels=torch.randn(9, 8, generator=g), labels=torch.randint(0, 6, (9,), generator=g))  # fmt: skip
    return old, net, x, y, xo, yo, replay


@pytest.mark.parametrize("method", [ER(beta=0.7), DER(alpha=0.3), DERpp(alpha=0.2, beta=0.5),
                                    EWCOnline(lam=5.0, gamma=0.9), LwF(alpha=1.5, temperature=2.0)])  # fmt: skip
def test_instance_equals_standalone(setup, method):
    old, net, x, y, xo, yo, replay = setup
    method.end_task(old, xo, yo, 4)
    method.end_task(old, xo, yo, 0)  # twice: online EWC accumulates gamma F + F
    a, b = method.loss(net, x, y, replay), standalone_loss(method, net, x, y, replay)
    assert abs(a.item() - b.item()) < 1e-6
    assert (a - F.cross_entropy(net(x), y)).item() > 1e-4  # the regulariser is not zero
    ga = torch.autograd.grad(a, list(net.parameters()))
    gb = torch.autograd.grad(standalone_loss(method, net, x, y, replay), list(net.parameters()))
    for u, v in zip(ga, gb):
        assert torch.allclose(u, v, atol=1e-6)


def test_lwf_gradient_equals_mammoth_cross_entropy_form(setup):
    old, net, x, y, xo, yo, _ = setup
    lwf = LwF(alpha=1.0)
    lwf.end_task(old, xo, yo, 4)
    kl = lwf.loss(net, x, y) - F.cross_entropy(net(x), y)
    ce_form = mammoth_lwf_term(lwf, net, x)
    ga = torch.autograd.grad(kl, list(net.parameters()))
    gb = torch.autograd.grad(ce_form, list(net.parameters()))
    for u, v in zip(ga, gb):
        assert torch.allclose(u, v, atol=1e-6)
    p_old = (old(x)[:, :4] / 2).softmax(-1)
    entropy = -(p_old * p_old.log()).sum(1).mean()
    assert (ce_form - kl).item() == pytest.approx(entropy.item(), abs=1e-5)


def test_bregman_closed_form_equals_autograd():
    g = torch.Generator().manual_seed(2)
    a, b = torch.rand(5, 4, generator=g).softmax(-1), torch.rand(5, 4, generator=g).softmax(-1)
    plain = lambda p: torch.special.xlogy(p, p).sum(-1).mean()  # noqa: E731 (no .grad)
    assert float(bregman(plain, a, b)) == pytest.approx(float(bregman(neg_entropy, a, b)), abs=1e-7)
    kl = (a * (a / b).log()).sum(-1).mean()
    assert float(bregman(neg_entropy, a, b)) == pytest.approx(float(kl), abs=1e-6)
    z, w = torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)
    assert float(bregman(mean_square, z, w)) == pytest.approx(float(F.mse_loss(z, w)), abs=1e-6)
    assert float(bregman(lambda t: t.pow(2).mean(), z, w)) == pytest.approx(
        float(F.mse_loss(z, w)), abs=1e-6
    )


def test_ce_divergence_survives_saturated_softmax():
    net = MLP(2, 3)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(300.0)
    x, y = torch.randn(4, 2), torch.tensor([0, 1, 2, 0])
    loss = ER().loss(net, x, y)
    assert torch.isfinite(loss)


def test_lwf_keeps_a_frozen_copy(setup):
    old, net, x, y, xo, yo, _ = setup
    lwf = LwF()
    lwf.end_task(old, xo, yo, 4)
    before = copy.deepcopy(lwf.old.state_dict())
    with torch.no_grad():
        for p in old.parameters():
            p.add_(1.0)
    for k, v in lwf.old.state_dict().items():
        assert torch.equal(v, before[k])
