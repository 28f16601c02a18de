"""ZOSGD, ZOGD and ZOSVRG on torch models as black boxes: the batched objective, the query
budget, and that they optimise."""

import pytest
import torch
from iclr24_zo_stability import (
    ZOGD,
    ZOSGD,
    ZOSVRG,
    Estimator,
    QueryBudgetExhausted,
    model_objective,
)


def regression(seed=0, n=64):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 4, generator=g, dtype=torch.float64)
    y = X @ torch.tensor([1.0, -2.0, 0.5, 0.0], dtype=torch.float64) + 0.3
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1)
    ).double()
    torch.manual_seed(seed)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    return model, X, y.unsqueeze(-1)


mse = torch.nn.functional.mse_loss


def loss(model, X, y) -> float:
    with torch.no_grad():
        return float(mse(model(X), y))


def test_model_objective_evaluates_each_row_with_the_model():
    model, X, y = regression()
    f = model_objective(model, mse, X, y)
    theta = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    P = theta + 0.1 * torch.randn(
        5, theta.numel(), generator=torch.Generator().manual_seed(1), dtype=torch.float64
    )
    vals = f(P)
    for q in range(5):
        torch.nn.utils.vector_to_parameters(P[q], model.parameters())
        assert float(vals[q]) == pytest.approx(loss(model, X, y), rel=1e-12)


def test_per_example_objective_rows_are_single_example_losses():
    model, X, y = regression(n=6)
    f = model_objective(model, mse, X, y, per_example=True)
    theta = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    P = theta.expand(6, 2, theta.numel())  # (n, Q, d)
    vals = f(P)
    assert vals.shape == (6, 2)
    for i in range(6):
        assert float(vals[i, 0]) == pytest.approx(
            loss(model, X[i : i + 1], y[i : i + 1]), rel=1e-12
        )


@pytest.mark.parametrize("kind", ["coord", "gauss2", "sphere2"])
def test_zosgd_trains_a_model_through_loss_values_only(kind):
    model, X, y = regression()
    full = model_objective(model, mse, X, y)
    start = loss(model, X, y)
    opt = ZOSGD(model.parameters(), lr=0.02, estimator=Estimator(kind, K=4),
                generator=torch.Generator().manual_seed(0))  # fmt: skip
    g = torch.Generator().manual_seed(1)
    for _ in range(400):
        idx = torch.randint(len(X), (8,), generator=g)
        opt.step(model_objective(model, mse, X[idx], y[idx]))
    end = float(full(torch.nn.utils.parameters_to_vector(model.parameters()).detach()[None]))
    assert end < 0.5 * start
    assert opt.queries == 400 * Estimator(kind, K=4).queries(opt.d)


def test_coordinate_zogd_on_a_linear_least_squares_model_is_exact_gradient_descent():
    model, X, y = regression()
    lin = torch.nn.Linear(4, 1).double()
    w0 = torch.nn.utils.parameters_to_vector(lin.parameters()).detach().clone()
    opt = ZOGD(lin.parameters(), lr=0.1, estimator=Estimator("coord", mu=0.37))
    opt.step(model_objective(lin, mse, X, y))
    ref = torch.nn.Linear(4, 1).double()
    torch.nn.utils.vector_to_parameters(w0, ref.parameters())
    mse(ref(X), y).backward()
    expected = w0 - 0.1 * torch.cat([p.grad.reshape(-1) for p in ref.parameters()])
    got = torch.nn.utils.parameters_to_vector(lin.parameters()).detach()
    assert torch.allclose(got, expected, rtol=0, atol=1e-12)  # quadratic: coord is exact


def test_query_budget_stops_before_overspending():
    model, X, y = regression()
    f = model_objective(model, mse, X, y)
    opt = ZOSGD(model.parameters(), lr=0.01, estimator=Estimator("gauss2", K=2), query_budget=7)
    opt.step(f)
    opt.step(f)  # 6 of 7 spent
    before = torch.nn.utils.parameters_to_vector(model.parameters()).detach().clone()
    with pytest.raises(QueryBudgetExhausted, match="needs 3 queries; 1 of 7"):
        opt.step(f)
    assert torch.equal(torch.nn.utils.parameters_to_vector(model.parameters()).detach(), before)
    assert opt.queries == 6 and opt.remaining == 1


def test_zosvrg_snapshots_then_steps_and_counts_both_terms():
    model, X, y = regression()
    est = Estimator("gauss2", K=1)
    opt = ZOSVRG(
        model.parameters(), lr=0.005, estimator=est, generator=torch.Generator().manual_seed(0)
    )
    with pytest.raises(RuntimeError, match="snapshot"):
        opt.step(model_objective(model, mse, X[:1], y[:1]))
    start = loss(model, X, y)
    g = torch.Generator().manual_seed(2)
    for _ in range(8):
        opt.snapshot(model_objective(model, mse, X, y, per_example=True), examples=len(X))
        for _ in range(len(X)):
            i = torch.randint(len(X), (1,), generator=g)
            opt.step(model_objective(model, mse, X[i], y[i]))
    assert loss(model, X, y) < 0.5 * start
    q = est.queries(opt.d)
    assert opt.queries == 8 * (len(X) * q + len(X) * 2 * q)


def test_optimisers_refuse_bad_arguments():
    model, _, _ = regression()
    with pytest.raises(ValueError, match="lr"):
        ZOSGD(model.parameters(), lr=0)
    with pytest.raises(ValueError, match="query_budget"):
        ZOSGD(model.parameters(), lr=0.1, query_budget=0)
