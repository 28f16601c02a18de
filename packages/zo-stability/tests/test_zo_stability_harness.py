"""The coupled harness: zero divergence on S = S', exact coupling until the replaced example is
drawn, SVRG's variance reduction, the problems' derivatives, the growth fit."""

import numpy as np
import pytest
import torch
from iclr24_zo_stability import Estimator
from iclr24_zo_stability.data import breast_cancer, digits, make_least_squares, make_logistic
from iclr24_zo_stability.problems import (
    Problem,
    hessian_norms,
    hessian_spectra,
    mlp_hessians,
    per_example_grads,
)
from iclr24_zo_stability.stability import example_indices, generator, growth_slope, run_coupled

SEEDS = [0, 1, 2]


def pairs(problem, sets, same=False):
    """2P stacked datasets: S for every seed, then S' (or S again)."""
    other = [(s.X, s.y) if same else s.neighbour() for s in sets]
    X = torch.stack([s.X for s in sets] + [x for x, _ in other])
    y = torch.stack([s.y for s in sets] + [t for _, t in other])
    w0 = torch.stack([problem.init(sets[0].p, generator(s, "init")) for s in SEEDS] * 2)
    return X, y, w0


@pytest.mark.parametrize("algorithm", ["sgd", "gd", "svrg"])
@pytest.mark.parametrize("kind", ["coord", "gauss2", "sphere2", "gauss1"])
def test_same_data_gives_exactly_zero_divergence(algorithm, kind):
    problem = Problem("mlp", hidden=3)
    sets = [digits(30, 4, s, n_test=5) for s in SEEDS]
    X, y, w0 = pairs(problem, sets, same=True)
    est = Estimator(kind, mu=0.5 if kind.endswith("1") else 1e-3)
    lrs = torch.full((40,), 0.05, dtype=torch.float64)
    run = run_coupled(problem, algorithm, est, X, y, w0, lrs, SEEDS, epoch=15)
    assert run.delta.max() == 0.0
    assert np.abs(run.train_loss[:, -1] - run.train_loss[:, 0]).max() > 1e-4  # it did move


@pytest.mark.parametrize("kind", ["coord", "gauss2"])
def test_sgd_runs_coincide_until_the_replaced_example_is_drawn(kind):
    problem = Problem("logistic")
    sets = [breast_cancer(40, s) for s in SEEDS]
    X, y, w0 = pairs(problem, sets)
    T = 120
    run = run_coupled(problem, "sgd", Estimator(kind), X, y, w0,
                      torch.full((T,), 0.01, dtype=torch.float64), SEEDS)  # fmt: skip
    for j, (s, nb) in enumerate(zip(SEEDS, sets)):
        hits = torch.nonzero(example_indices(s, T, nb.n) == nb.k)
        t_hit = int(hits[0]) if len(hits) else T
        assert run.delta[j, : t_hit + 1].max() == 0.0
        if t_hit < T:
            assert run.delta[j, t_hit + 1] > 0


def test_a_pair_does_not_depend_on_its_batch_companions():
    problem = Problem("least-squares")
    sets = [make_least_squares(30, 4, 5, 0.5, s) for s in SEEDS]
    X, y, w0 = pairs(problem, sets)
    lrs = torch.full((60,), 0.02, dtype=torch.float64)
    est = Estimator("gauss2")
    together = run_coupled(problem, "sgd", est, X, y, w0, lrs, SEEDS)
    alone = run_coupled(problem, "sgd", est, X[[1, 4]], y[[1, 4]], w0[[1, 4]], lrs, [1])
    np.testing.assert_allclose(alone.delta[0], together.delta[1], rtol=1e-10, atol=1e-15)


def test_svrg_reduces_the_estimate_variance_near_its_snapshot():
    problem = Problem("least-squares")
    nb = make_least_squares(100, 10, 5, 0.5, seed=0)
    est = Estimator("gauss2")
    g = torch.Generator().manual_seed(0)
    w_snap = 0.3 * torch.randn(10, generator=g, dtype=torch.float64)
    w = w_snap + 0.01 * torch.randn(10, generator=g, dtype=torch.float64)
    rows = lambda P: problem.losses(P, nb.X.unsqueeze(-2), nb.y.unsqueeze(-1)).squeeze(-1)  # noqa: E731
    g_snap = est.per_example(rows, w_snap, nb.n, generator=g).grad
    N = 20_000
    idx = torch.randint(nb.n, (N,), generator=g)
    xb, yb = nb.X[idx].unsqueeze(-2), nb.y[idx].unsqueeze(-1)
    one = lambda P: problem.losses(P, xb, yb).squeeze(-1)  # noqa: E731
    U = est.draw((N,), 10, g)
    sgd = est(one, w.expand(N, 10), U).grad
    at_w, at_snap = est.pair(one, w.expand(N, 10), w_snap.expand(N, 10), U)
    svrg = at_w.grad - at_snap.grad + g_snap
    var = lambda G: float(((G - G.mean(0)) ** 2).sum(-1).mean())  # noqa: E731
    assert var(svrg) < 0.01 * var(sgd)


