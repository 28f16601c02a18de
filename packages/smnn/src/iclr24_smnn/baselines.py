"""Peer baselines of the reproduction, used where their packages are installed.

* the Lipschitz monotonic network (Kitouni et al., "Expressive Monotonic Neural Networks",
  ICLR 2023) from the ``monotonicnetworks`` package (``pip install iclr24-smnn[peers]``);
* gradient boosting with monotone constraints (scikit-learn ``HistGradientBoosting*``,
  ``monotonic_cst``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from torch import nn

from .smnn import normalize_monotone


def has_monotonicnetworks() -> bool:
    try:
        import monotonicnetworks  # noqa: F401
    except ImportError:
        return False
    return True


class LipschitzMonotonicNet(nn.Module):
    """``monotonicnetworks``' recipe: a GroupSort network whose layers are norm-constrained
    (|W|_{1,inf} first, |W|_inf after) to a total Lipschitz constant ``lipschitz``, plus the
    residual ``lipschitz * sum_j s_j x_j`` that makes it monotone. (batch, d) -> (batch,)."""

    def __init__(
        self,
        n_features: int,
        monotone: Mapping[int, int],
        width: int = 64,
        depth: int = 3,
        lipschitz: float = 2.0,
    ):
        super().__init__()
        import monotonicnetworks as lmn

        mono = normalize_monotone(monotone, n_features)
        self.monotone = mono
        per_layer = lipschitz ** (1.0 / depth)  # the product of the layers' bounds is `lipschitz`
        layers: list[nn.Module] = []
        widths = [n_features] + [width] * (depth - 1) + [1]
        for i in range(depth):
            kind = "one-inf" if i == 0 else "inf"
            layers.append(
                lmn.LipschitzLinear(widths[i], widths[i + 1], kind=kind, lipschitz_const=per_layer)
            )
            if i < depth - 1:
                layers.append(lmn.GroupSort(widths[i + 1] // 2))
        constraints = [mono.get(j, 0) for j in range(n_features)]
        self.net = lmn.MonotonicWrapper(
            nn.Sequential(*layers), lipschitz_const=lipschitz, monotonic_constraints=constraints
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


def monotone_gbm(
    n_features: int,
    monotone: Mapping[int, int],
    *,
    classification: bool = False,
    random_state: int = 0,
    max_iter: int = 500,
):
    """HistGradientBoosting with ``monotonic_cst`` and early stopping on 20 % of the data."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    mono = normalize_monotone(monotone, n_features)
    cst = np.array([mono.get(j, 0) for j in range(n_features)])
    cls = HistGradientBoostingClassifier if classification else HistGradientBoostingRegressor
    return cls(
        monotonic_cst=cst,
        max_iter=max_iter,
        early_stopping=True,
        validation_fraction=0.2,
        random_state=random_state,
    )
