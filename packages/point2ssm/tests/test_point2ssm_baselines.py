"""The CPAE baseline: its losses against brute force, its template, and the properties its
correspondences rely on."""

import itertools

import pytest
import torch
from iclr24_point2ssm.baselines import CPAE, CPAEConfig, chamfer_sqrt, emd_loss, fibonacci_sphere


def test_fibonacci_template_lies_on_the_half_sphere_and_spreads():
    t = fibonacci_sphere(200)
    assert t.shape == (200, 3)
    torch.testing.assert_close(t.norm(dim=1), torch.full((200,), 0.5), atol=1e-6, rtol=0)
    assert t.mean(0).abs().max() < 0.02  # nearly uniform: centred
    nearest = torch.cdist(t, t).fill_diagonal_(9).min(1).values
    assert nearest.min() > 0.3 * nearest.mean()  # no clumps


def test_emd_is_the_best_bijection():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 6, 3, generator=g), torch.randn(2, 6, 3, generator=g)
    best = []
    for i in range(2):
        d = torch.cdist(a[i], b[i])
        # the optimal bijection for squared costs, scored by mean distance (as the loss does)
        perm = min(
            itertools.permutations(range(6)), key=lambda p: sum(d[k, p[k]] ** 2 for k in range(6))
        )
        best.append(torch.stack([d[k, perm[k]] for k in range(6)]).mean())
    assert emd_loss(a, b).item() == pytest.approx(torch.stack(best).mean().item(), rel=1e-5)
    assert emd_loss(a, a[:, torch.randperm(6)]).item() < 1e-5


def test_chamfer_sqrt_is_the_official_cd_loss():
    a, b = torch.randn(3, 7, 3), torch.randn(3, 9, 3)
    d = torch.cdist(a, b)
    ref = (d.min(2).values.mean(1) + d.min(1).values.mean(1)).mean()
    assert chamfer_sqrt(a, b).item() == pytest.approx(ref.item(), rel=1e-5)


def test_cpae_correspondences_ignore_input_order_and_loss_switches_at_the_epoch():
    torch.manual_seed(0)
    model = CPAE(CPAEConfig(num_output=20, latent_dim=16, cross_after_epochs=2))
    x = torch.randn(4, 30, 3) * 0.5
    model.eval()
    with torch.no_grad():
        y, _ = model(x)
        y_perm, _ = model(x[:, torch.randperm(30)])
    assert y.shape == (4, 20, 3)
    torch.testing.assert_close(y, y_perm)  # the template's order, not the input's
    model.train()
    torch.manual_seed(1)
    early = model.loss(x, x)
    model.set_epoch(2)
    torch.manual_seed(1)
    late = model.loss(x, x)
    assert torch.isfinite(late) and late.item() != early.item()  # + cross-reconstruction
    late.backward()
    assert all(p.grad is not None for p in model.parameters())
