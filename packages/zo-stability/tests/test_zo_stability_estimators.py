"""The estimators: unbiased for the smoothed gradient (Monte Carlo, CLT tolerance), converging
to the gradient as mu -> 0, coordinate-exact on quadratics, agreeing with autograd (finite
differences in float64), one batched call, the right query counts."""

import math

import numpy as np
import pytest
import torch
from iclr24_zo_stability import KINDS, Estimator

D = 5
A_VEC = torch.tensor([0.3, -0.2, 0.5, 0.1, -0.4], dtype=torch.float64)
W0 = torch.tensor([0.2, 0.1, -0.3, 0.4, 0.0], dtype=torch.float64)


def expo(P):  # f(w) = exp(a.w): its smoothings have closed forms
    return torch.exp(P @ A_VEC)


def ball_mgf(s: float, d: int) -> float:
    """E exp(s t) for t the first coordinate of a uniform point of the unit ball in R^d
    (density proportional to (1 - t^2)^((d - 1) / 2)), by quadrature."""
    t = np.linspace(-1, 1, 200_001)
    dens = (1 - t**2) ** ((d - 1) / 2)
    return float(np.trapezoid(np.exp(s * t) * dens, t) / np.trapezoid(dens, t))


def smoothed_gradient(kind: str, mu: float) -> torch.Tensor:
    """grad of E f(w + mu u) (Gaussian) or E f(w + mu v), v ~ Unif(ball) (sphere)."""
    f = math.exp(float(A_VEC @ W0))
    if kind.startswith("gauss"):
        return A_VEC * f * math.exp(mu**2 * float(A_VEC @ A_VEC) / 2)
    return A_VEC * f * ball_mgf(mu * float(A_VEC.norm()), D)


@pytest.mark.parametrize("kind", ["gauss2", "sphere2", "gauss1", "sphere1"])
def test_random_estimates_are_unbiased_for_the_smoothed_gradient(kind):
    mu, N = 0.8, 400_000
    est = Estimator(kind, mu=mu, K=2)
    gen = torch.Generator().manual_seed(1)
    g = est(expo, W0.expand(N, D), generator=gen).grad  # N independent estimates, one call
    mean, se = g.mean(0), g.std(0) / math.sqrt(N)
    target = smoothed_gradient(kind, mu)
    z = ((mean - target) / se).abs()
    assert z.max() < 4.5, (kind, z)  # CLT: |z| < 4.5 per coordinate (p ~ 7e-6 each)
    # the test has power: the plain gradient is many standard errors away
    plain = A_VEC * math.exp(float(A_VEC @ W0))
    assert (((mean - plain) / se).abs().max() > 8) or kind.endswith("1")


def test_smoothings_differ_from_the_gradient_enough_to_be_told_apart():
    # exp(mu^2 |a|^2 / 2) at mu = 0.8: 13% above the gradient; the ball: 3%
    assert smoothed_gradient("gauss2", 0.8)[2] / (A_VEC[2] * math.exp(float(A_VEC @ W0))) > 1.1
    assert smoothed_gradient("sphere2", 0.8)[2] / (A_VEC[2] * math.exp(float(A_VEC @ W0))) > 1.02


def quadratic():
    g = torch.Generator().manual_seed(0)
    M = torch.randn(D, D, generator=g, dtype=torch.float64)
    A = M @ M.T + torch.eye(D, dtype=torch.float64)
    b = torch.randn(D, generator=g, dtype=torch.float64)
    f = lambda P: 0.5 * torch.einsum("...i,ij,...j->...", P, A, P) + P @ b  # noqa: E731
    return f, A @ W0 + b


@pytest.mark.parametrize("kind", ["gauss2", "sphere2"])
def test_two_point_estimates_converge_to_the_directional_gradient_as_mu_vanishes(kind):
    f, grad = quadratic()
    U = Estimator(kind, K=3).draw((), D, torch.Generator().manual_seed(2))  # (K, d), fixed
    scale = D if kind == "sphere2" else 1.0
    exact = scale / 3 * (U @ grad) @ U  # the mu -> 0 limit: (scale / K) sum_k u_k u_k^T grad
    errs = [float((Estimator(kind, mu=mu, K=3)(f, W0, U).grad - exact).norm())
            for mu in (1e-1, 1e-2, 1e-3)]  # fmt: skip
    # forward differences on a quadratic err by exactly (mu / 2) u^T A u: linear in mu
    assert errs[0] / errs[1] == pytest.approx(10, rel=1e-4)
    assert errs[1] / errs[2] == pytest.approx(10, rel=1e-3)


def test_coordinate_estimate_is_exact_on_quadratics():
    f, grad = quadratic()
    for mu in (1.0, 1e-1, 1e-3):
        g = Estimator("coord", mu=mu)(f, W0).grad
        assert torch.allclose(g, grad, rtol=0, atol=1e-9 / mu), mu


