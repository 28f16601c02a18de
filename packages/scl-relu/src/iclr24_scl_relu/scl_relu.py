"""TODO: the paper's title (authors, ICLR 2024). https://arxiv.org/abs/0000.00000

The method, and only the method: its equations next to the code, shapes in comments, no I/O.
(Template example: ridge regression; replace it with the paper's method.)
"""

from __future__ import annotations

import numpy as np


def ridge_fit(X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Eq. (1): w = argmin ||X w - y||^2 + lam ||w||^2 = (X^T X + lam I)^-1 X^T y.

    X: (n, d), y: (n,) -> w: (d,)
    """
    if lam < 0:
        raise ValueError(f"lam must be >= 0, got {lam}")
    d = X.shape[1]
    return np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)


def ridge_predict(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """X: (n, d), w: (d,) -> (n,)"""
    return X @ w
