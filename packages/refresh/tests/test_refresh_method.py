"""The refresh plug-in: the official displacement, the paper's Langevin rule, the Fisher."""

import copy

import pytest
import torch
import torch.nn.functional as F
from iclr24_refresh import MLP, Refresh, diagonal_fisher
from iclr24_refresh.refresh import _fisher_loop, random_displacement
from torch import nn


def _batch(n=16, d=6, k=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.randint(0, k, (n,), generator=g)


def test_displacement_norm_is_delta_times_weight_norm():
    torch.manual_seed(0)
    net = MLP(6, 3)
    x, y = _batch()
    for p in net.parameters():  # biases start at 0: give every tensor a norm
        p.data.add_(0.1)
    before = [p.detach().clone() for p in net.parameters()]
    disp = Refresh(delta=1e-5, seed=0).unlearn(net, x, y)
    for b, d, p in zip(before, disp, net.parameters()):
        assert d.norm() / b.norm() == pytest.approx(1e-5, rel=0.01)
        assert torch.allclose(p - b, d, atol=1e-7, rtol=0)  # float32 rounding of p


def test_official_update_on_two_parameter_model():
    """logits = (w1 x, w2 x): grad CE by hand, then delta (|w| / |eta g| eta g + 0.001 xi) / (1 + 0.001 F)."""
    net = nn.Linear(1, 2, bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([[0.5], [-0.3]]))
    x, y = torch.tensor([[2.0]]), torch.tensor([0])
    w = net.weight.detach().clone()[:, 0]
    p = torch.softmax(w * 2.0, 0)
    g = (p - torch.tensor([1.0, 0.0])) * 2.0  # d CE / d w
    fisher = torch.tensor([[4.0], [9.0]])
    rf = Refresh(delta=1e-3, seed=7)
    rf.fisher = [fisher]
    disp = rf.unlearn(net, x, y)[0][:, 0]
    xi = torch.randn((2, 1), generator=torch.Generator().manual_seed(7))[:, 0]
    u = w.norm() / (0.01 * g).norm() * (0.01 * g)
    expected = 1e-3 * (u + 1e-3 * xi) / (1 + 1e-3 * fisher[:, 0])
    assert torch.allclose(disp, expected, rtol=1e-5, atol=1e-12)
    assert torch.allclose(net.weight.detach()[:, 0], w + expected, rtol=1e-6, atol=1e-9)


def test_paper_update_on_two_parameter_model():
    """theta += gamma P g + sqrt(2 gamma T P) xi on the given loss (ascent)."""
    net = nn.Linear(1, 2, bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([[0.5], [-0.3]]))
    x, y = torch.tensor([[2.0]]), torch.tensor([1])
    w = net.weight.detach().clone()[:, 0]
    p = torch.softmax(w * 2.0, 0)
    g = (p - torch.tensor([0.0, 1.0])) * 2.0
    fisher = torch.tensor([[1.0], [100.0]])
    rf = Refresh(variant="paper", step=0.05, temperature=1e-3, seed=3)
    rf.fisher = [fisher]
    assert rf.when == "before"
    disp = rf.unlearn(net, x, y, lambda m: F.cross_entropy(m(x), y))[0][:, 0]
    xi = torch.randn((2, 1), generator=torch.Generator().manual_seed(3))[:, 0]
    P = 1 / (1 + 1e-3 * fisher[:, 0])
    expected = 0.05 * P * g + torch.sqrt(2 * 0.05 * 1e-3 * P) * xi
    assert torch.allclose(disp, expected, rtol=1e-5, atol=1e-10)


def test_matches_official_copy_and_sgd_structure():
    """derpp.py's unlearn re-expressed: a copy of the net, SGD(lr=0.01) on -CE, the per-tensor
    rescaled difference, the preconditioned step (noise from the same generator)."""
    torch.manual_seed(1)
    net = MLP(6, 3)
    x, y = _batch(seed=1)
    fisher = [torch.rand_like(p) * 50 for p in net.parameters()]
    ref = copy.deepcopy(net)
    temp = copy.deepcopy(ref)
    opt = torch.optim.SGD(temp.parameters(), lr=0.01)
    opt.zero_grad()
    (-F.cross_entropy(temp(x), y)).backward()
    opt.step()
    gen = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p, t, f in zip(ref.parameters(), temp.parameters(), fisher):
            upd = t - p
            norm_upd = p.norm() / (upd.norm() + 1e-20) * upd
            xi = torch.randn(p.shape, generator=gen)
            p.add_(1e-5 * (1.0 / (1 + 0.001 * f)) * (norm_upd + 0.001 * xi))
    rf = Refresh(seed=5)
    rf.fisher = fisher
    rf.unlearn(net, x, y)
    for a, b in zip(net.parameters(), ref.parameters()):
        assert torch.allclose(a, b, rtol=0, atol=1e-7)


def test_fisher_is_probability_weighted():
    torch.manual_seed(2)
    net = MLP(6, 3)
    x, y = _batch(n=12, seed=2)
    fisher = diagonal_fisher(net, x, y)
    expected = [torch.zeros_like(p) for p in net.parameters()]
    unweighted = [torch.zeros_like(p) for p in net.parameters()]
    for xi, yi in zip(x, y):
        net.zero_grad()
        logp = net(xi[None]).log_softmax(-1)[0, yi]
        logp.backward()
        for e, u, p in zip(expected, unweighted, net.parameters()):
            e += logp.exp().detach() * p.grad**2
            u += p.grad**2
    for f, e in zip(fisher, expected):
        assert torch.allclose(f, e / len(y), rtol=1e-4, atol=1e-9)
    assert not torch.allclose(fisher[0], unweighted[0] / len(y), rtol=1e-2)
    # the generic per-example loop (used for conv nets) agrees with the closed form
    for f, v in zip(fisher, _fisher_loop(net, x, y)):
        assert torch.allclose(f, v, rtol=1e-4, atol=1e-9)


def test_fisher_refresh_decays_old_tasks():
    torch.manual_seed(3)
    net = MLP(6, 3)
    x, y = _batch(seed=3)
    rf = Refresh()
    rf.end_task(net, x, y)
    first = [f.clone() for f in rf.fisher]
    rf.end_task(net, x, y)
    for a, b in zip(rf.fisher, first):
        assert torch.allclose(a, b * (1 + 1e-5))


def test_unlearn_leaves_batchnorm_statistics_alone():
    torch.manual_seed(4)
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten(), nn.LazyLinear(3))
    x, y = torch.randn(8, 3, 6, 6), torch.randint(0, 3, (8,))
    net(x)
    stats = [b.clone() for b in net.buffers()]
    Refresh().unlearn(net, x, y)
    for a, b in zip(net.buffers(), stats):
        assert torch.equal(a, b)


