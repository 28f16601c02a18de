"""Invariants of the Point2SSM model and losses."""

import numpy as np
import pytest
import torch
from iclr24_point2ssm import (
    AutoEncoder,
    AutoEncoderConfig,
    EdgeConv,
    EncoderConfig,
    Point2SSM,
    Point2SSMConfig,
    chamfer_distance,
    knn_indices,
    mapping_loss,
    no_correspondence,
)
from iclr24_point2ssm.point2ssm import edge_features
from scipy.spatial import Delaunay

SMALL = EncoderConfig(latent_dim=16, k=6, bb_size=2)


def small_model(m=8):
    return Point2SSM(Point2SSMConfig(num_output=m, enc=SMALL, d_ff=32))


@pytest.mark.parametrize("train", [True, False])
def test_attention_rows_sum_to_one_and_outputs_in_convex_hull(train):
    torch.manual_seed(0)
    model = small_model().double().train(train)
    x = torch.randn(3, 40, 3, dtype=torch.float64)
    y, a = model(x)
    assert a.shape == (3, 8, 40) and y.shape == (3, 8, 3)
    assert (a >= 0).all()
    torch.testing.assert_close(a.sum(-1), torch.ones(3, 8, dtype=torch.float64))
    torch.testing.assert_close(y, a @ x)
    for b in range(3):  # every output point lies inside the convex hull of its input
        hull = Delaunay(x[b].detach().numpy())
        assert (hull.find_simplex(y[b].detach().numpy(), tol=1e-9) >= 0).all()


def brute_chamfer(a, b):
    d_ab = [min(float(((p - q) ** 2).sum()) for q in b) for p in a]
    d_ba = [min(float(((p - q) ** 2).sum()) for p in a) for q in b]
    return d_ab, d_ba


def test_chamfer_matches_brute_force_and_is_zero_on_identical_clouds():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(2, 7, 3, generator=g), torch.randn(2, 11, 3, generator=g)
    for i in range(2):
        d_ab, d_ba = brute_chamfer(a[i], b[i])
        exp = {
            "sum": sum(d_ab) + sum(d_ba),
            "mean": np.mean(d_ab) + np.mean(d_ba),
            "sqrt_mean": (np.mean(np.sqrt(d_ab)) + np.mean(np.sqrt(d_ba))) / 2,
        }
        for red, val in exp.items():
            assert chamfer_distance(a, b, red)[i].item() == pytest.approx(val, rel=1e-5)
    perm = a[:, torch.randperm(7)]
    for red in ("sum", "mean", "sqrt_mean"):
        assert chamfer_distance(a, perm, red).abs().max().item() < 1e-5
    with pytest.raises(ValueError):
        chamfer_distance(a, b, "max")


def brute_mapping_loss(y, k, t):
    b, m, _ = y.shape
    total, count = 0.0, 0
    for s in range(b):
        d = ((y[s][:, None] - y[s][None]) ** 2).sum(-1)
        d.fill_diagonal_(float("inf"))
        nb = d.argsort(1)[:, : k - 1]
        for u in range(b):
            if u == s:
                continue
            for i in range(m):
                for j in nb[i]:
                    w = torch.exp(-((y[s][j] - y[s][i]) ** 2).sum() / t)
                    total = total + w * ((y[u][j] - y[u][i]) ** 2).sum()
            count += 1
    return total / count


def test_mapping_loss_matches_pairwise_loop():
    y = torch.randn(3, 12, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    assert mapping_loss(y, 4, 8.0).item() == pytest.approx(brute_mapping_loss(y, 4, 8.0).item())
    assert mapping_loss(y[:1]).item() == 0.0  # no pair in a batch of one


def random_rigid(seed):
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64, generator=g))
    return q, torch.randn(3, dtype=torch.float64, generator=g)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mapping_loss_invariant_to_common_rigid_motion(seed):
    y = torch.randn(4, 20, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    r, t = random_rigid(seed + 10)
    moved = y @ r.T + t
    assert mapping_loss(moved, 10, 8.0).item() == pytest.approx(mapping_loss(y, 10, 8.0).item())
    # shapes that are translates of one shape score as identical copies
    same = y[:1] + torch.randn(4, 1, 3, dtype=torch.float64)
    assert mapping_loss(same).item() == pytest.approx(mapping_loss(y[:1].expand(4, -1, -1)).item())


def test_losses_pass_gradcheck():
    y = torch.randn(3, 6, 3, dtype=torch.float64, requires_grad=True)
    gt = torch.randn(3, 9, 3, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda v: mapping_loss(v, 3, 2.0), (y,))
    assert torch.autograd.gradcheck(lambda v: chamfer_distance(v, gt, "sum").sum(), (y,))


def test_knn_matches_brute_force():
    x = torch.randn(2, 30, 3)
    idx = knn_indices(x, 5)
    d = torch.cdist(x, x)
    for b in range(2):
        for i in range(30):
            assert idx[b, i, 0] == i
            assert set(idx[b, i].tolist()) == set(d[b, i].argsort()[:5].tolist())
    assert (knn_indices(x, 4, include_self=False) != torch.arange(30)[None, :, None]).all()


@pytest.mark.parametrize("train", [True, False])
def test_edgeconv_equals_conv_on_edge_features(train):
    """The per-point factorisation equals the official Conv2d on [x_j - x_i, x_i]."""
    torch.manual_seed(0)
    ec = EdgeConv(5, 7).double().train(train)
    ec.bn.running_mean.uniform_()
    ec.bn.running_var.uniform_(0.5, 2)
    h = torch.randn(2, 25, 5, dtype=torch.float64)
    idx = knn_indices(h[..., :3], 6)
    conv = torch.nn.Conv2d(10, 7, 1, bias=False).double()
    conv.weight.data = ec.weight.data[:, :, None, None].clone()
    bn = torch.nn.BatchNorm2d(7).double().train(train)
    bn.load_state_dict(ec.bn.state_dict())
    ref = torch.nn.functional.leaky_relu(bn(conv(edge_features(h.transpose(1, 2), idx))), 0.2)
    ref = ref.max(-1).values.transpose(1, 2)
    torch.testing.assert_close(ec(h, idx), ref)


def test_autoencoder_and_no_correspondence_shapes():
    torch.manual_seed(0)
    for enc in ("dgcnn", "pn"):
        ae = AutoEncoder(AutoEncoderConfig(num_output=10, encoder=enc, enc=SMALL))
        x = torch.randn(2, 32, 3)
        assert ae(x)[0].shape == (2, 10, 3)
        assert torch.isfinite(ae.loss(x, x)).item()
    x = torch.randn(2, 32, 3)
    for y in (no_correspondence(x, 10), no_correspondence(x, 40)):  # 40 > N: with replacement
        assert all((y[b][:, None] == x[b][None]).all(-1).any(-1).all() for b in range(2))
    assert len(no_correspondence(x, 32)[0].unique(dim=0)) == 32  # M <= N: no repeats


def test_training_step_reduces_loss():
    torch.manual_seed(0)
    model = small_model(16)
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    x = torch.randn(4, 48, 3)
    first = model.loss(x, x).item()
    for _ in range(30):
        loss = model.loss(x, x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert model.loss(x, x).item() < 0.7 * first
