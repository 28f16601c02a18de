"""Data: a training set S, its neighbour S' (one example replaced) and a test set.

Generated: least squares on a Gaussian design, logistic regression with Bernoulli labels.
Bundled (scikit-learn, no download): ``load_breast_cancer`` (logistic regression) and
``load_digits`` (parity of the digit, for the tanh MLP). Every split is drawn from the seed
alone, so the runs of one seed see the same S, S' and test set whatever else runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

DATASETS = ("least-squares", "logistic", "breast-cancer", "digits")


@dataclass(frozen=True)
class Neighbours:
    """S = (X, y); S' = S with example ``k`` replaced by ``(x_swap, y_swap)``; a test set."""

    X: torch.Tensor
    """(n, p) float64."""
    y: torch.Tensor
    """(n,) float64 (labels +-1 for classification)."""
    k: int
    x_swap: torch.Tensor
    """(p,)"""
    y_swap: torch.Tensor
    """() """
    X_test: torch.Tensor
    y_test: torch.Tensor

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def p(self) -> int:
        return self.X.shape[1]

    def neighbour(self) -> tuple[torch.Tensor, torch.Tensor]:
        """S' as (X', y')."""
        X, y = self.X.clone(), self.y.clone()
        X[self.k], y[self.k] = self.x_swap, self.y_swap
        return X, y


def _finish(X, y, n, rng, n_test=None) -> Neighbours:
    """First n rows: S; row n: the replacement example; the rest (up to n_test): test set."""
    t = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float64)  # noqa: E731
    end = None if n_test is None else n + 1 + n_test
    return Neighbours(
        X=t(X[:n]), y=t(y[:n]), k=int(rng.integers(n)), x_swap=t(X[n]), y_swap=t(y[n]),
        X_test=t(X[n + 1 : end]), y_test=t(y[n + 1 : end]),
    )  # fmt: skip


def make_least_squares(n: int, p: int, n_test: int, noise: float, seed: int) -> Neighbours:
    """y = x.w* + noise eps, x ~ N(0, I_p), w* ~ N(0, I_p / p), eps ~ N(0, 1)."""
    rng = np.random.default_rng([seed, 11])
    w = rng.standard_normal(p) / np.sqrt(p)
    X = rng.standard_normal((n + 1 + n_test, p))
    return _finish(X, X @ w + noise * rng.standard_normal(len(X)), n, rng)


def make_logistic(n: int, p: int, n_test: int, seed: int, signal: float = 2.0) -> Neighbours:
    """Labels +-1 with P(y = 1 | x) = sigmoid(x.w*), x ~ N(0, I_p), w* ~ N(0, signal^2 I / p)."""
    rng = np.random.default_rng([seed, 12])
    w = signal * rng.standard_normal(p) / np.sqrt(p)
    X = rng.standard_normal((n + 1 + n_test, p))
    y = np.where(rng.random(len(X)) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return _finish(X, y, n, rng)


def _standardise(X: np.ndarray, n: int) -> np.ndarray:
    mean, std = X[:n].mean(0), X[:n].std(0)
    return (X - mean) / np.where(std > 0, std, 1.0)


def breast_cancer(n: int, seed: int) -> Neighbours:
    """scikit-learn's bundled Wisconsin breast cancer (569 x 30): malignant = +1, features
    standardised on S, a constant 1 appended (the intercept). S: n rows of a seeded shuffle;
    the replacement example and the test set come from the rest."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    if n + 2 > len(X):
        raise ValueError(f"breast cancer has {len(X)} examples: n must be <= {len(X) - 2}")
    rng = np.random.default_rng([seed, 13])
    order = rng.permutation(len(X))
    X = _standardise(X[order], n)
    X = np.hstack([X, np.ones((len(X), 1))])
    return _finish(X, np.where(y[order] == 0, 1.0, -1.0), n, rng)


def digits(n: int, components: int, seed: int, n_test: int | None = None) -> Neighbours:
    """scikit-learn's bundled 8x8 digits (1797 x 64), label +1 for odd digits, -1 for even;
    projected on the first ``components`` principal axes of S and standardised on S."""
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA

    X, y = load_digits(return_X_y=True)
    if n + 2 > len(X):
        raise ValueError(f"digits has {len(X)} examples: n must be <= {len(X) - 2}")
    rng = np.random.default_rng([seed, 14])
    order = rng.permutation(len(X))
    X, y = X[order], y[order]
    pca = PCA(components, random_state=0).fit(X[:n])
    X = _standardise(pca.transform(X), n)
    return _finish(X, np.where(y % 2 == 1, 1.0, -1.0), n, rng, n_test)