def test_noise_has_its_own_generator():
    torch.manual_seed(0)
    net = MLP(6, 3)
    x, y = _batch()
    state = torch.random.get_rng_state()
    Refresh(seed=0).unlearn(net, x, y)
    assert torch.equal(torch.random.get_rng_state(), state)


def test_random_displacement_has_the_official_norm_and_no_gradient_direction():
    torch.manual_seed(0)
    net = MLP(6, 3)
    for p in net.parameters():
        p.data.add_(0.1)
    params = list(net.parameters())
    a = random_displacement(params, delta=1e-5, generator=torch.Generator().manual_seed(0))
    b = random_displacement(params, delta=1e-5, generator=torch.Generator().manual_seed(1))
    for p, d, e in zip(params, a, b):
        assert d.norm() / p.detach().norm() == pytest.approx(1e-5, rel=1e-5)
        if p.dim() > 1:  # two draws point in unrelated directions (matrices: many entries)
            assert abs(float((d * e).sum() / (d.norm() * e.norm()))) < 0.5
    rf = Refresh("random", seed=0)
    x, y = _batch()
    rf.end_task(net, x, y)
    assert rf.fisher is None  # the control needs no Fisher
    before = [p.detach().clone() for p in net.parameters()]
    rf.unlearn(net, x, y)
    assert rf.steps == 1 and all((p - q).abs().max() > 0 for p, q in zip(net.parameters(), before))
