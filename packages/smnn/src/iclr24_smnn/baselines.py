"""The baselines of the reproduction, each a torch module (batch, d) -> (batch,) except the
boosting estimator.

* the paper's two comparison networks (official ``SMNN.py``): the unconstrained MLP
  (``MultiLayerPerceptron``) and the "same structure without constraints" ablation
  (``SameStructure``: SMNN's partially connected layout with ordinary ReLU units);
* the Lipschitz monotonic network (LMN; Kitouni, Nolte & Williams, "Expressive Monotonic
  Neural Networks", ICLR 2023) built from the ``monotonicnetworks`` package;
* the unconstrained monotonic network (UMNN; Wehenkel & Louppe, NeurIPS 2019) from the
  ``umnn`` package: one integral network per monotone input, summed;
* a calibrated lattice (Gupta et al. 2016; You et al. 2017) from ``pytorch-lattice``, used
  where that package is installed (it cannot be a dependency: see the README);
* gradient boosting with monotone constraints (scikit-learn ``HistGradientBoosting*``,
  ``monotonic_cst``);
* the no-op arm of the accuracy claims: a linear (least squares) or logistic regression on
  the same split, scored through the same test (a criterion it passes cannot tell a
  monotone network from a linear fit).

LMN, UMNN and the lattice are the peers whose monotonicity is guaranteed, as SMNN's; the
lattice's and UMNN's cost grows with the number of monotone inputs (2^m lattice vertices;
one integrand network and quadrature per monotone input).
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

# the model groups of the reproduction
NEURAL = ("smnn", "mlp", "same", "lmn", "umnn", "lattice")
UNCONSTRAINED = ("mlp", "same")  # the paper's own baselines: not monotone
MONOTONE_PEERS = ("lmn", "umnn", "lattice", "gbm")  # monotone by their own construction
GROWING_PEERS = ("umnn", "lattice")  # cost grows with the number of monotone inputs
CONTROLS = ("linear",)  # the accuracy claims' no-op arm: not tuned, not a peer


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
        super().__init__(n_features, monotone, cfg or SMNNConfig(**sizes), exp_unit=ReLUUnit,
                         relu_unit=ReLUUnit, conf_unit=ReLUUnit, output=LinearOutput)  # fmt: skip


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


def has_lattice() -> bool:
    """Whether ``pytorch-lattice`` is importable (an optional peer: see the README)."""
    try:
        import pytorch_lattice  # noqa: F401
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
        import monotonicnetworks as lmn  # imported here: it prints nothing, but costs ~0.1 s

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


class UMNNSum(nn.Module):
    """UMNN for several monotone inputs: ``f(x) = sum_j g_j(s_j x_j; x_free)`` where each
    ``g_j`` is ``UMNN.MonotonicNN`` (an integral of a positive integrand network, scaled and
    shifted by networks of the free inputs), ``s_j`` the declared direction. Monotone by
    construction; the monotone inputs do not interact (they cannot enter another ``g_k``'s
    conditioning without breaking its monotonicity). (batch, d) -> (batch,).

    Defaults from the UMNN examples (``MonotonicNN(3, [100, 100, 100], nb_steps=100)``), with
    ``nb_steps`` 50 (the package default) and the width tuned on validation here."""

    def __init__(self, n_features: int, monotone: Mapping[int, int], hidden: int = 64,
                 depth: int = 3, nb_steps: int = 50):  # fmt: skip
        super().__init__()
        from UMNN import MonotonicNN

        self.monotone = normalize_monotone(monotone, n_features)
        free = [j for j in range(n_features) if j not in self.monotone]
        self.register_buffer("mono_idx", torch.tensor(list(self.monotone)), persistent=False)
        signs = torch.tensor([float(s) for s in self.monotone.values()])
        self.register_buffer("mono_sign", signs, persistent=False)
        self.register_buffer("free_idx", torch.tensor(free, dtype=torch.long), persistent=False)
        n_cond = max(1, len(free))  # a constant 0 conditions g_j when every input is monotone
        self.nets = nn.ModuleList(
            MonotonicNN(1 + n_cond, [hidden] * depth, nb_steps=nb_steps) for _ in self.monotone
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_mono = x.index_select(1, self.mono_idx) * self.mono_sign  # (batch, m)
        h = x.index_select(1, self.free_idx) if len(self.free_idx) else x.new_zeros(len(x), 1)
        for net in self.nets:  # MonotonicNN keeps its integration bounds on its own device
            net.device = x.device
        return sum(net(x_mono[:, j : j + 1], h) for j, net in enumerate(self.nets)).squeeze(-1)


class CalibratedLatticeNet(nn.Module):
    """``pytorch-lattice``'s ``CalibratedLattice`` on the monotone inputs (piecewise-linear
    calibrators, monotone where declared, into one lattice with 2^m vertices: its cost grows
    exponentially with m), plus an MLP of the free inputs, summed: monotone by construction
    (the constraints are projections applied after every step, ``apply_constraints``).
    ``X_fit`` (n, d) places the calibrators' keypoints at its quantiles. (batch, d) -> (batch,)."""

    def __init__(self, n_features: int, monotone: Mapping[int, int], X_fit: np.ndarray,
                 keypoints: int = 10, hidden: int = 64):  # fmt: skip
        super().__init__()
        from pytorch_lattice.enums import Interpolation, Monotonicity
        from pytorch_lattice.models import CalibratedLattice
        from pytorch_lattice.models.features import NumericalFeature

        self.monotone = normalize_monotone(monotone, n_features)
        free = [j for j in range(n_features) if j not in self.monotone]
        direction = {1: Monotonicity.INCREASING, -1: Monotonicity.DECREASING}
        features = [
            NumericalFeature(
                f"x{j}", np.asarray(X_fit)[:, j], num_keypoints=keypoints, monotonicity=direction[s]
            )  # fmt: skip
            for j, s in self.monotone.items()
        ]
        # simplex interpolation: O(m log m) per example (pytorch-lattice's LatticeConfig default)
        self.lattice = CalibratedLattice(features, interpolation=Interpolation.SIMPLEX)
        self.register_buffer("mono_idx", torch.tensor(list(self.monotone)), persistent=False)
        self.register_buffer("free_idx", torch.tensor(free, dtype=torch.long), persistent=False)
        self.free = MLP(len(free), (hidden, hidden)) if free else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.lattice(x.index_select(1, self.mono_idx)).squeeze(-1).to(x.dtype)
        return out + self.free(x.index_select(1, self.free_idx)) if self.free is not None else out

    def apply_constraints(self) -> None:
        self.lattice.apply_constraints()


def monotone_gbm(
    n_features: int,
    monotone: Mapping[int, int],
    *,
    classification: bool = False,
    random_state: int = 0,
    max_iter: int = 2000,
    learning_rate: float = 0.1,
    max_leaf_nodes: int = 31,
):
    """HistGradientBoosting with ``monotonic_cst``; ``fit(X, y, X_val=..., y_val=...)`` stops
    early on the given validation split (scikit-learn's defaults otherwise)."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    mono = normalize_monotone(monotone, n_features)
    cst = np.array([mono.get(j, 0) for j in range(n_features)])
    cls = HistGradientBoostingClassifier if classification else HistGradientBoostingRegressor
    return cls(
        monotonic_cst=cst,
        max_iter=max_iter,
        learning_rate=learning_rate,
        max_leaf_nodes=max_leaf_nodes,
        early_stopping=True,
        n_iter_no_change=20,
        random_state=random_state,
    )


def linear_model(*, classification: bool = False):
    """The accuracy claims' no-op arm: least squares (regression) or L2 logistic regression
    (classification, scikit-learn's defaults), fitted on the training rows alone."""
    from sklearn.linear_model import LinearRegression, LogisticRegression

    return LogisticRegression(max_iter=1000) if classification else LinearRegression()
