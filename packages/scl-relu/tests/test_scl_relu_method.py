"""The method's invariants (template example: ridge). Replace with the paper's: an equivalence
with a reference implementation, a property that holds for any input, a gradient check."""

import numpy as np
import pytest

from iclr24_scl_relu import least_squares_fit, make_regression, ridge_fit


@pytest.mark.parametrize("lam", [0.1, 1.0, 10.0])
def test_ridge_solves_its_normal_equations(lam):
    X, y = make_regression(40, 10, 0.5, seed=0)
    w = ridge_fit(X, y, lam)
    np.testing.assert_allclose(X.T @ (X @ w - y) + lam * w, 0, atol=1e-10)


def test_ridge_tends_to_least_squares_as_the_penalty_vanishes():
    X, y = make_regression(40, 10, 0.5, seed=1)
    np.testing.assert_allclose(ridge_fit(X, y, 1e-10), least_squares_fit(X, y), atol=1e-7)


def test_negative_penalty_is_rejected():
    with pytest.raises(ValueError, match="lam must be >= 0"):
        ridge_fit(np.eye(2), np.ones(2), -1.0)