def small_problem(name: str, n: int, seed: int):
    """A problem, n examples with 4 features, and a random point."""
    problem = Problem(name, lam=0.1 if name == "logistic" else 0.0, hidden=3)
    g = torch.Generator().manual_seed(seed)
    w = 0.5 * torch.randn(problem.dim(4), generator=g, dtype=torch.float64)
    return problem, make_logistic(n, 4, 2, seed=seed), w


@pytest.mark.parametrize("name", ["least-squares", "logistic", "mlp"])
def test_per_example_gradients_match_autograd(name):
    problem, nb, w = small_problem(name, 8, seed=1)
    G = per_example_grads(problem, w, nb.X, nb.y)
    for i in range(8):
        wi = w.clone().requires_grad_(True)
        (gi,) = torch.autograd.grad(
            problem.losses(wi[None], nb.X[i : i + 1], nb.y[i : i + 1]).sum(), wi
        )
        assert torch.allclose(G[i], gi, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["least-squares", "logistic", "mlp"])
def test_hessian_norms_match_the_exact_hessian(name):
    problem, nb, w = small_problem(name, 6, seed=2)
    est = hessian_norms(
        problem, w, nb.X, nb.y, iters=200, generator=torch.Generator().manual_seed(0)
    )
    for i in range(6):
        f = lambda v, i=i: problem.losses(v[None], nb.X[i : i + 1], nb.y[i : i + 1]).sum()  # noqa: E731
        exact = torch.linalg.eigvalsh(torch.autograd.functional.hessian(f, w)).abs().max()
        assert float(est[i]) == pytest.approx(float(exact), rel=1e-6)
    if problem.beta(nb.X) is not None:  # the closed form bounds every example's curvature
        assert float(est.max()) <= problem.beta(nb.X) * (1 + 1e-12)


def test_the_mlp_closed_form_hessians_match_autograd_and_bound_the_power_iteration():
    problem, nb, w = small_problem("mlp", 6, seed=3)
    H = mlp_hessians(problem, w, nb.X, nb.y)  # (6, d, d)
    for i in range(6):
        f = lambda v, i=i: problem.losses(v[None], nb.X[i : i + 1], nb.y[i : i + 1]).sum()  # noqa: E731
        assert torch.allclose(H[i], torch.autograd.functional.hessian(f, w), atol=1e-12)
    spec, frob = hessian_spectra(problem, w[None], nb.X[None], nb.y[None])
    power = hessian_norms(
        problem, w, nb.X, nb.y, iters=5, generator=torch.Generator().manual_seed(0)
    )
    # power iteration errs low, the Frobenius norm high: power <= exact <= Frobenius
    assert (power <= spec[0] * (1 + 1e-9)).all() and (spec[0] <= frob[0] * (1 + 1e-12)).all()
    bad = w.clone()
    bad[-1] = float("nan")
    spec, _ = hessian_spectra(problem, bad[None], nb.X[None], nb.y[None])
    assert torch.isnan(spec).all()  # an overflowed run: NaN (constants() turns it into inf)


def test_growth_slope_recovers_a_power_law():
    lrs = np.full(1000, 0.01)
    S = np.concatenate([[0], np.cumsum(lrs)])
    rng = np.random.default_rng(0)
    delta = S[None] ** 1.5 * rng.uniform(0.9, 1.1, size=(10, 1))
    slope, se = growth_slope(delta, lrs, 0.1)
    assert slope == pytest.approx(1.5, abs=1e-9) and se < 1e-6


def test_neighbours_differ_in_exactly_one_example():
    for nb in (make_least_squares(20, 3, 5, 0.1, 0), make_logistic(20, 3, 5, 0),
               breast_cancer(50, 0), digits(50, 5, 0, n_test=20)):  # fmt: skip
        X2, y2 = nb.neighbour()
        changed = torch.nonzero((X2 != nb.X).any(-1)).flatten().tolist()
        assert changed == [nb.k] and nb.X.dtype == torch.float64
        assert len(nb.X_test) > 0 and nb.X_test.shape[1] == nb.p


def test_real_data_are_standardised_on_the_training_set():
    nb = breast_cancer(300, seed=3)
    np.testing.assert_allclose(nb.X[:, :-1].mean(0), 0, atol=1e-10)
    np.testing.assert_allclose(nb.X[:, :-1].std(0, unbiased=False), 1, atol=1e-10)
    assert set(nb.y.tolist()) == {-1.0, 1.0} and torch.all(nb.X[:, -1] == 1)
    assert torch.equal(breast_cancer(300, seed=3).X, nb.X)  # seeded
