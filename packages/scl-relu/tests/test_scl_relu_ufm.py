"""UFM and UFM+: the projection, the orthogonal-frame loss value, and convergence to the
geometries the theory predicts on small problems."""

import numpy as np
import pytest
import torch
from iclr24_scl_relu import (
    UFM,
    UFMPlus,
    batch_graph_condition,
    etf_of_distance,
    geometry,
    of_loss_value,
    project_nonneg_sphere,
    random_batches,
    scl_loss,
    ufm_labels,
)


def test_projection_is_feasible_idempotent_and_nearest():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(200, 4, generator=g, dtype=torch.float64)
    z[0] = torch.tensor([-3.0, -0.5, -2.0, -1.0], dtype=torch.float64)  # no positive entry
    p = project_nonneg_sphere(z)
    assert (p >= 0).all() and torch.allclose(p.norm(dim=1), torch.ones(200, dtype=p.dtype))
    assert torch.equal(p[0], torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=p.dtype))
    torch.testing.assert_close(project_nonneg_sphere(p), p)
    cands = project_nonneg_sphere(torch.randn(20000, 4, generator=g, dtype=torch.float64))
    for i in range(0, 200, 20):  # no feasible point is nearer than the projection
        best = (cands - z[i]).norm(dim=1).min()
        assert (p[i] - z[i]).norm() <= best + 1e-12


def test_of_loss_value_is_the_loss_at_an_orthogonal_frame():
    labels = torch.as_tensor(ufm_labels(4, 6, 3.0))  # sizes 6, 6, 2, 2
    H = torch.eye(5, dtype=torch.float64)[labels]  # class c at e_c
    assert of_loss_value(labels, 0.3) == pytest.approx(float(scl_loss(H, labels, 0.3)), rel=1e-12)


def test_of_loss_value_of_batches_is_the_batched_loss_at_an_orthogonal_frame():
    labels = torch.as_tensor(ufm_labels(4, 6, 3.0))
    H = torch.eye(5, dtype=torch.float64)[labels]
    batches = [[0, 1, 6, 12], [2, 3, 4, 13, 14, 15], [5, 7], [8, 9, 10, 11]]
    direct = sum(float(scl_loss(H[b], labels[b], 0.3)) for b in batches)
    assert of_loss_value(labels, 0.3, batches) == pytest.approx(direct, rel=1e-12)
    assert of_loss_value(labels, 0.3, batches) != pytest.approx(of_loss_value(labels, 0.3))


def test_small_random_batches_reach_a_second_minimiser_at_the_of_loss():
    """Thm 2 on a small case: batches that break the batch-graph condition end at the OF's
    loss value of the batched objective, with a geometry that is not the OF."""
    labels = ufm_labels(4, 10, 5.0)  # sizes 10, 10, 2, 2
    batches = random_batches(len(labels), 4, seed=0)
    assert not batch_graph_condition(batches, labels).holds
    model = UFMPlus(len(labels), 8, seed=0)
    loss = model.fit(torch.as_tensor(labels), steps=600, lr=0.1, temperature=0.2, batches=batches)
    assert abs(loss - of_loss_value(labels, 0.2, batches)) < 1e-2
    assert geometry(model.H, labels, majority=[0, 1])["dist_of"] > 0.3


@pytest.mark.parametrize("ratio", [1.0, 5.0])
def test_ufm_plus_reaches_the_orthogonal_frame(ratio):
    labels = ufm_labels(4, 10, ratio)
    model = UFMPlus(len(labels), 8, seed=1)
    loss = model.fit(torch.as_tensor(labels), steps=300, lr=0.1, temperature=0.2)
    geo = geometry(model.H, labels, majority=[0, 1])
    assert geo["dist_of"] < 1e-3 and geo["nc1"] < 1e-6
    assert (model.H >= 0).all()
    assert loss == pytest.approx(of_loss_value(torch.as_tensor(labels), 0.2), rel=1e-4)


def test_balanced_ufm_reaches_the_simplex_etf_and_imbalanced_does_not():
    labels = ufm_labels(4, 10, 1.0)
    model = UFM(len(labels), 8, seed=2)
    model.fit(torch.as_tensor(labels), steps=300, lr=0.1, temperature=0.2)
    assert geometry(model.H, labels, [0, 1])["dist_etf"] < 1e-2
    labels = ufm_labels(4, 20, 10.0)
    model = UFM(len(labels), 8, seed=2)
    model.fit(torch.as_tensor(labels), steps=300, lr=0.1, temperature=0.2)
    geo = geometry(model.H, labels, [0, 1])
    assert geo["dist_etf"] > 0.1 and geo["dist_of"] > 0.1
    assert geo["angle_maj_maj"] > geo["angle_min_min"] + 5


def test_fit_on_batches_uses_only_the_batches():
    labels = np.array([0, 0, 1, 1, 0, 1])
    model = UFMPlus(6, 4, seed=0)
    start = model.H.clone()
    model.fit(torch.as_tensor(labels), steps=5, lr=0.1, temperature=0.5, batches=[[0, 1, 2, 3]])
    torch.testing.assert_close(model.H[4:], start[4:])  # never in a batch: never moved
    assert not torch.allclose(model.H[:4], start[:4])


@pytest.mark.parametrize("k", [2, 4, 10])
def test_etf_of_distance_is_the_closed_form(k):
    assert etf_of_distance(k) == pytest.approx(np.sqrt(2 - 2 * np.sqrt((k - 1) / k)), rel=1e-12)
