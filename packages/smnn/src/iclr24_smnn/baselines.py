"""The baselines of the reproduction.

* the paper's two comparison networks (official ``SMNN.py``): the unconstrained MLP
  (``MultiLayerPerceptron``) and the "same structure without constraints" ablation
  (``SameStructure``: SMNN's partially connected layout with ordinary ReLU units);
* the Lipschitz monotonic network (Kitouni et al., "Expressive Monotonic Neural Networks",
  ICLR 2023) from the ``monotonicnetworks`` package (``pip install iclr24-smnn[peers]``);
* gradient boosting with monotone constraints (scikit-learn ``HistGradientBoosting*``,
  ``monotonic_cst``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch import nn

from .smnn import (
    Dense,
    PartiallyConnected,
    ReLUUnit,
    SMNNConfig,
    normalize_monotone,
    truncated_normal_,
)


class LinearOutput(Dense):
    """Unconstrained output layer (official ``FCLayer_notexp``)."""

    def __init__(self, d_in: int, d_out: int = 1):
        super().__init__(d_in, d_out)
        self._xavier_()
        truncated_normal_(self.bias, std=0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight + self.bias


class SameStructureNet(PartiallyConnected):
    """The paper's ablation: SMNN's partially connected layout with every unit an ordinary
    ReLU layer and an unconstrained output (official ``SameStructure``). Not monotone."""

    def __init__(self, n_features: int, monotone, cfg: SMNNConfig | None = None, **sizes):
        cfg = cfg or SMNNConfig(**sizes)
        super().__init__(n_features, monotone, cfg)
        m, f = len(self.monotone), self.n_features - len(self.monotone)
        e, r, c = cfg.exp_units, cfg.relu_units, cfg.conf_units
        self.exp_units = nn.ModuleList(
            ReLUUnit(m if i == 0 else e[i - 1] + c[i - 1], e[i]) for i in range(len(e))
        )
        self.relu_units = nn.ModuleList(
            ReLUUnit(f if i == 0 else r[i - 1], r[i]) for i in range(len(r))
        )
        self.conf_units = nn.ModuleList(
            ReLUUnit(f if i == 0 else r[i - 1], c[i]) for i in range(len(c))
        )
        self.output = LinearOutput(e[-1] + c[-1] + r[-1], 1)


class MLP(nn.Module):
    """Unconstrained ReLU MLP (official ``MultiLayerPerceptron``): (batch, d) -> (batch,)."""

    def __init__(self, n_features: int, hidden: Sequence[int] = (208, 208)):
        super().__init__()
        widths = [int(n_features), *map(int, hidden)]
        self.hidden = nn.ModuleList(ReLUUnit(widths[i], widths[i + 1]) for i in range(len(hidden)))
        self.output = LinearOutput(widths[-1], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.hidden:
            x = layer(x)
        return self.output(x).squeeze(-1)


def mlp_width_for(n_params: int, n_features: int, depth: int = 2) -> int:
    """Width ``h`` of a ``depth``-layer MLP with about ``n_params`` parameters (to compare
    networks at equal size)."""
    # params = (d + 1) h + (depth - 1)(h^2 + h) + h + 1  ->  solve the quadratic in h
    a, b, c = depth - 1, (n_features + 1) + (depth - 1) + 1, 1 - n_params
    if a == 0:
        return max(1, round(-c / b))
    return max(1, round((-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)))


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