def test_coordinate_estimate_errs_by_order_mu_squared_beyond_quadratics():
    grad = A_VEC * math.exp(float(A_VEC @ W0))
    errs = [
        float((Estimator("coord", mu=mu)(expo, W0).grad - grad).norm()) for mu in (0.2, 0.1, 0.05)
    ]
    assert errs[0] / errs[1] == pytest.approx(4, rel=0.02)
    assert errs[1] / errs[2] == pytest.approx(4, rel=0.02)


def test_coordinate_estimate_agrees_with_autograd_in_float64():
    from iclr24_zo_stability.data import digits
    from iclr24_zo_stability.problems import Problem

    nb = digits(50, 6, seed=0, n_test=10)
    for problem in (Problem("logistic", lam=0.1), Problem("mlp", hidden=4)):
        d = problem.dim(nb.p)
        w = 0.3 * torch.randn(d, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
        f = lambda P, pb=problem: pb.losses(P, nb.X, nb.y).mean(-1)  # noqa: E731
        wg = w.clone().requires_grad_(True)
        (auto,) = torch.autograd.grad(f(wg.unsqueeze(0)).sum(), wg)
        zo = Estimator("coord", mu=1e-5)(f, w).grad
        assert torch.allclose(zo, auto, rtol=1e-7, atol=1e-9), problem.name


def test_float32_cancels_at_mu_1e3_where_float64_does_not():
    grad = A_VEC * math.exp(float(A_VEC @ W0))
    g64 = Estimator("coord", mu=1e-3)(expo, W0).grad
    g32 = Estimator("coord", mu=1e-3)(
        lambda P: torch.exp(P.float() @ A_VEC.float()).double(), W0
    ).grad
    err64 = float((g64 - grad).norm() / grad.norm())  # O(mu^2) = 1e-7, rounding 1e-13
    err32 = float((g32 - grad).norm() / grad.norm())  # rounding eps32 f / mu ~ 1e-4
    assert err64 < 1e-6 and err32 > 1e-5 and err32 > 50 * err64


@pytest.mark.parametrize("kind", KINDS)
def test_one_batched_call_and_query_counts(kind):
    calls = []

    def f(P):
        calls.append(P.shape)
        return expo(P)

    est = Estimator(kind, K=3)
    W = W0.expand(4, D)  # four independent runs
    out = est(f, W, generator=torch.Generator().manual_seed(0))
    q = {"coord": 2 * D, "gauss2": 4, "sphere2": 4, "gauss1": 3, "sphere1": 3}[kind]
    assert len(calls) == 1 and calls[0] == (4, q, D)
    assert out.queries == q == est.queries(D) and out.grad.shape == (4, D)
    assert (out.value is not None) == kind.endswith("2")


@pytest.mark.parametrize("kind", ["coord", "gauss2", "gauss1"])
def test_batched_estimate_equals_a_loop_over_runs(kind):
    est = Estimator(kind, K=2)
    W = W0 + 0.1 * torch.randn(
        3, D, generator=torch.Generator().manual_seed(4), dtype=torch.float64
    )
    U = est.draw((3,), D, torch.Generator().manual_seed(5))
    batched = est(expo, W, U).grad
    for r in range(3):
        single = est(expo, W[r], None if U is None else U[r]).grad
        assert torch.allclose(batched[r], single, rtol=1e-13, atol=0)


def test_pair_uses_the_same_directions_for_both_points():
    est = Estimator("gauss2", K=2)
    U = est.draw((), D, torch.Generator().manual_seed(6))
    w2 = W0 + 0.05
    a, b = est.pair(expo, W0, w2, U)
    assert torch.equal(a.grad, est(expo, W0, U).grad)
    assert torch.equal(b.grad, est(expo, w2, U).grad)
    same_a, same_b = est.pair(expo, W0, W0.clone(), generator=torch.Generator().manual_seed(7))
    assert torch.equal(same_a.grad, same_b.grad)  # drawn once, used twice


def test_per_example_averages_independent_estimates():
    X = torch.randn(6, D, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    f_rows = lambda P: torch.exp((P * X.unsqueeze(-2)).sum(-1))  # noqa: E731  (n, Q, d) -> (n, Q)
    est = Estimator("gauss2", K=1)
    U = est.draw((6,), D, torch.Generator().manual_seed(9))
    out = est.per_example(f_rows, W0, 6, U)
    by_hand = torch.stack([est(lambda P, x=x: torch.exp(P @ x), W0, U[i]).grad
                           for i, x in enumerate(X)]).mean(0)  # fmt: skip
    assert torch.allclose(out.grad, by_hand, rtol=1e-13, atol=0) and out.queries == 6 * 2


def test_bad_estimators_are_refused():
    with pytest.raises(ValueError, match="kind"):
        Estimator("three-point")
    with pytest.raises(ValueError, match="mu"):
        Estimator("coord", mu=0)
    with pytest.raises(ValueError, match="K"):
        Estimator("gauss2", K=0)
