"""Data: the generated default data, and the loader of the paper's data (paper preset).

The paper preset reads ``<data-dir>/scl-relu/train.csv`` (TODO: the paper's real files and
where to get them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iclr24_common import MissingDataError


def make_regression(n: int, d: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """y = X w* + noise * eps with X, w*, eps standard normal. -> X: (n, d), y: (n,)"""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d) / np.sqrt(d)
    X = rng.standard_normal((n, d))
    return X, X @ w + noise * rng.standard_normal(n)


def load_csv(root: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``<root>/scl-relu/train.csv``: one row per example, the target in the last column."""
    path = Path(root) / "scl-relu" / "train.csv"
    if not path.exists():
        raise MissingDataError(
            "the paper's training table (TODO: its name)",
            [path],
            "TODO: where to download it, and the file to put there",
        )
    table = np.loadtxt(path, delimiter=",", ndmin=2)
    return table[:, :-1], table[:, -1]
