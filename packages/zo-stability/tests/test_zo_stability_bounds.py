"""The bounds: their estimator constants against Monte Carlo, their closed forms (Hardt et al.
2016), and the measured divergence below them on a small coupled experiment."""

import math

import numpy as np
import pytest
import torch
from iclr24_zo_stability import Estimator
from iclr24_zo_stability.bounds import (
    Constants,
    common_step,
    divergence_bound,
    expansion,
    gamma2,
    step_limit,
    tau,
)
from iclr24_zo_stability.data import make_logistic
from iclr24_zo_stability.problems import Problem
from iclr24_zo_stability.stability import run_coupled


@pytest.mark.parametrize("kind", ["gauss2", "sphere2"])
@pytest.mark.parametrize("K", [1, 3])
def test_gamma_is_the_second_moment_of_the_direction_matrix(kind, K):
    d, N = 7, 200_000
    est = Estimator(kind, K=K)
    U = est.draw((N,), d, torch.Generator().manual_seed(0))  # (N, K, d)
    v = torch.zeros(d, dtype=torch.float64)
    v[0] = 1.0
    scale = d if kind == "sphere2" else 1.0
    Av = scale / K * torch.einsum("nk,nkd->nd", U @ v, U)  # (1/K) sum u u^T v
    sq = (Av**2).sum(-1)
    se = float(sq.std() / math.sqrt(N))
    assert float(sq.mean()) == pytest.approx(gamma2(est, d), abs=4.5 * se)
    assert torch.allclose(
        Av.mean(0), v, atol=4.5 * float(Av.std(0).max()) / math.sqrt(N)
    )  # E A = I


def test_coordinate_bias_is_within_beta_mu_sqrt_d_over_two():
    problem = Problem("logistic", lam=0.1)
    nb = make_logistic(30, 6, 2, seed=0)
    beta = problem.beta(nb.X)
    mu = 0.3
    for s in range(5):
        w = torch.randn(6, generator=torch.Generator().manual_seed(s), dtype=torch.float64)
        f = lambda P, s=s: problem.losses(P, nb.X[s : s + 1], nb.y[s : s + 1]).squeeze(-1)  # noqa: E731
        wg = w.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(f(wg[None]).sum(), wg)
        err = float((Estimator("coord", mu=mu)(f, w).grad - grad).norm())
        assert err <= beta * mu * math.sqrt(6) / 2


def test_expansions_order_coordinate_two_point_one_point():
    c = Constants(L=2.0, beta=3.0, F=1.0)
    d = 20
    coord, two, one = (
        expansion(Estimator(k, mu=1e-3), d, c) for k in ("coord", "gauss2", "gauss1")
    )
    assert coord.gamma == 1 < two.gamma == one.gamma
    assert coord.G < two.G < one.G and coord.extra == two.extra == 0 < one.extra
    # averaging n per-example estimates brings Gamma towards 1
    assert 1 < expansion(Estimator("gauss2"), d, c, m=100).gamma < two.gamma


def test_convex_sgd_bound_is_hardts_theorem_3_8_as_mu_vanishes():
    c = Constants(L=1.5, beta=4.0)
    lrs = np.full(500, 0.1)
    n = 50
    B = divergence_bound("sgd", Estimator("coord", mu=1e-12), 5, n, lrs, c, "convex")
    assert B[-1] == pytest.approx(2 * c.L * lrs.sum() / n, rel=1e-9)


def test_strongly_convex_bound_saturates_at_its_fixed_point():
    c = Constants(L=1.0, beta=4.0, alpha=0.5)
    est = Estimator("coord", mu=1e-12)
    lr = step_limit("strongly-convex", c, 1.0)
    B = divergence_bound("sgd", est, 5, 40, np.full(5000, lr), c, "strongly-convex")
    t = tau(lr, "strongly-convex", c, 1.0)
    assert t < 1
    assert B[-1] == pytest.approx(2 * lr * c.L / 40 / (1 - t), rel=1e-6)
    assert B[-1] == pytest.approx(B[len(B) // 2], rel=1e-6)  # bounded in T


def test_nonconvex_bound_pays_gamma_in_the_exponent():
    c = Constants(L=1.0, beta=2.0)
    lrs = 0.5 / np.arange(1, 2001)
    coord = divergence_bound("sgd", Estimator("coord", mu=1e-12), 10, 50, lrs, c, "nonconvex")
    two = divergence_bound("sgd", Estimator("gauss2", mu=1e-12), 10, 50, lrs, c, "nonconvex")
    grow = lambda B: np.log(B[-1] / B[200]) / np.log(2000 / 200)  # noqa: E731  power of T
    assert grow(coord) == pytest.approx(c.beta * 0.5, abs=0.15)  # T^(beta c)
    assert grow(two) > 2.5 * grow(coord)  # T^(beta Gamma c), Gamma = sqrt(12)


def test_common_step_meets_every_condition():
    c = Constants(L=1.0, beta=10.0)
    ests = [Estimator("coord"), Estimator("gauss2"), Estimator("sphere2")]
    lr = common_step("convex", c, 30, ests, "sgd", 100)
    assert lr == pytest.approx(2 / (10 * 32))  # the Gaussian condition binds
    assert common_step("convex", c, 30, ests, "gd", 100) > 10 * lr  # per-example averaging


@pytest.mark.parametrize("kind", ["coord", "gauss2", "gauss1"])
@pytest.mark.parametrize("algorithm", ["sgd", "gd", "svrg"])
def test_measured_divergence_stays_below_its_bound(kind, algorithm):
    problem = Problem("logistic")
    seeds = list(range(6))
    sets = [make_logistic(40, 5, 5, s) for s in seeds]
    X = torch.stack([s.X for s in sets] + [s.neighbour()[0] for s in sets])
    y = torch.stack([s.y for s in sets] + [s.neighbour()[1] for s in sets])
    w0 = torch.zeros(12, 5, dtype=torch.float64)
    est = Estimator(kind, mu=0.5 if kind == "gauss1" else 1e-3)
    beta = problem.beta(X)
    lr = common_step("convex", Constants(1.0, beta), 5, [Estimator("gauss2")], algorithm, 40)
    lrs = torch.full((200,), lr, dtype=torch.float64)
    run = run_coupled(problem, algorithm, est, X, y, w0, lrs, seeds)
    L = float(max(s.X.norm(dim=-1).max() for s in sets) * 1.0)  # logistic: ||grad|| <= ||x||
    L = max(L, float(torch.stack([s.x_swap for s in sets]).norm(dim=-1).max()))
    F = float(
        problem.losses(
            run.W.reshape(-1, 1, 5), X.repeat(len(run.W), 1, 1), y.repeat(len(run.W), 1)
        ).max()
    )
    B = divergence_bound(algorithm, est, 5, 40, lrs.numpy(), Constants(L, beta, F=F), "convex")
    assert run.delta[:, -1].mean() <= B[-1]
