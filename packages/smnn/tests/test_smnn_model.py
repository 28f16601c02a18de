"""Invariants of the SMNN layers: monotone for any weights and inputs, the official
activation and initialisation, decreasing features, gradients, and the audit itself."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from iclr24_smnn import (
    MLP,
    SMNN,
    ExpOutput,
    ExpUnit,
    SameStructureNet,
    SMNNConfig,
    TrainConfig,
    clipped_activation,
    count_parameters,
    monotonicity_audit,
    train_model,
)
from iclr24_smnn.baselines import mlp_width_for
from iclr24_smnn.smnn import normalize_monotone


def _perturb_(net: torch.nn.Module, scale: float, seed: int) -> None:
    """Push every parameter far from its initialisation: the guarantee must not depend on it."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))


@settings(max_examples=40, deadline=None)
@given(
    d=st.integers(1, 6),
    data=st.data(),
    depth=st.integers(1, 3),
    width=st.integers(1, 9),
    scale=st.floats(0.0, 5.0),
    seed=st.integers(0, 10_000),
)
def test_monotone_for_random_weights_and_inputs(d, data, depth, width, scale, seed):
    m = data.draw(st.integers(1, d))
    idx = data.draw(st.permutations(range(d)))[:m]
    signs = data.draw(st.lists(st.sampled_from([1, -1]), min_size=m, max_size=m))
    mono = dict(zip(idx, signs))
    cfg = SMNNConfig((width,) * depth, (max(1, width // 2),) * depth, (width + 1,) * depth)
    torch.manual_seed(seed)
    net = SMNN(d, mono, cfg).double()
    _perturb_(net, scale, seed)
    rng = np.random.default_rng(seed)
    X = rng.normal(0, 3, size=(64, d))  # any input, not only [0, 1]
    Xt = torch.tensor(X)
    with torch.no_grad():
        base = net(Xt)
        for j, s in mono.items():
            up = Xt.clone()
            up[:, j] += torch.tensor(rng.exponential(1.0, 64))  # a random raise of feature j
            assert torch.all(s * (net(up) - base) >= -1e-9 * (1 + base.abs()))
    res = monotonicity_audit(net, X, mono, tol=1e-9)
    assert res.violation_rate == 0.0 and res.gradient_violation_rate == 0.0


def test_activation_matches_paper():
    z = torch.tensor([-2.0, -0.5, 0.0, 0.3, 1.0, 3.0])
    expected = 0.99 * z.clamp(0, 1) + 0.01 * z
    assert torch.allclose(clipped_activation(z), expected)
    assert torch.allclose(
        clipped_activation(torch.tensor([-1.0, 0.5, 2.0])), torch.tensor([-0.01, 0.5, 1.01])
    )
    unit = ExpUnit(3, 4)
    x = torch.rand(5, 3)
    manual = 0.99 * torch.clip(x @ unit.weight.exp() + unit.bias, 0, 1) + 0.01 * (
        x @ unit.weight.exp() + unit.bias
    )
    assert torch.allclose(unit(x), manual)


def test_official_initialisation():
    torch.manual_seed(0)
    unit = ExpUnit(200, 300)
    w = unit.weight.detach()
    assert w.min() >= -20.0 and w.max() <= 2.0
    assert abs(w.mean().item() - (-9.0)) < 0.2  # U(-20, 2) has mean -9
    assert abs(w.std().item() - 22 / np.sqrt(12)) < 0.2
    assert unit.bias.abs().max() <= 1.0 + 1e-6  # TN(0, 0.5) cut at 2 std
    out = ExpOutput(400, 50).weight.detach()
    assert out.min() >= -16.0 - 1e-6 and out.max() <= -4.0 + 1e-6  # TN(-10, 3) cut at 2 std
    assert abs(out.mean().item() + 10.0) < 0.2


def test_decreasing_feature_is_handled_inside():
    torch.manual_seed(1)
    net = SMNN(3, {0: -1, 2: +1}).double()
    _perturb_(net, 1.0, 1)
    x = torch.rand(100, 3, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(net(x).sum(), x)
    assert torch.all(g[:, 0] <= 0) and torch.all(g[:, 2] >= 0)
    # trained to fit a decreasing target, it follows it
    X = torch.rand(512, 3, dtype=torch.float64)
    y = -3 * X[:, 0] + torch.sin(6 * X[:, 1]) + X[:, 2]
    net = SMNN(3, {0: -1, 2: +1}, SMNNConfig((16,), (8,), (8,))).double()
    train_model(net, X, y, TrainConfig(epochs=150, batch_size=64, lr=0.01))
    with torch.no_grad():
        lo, hi = X.clone(), X.clone()
        lo[:, 0], hi[:, 0] = 0.0, 1.0
        assert torch.all(net(hi) <= net(lo) + 1e-12)
        assert (net(lo) - net(hi)).mean() > 1.0  # the fitted decrease is real, not flat


def test_gradcheck():
    torch.manual_seed(2)
    net = SMNN(4, {1: 1, 3: -1}, SMNNConfig((5, 4), (3, 3), (2, 2))).double()
    _perturb_(net, 0.5, 2)
    x = torch.rand(6, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(net, (x,), eps=1e-6, atol=1e-5)


def test_monotone_after_training_on_friedman():
    from iclr24_smnn.data import FRIEDMAN_MONOTONE, friedman

    s = friedman(10.0, n_samples=300, seed=0)
    torch.manual_seed(0)
    net = SMNN(5, FRIEDMAN_MONOTONE, SMNNConfig((16, 16), (8, 8), (8, 8)))
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    train_model(net, t(s.X_train), t((s.y_train - 14) / 5), TrainConfig(epochs=40, batch_size=32))
    assert monotonicity_audit(net, s.X_test).violation_rate == 0.0


def test_audit_catches_violations():
    class Dip(torch.nn.Module):  # decreasing in x0, increasing in x1
        def forward(self, x):
            return -x[:, 0] + x[:, 1]

    X = np.random.default_rng(0).random((50, 2))
    res = monotonicity_audit(Dip(), X, {0: +1, 1: +1})
    assert res.per_feature[0] == 1.0 and res.per_feature[1] == 0.0
    assert res.violation_rate == pytest.approx(0.5)
    assert res.gradient_violation_rate == pytest.approx(0.5)
    assert res.worst_violation > 0
    # a model without autograd is audited pairwise only
    res_np = monotonicity_audit(lambda a: -a[:, 0], X, {0: +1})
    assert res_np.gradient_violation_rate is None and res_np.violation_rate == 1.0
    # an unconstrained network is, in general, not monotone
    torch.manual_seed(0)
    mlp = MLP(5, (64, 64))
    _perturb_(mlp, 0.3, 0)
    assert (
        monotonicity_audit(
            mlp, np.random.default_rng(1).random((200, 5)), {3: 1, 4: 1}
        ).violation_rate
        > 0
    )


def test_ablation_and_mlp_shapes():
    x = torch.rand(7, 5)
    for net in (SMNN(5, [3, 4]), SameStructureNet(5, [3, 4]), MLP(5)):
        assert net(x).shape == (7,)
    with pytest.raises(ValueError, match="shape"):
        SMNN(5, [3])(torch.rand(7, 4))


def test_all_features_monotone_and_param_matching():
    net = SMNN(3, {0: 1, 1: 1, 2: -1}, SMNNConfig((8,), (4,), (4,)))
    assert net(torch.rand(4, 3)).shape == (4,)
    assert monotonicity_audit(net, np.random.default_rng(0).random((30, 3))).ok
    n = count_parameters(SMNN(7, {1: -1, 2: -1, 3: -1}))
    w = mlp_width_for(n, 7, 2)
    assert abs(count_parameters(MLP(7, (w, w))) - n) / n < 0.02


def test_monotone_spec_validation():
    assert normalize_monotone([2, 0], 3) == {0: 1, 2: 1}
    assert normalize_monotone({-1: -1}, 3) == {2: -1}
    with pytest.raises(ValueError, match="out of range"):
        normalize_monotone({5: 1}, 3)
    with pytest.raises(ValueError, match=r"\+1 or -1"):
        normalize_monotone({0: 2}, 3)
    with pytest.raises(ValueError, match="at least one"):
        SMNN(3, {})
