"""Scalable Monotonic Neural Networks (Kim & Lee, ICLR 2024).

Paper: ICLR 2024, https://openreview.net/forum?id=DjIsNDEOYX (no arXiv version that we know of).
Official code: https://github.com/retna319/SMNN (``SMNN.py``), Apache-2.0.

The network is partially connected. Inputs are split into the monotone part ``x_m`` and the
free part ``x_f``. Every *scalable monotonic hidden layer* ``l`` holds three units (paper,
Section 3, Figure 2):

    exponentiated unit   h^e_l = act( [h^e_{l-1}, h^c_{l-1}] @ exp(W^e_l) + b^e_l )   (h^e_0 = x_m)
    ReLU unit            h^r_l = relu( h^r_{l-1} @ W^r_l + b^r_l )                     (h^r_0 = x_f)
    confluence unit      h^c_l = act( h^r_{l-1} @ W^c_l + b^c_l )

with the clipped activation ``act(z) = 0.99 * clip(z, 0, 1) + 0.01 * z`` (slope >= 0.01) and
an exponentiated output layer ``y = [h^e_L, h^c_L, h^r_L] @ exp(W^o) + b^o``.

Why it is monotone, for every value of the weights: ``x_m`` reaches the output only through
exponentiated (positive) weights and non-decreasing activations, while ``h^c`` and ``h^r``
depend on ``x_f`` alone. So ``dy/dx_m >= 0`` everywhere; nothing is projected or clipped
during training. A decreasing feature is handled by feeding ``-x_j`` to the monotone path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import nn

# ---------------------------------------------------------------------------------------
# helpers


def truncated_normal_(tensor: torch.Tensor, mean: float = 0.0, std: float = 1.0) -> torch.Tensor:
    """Normal(mean, std) truncated to mean +/- 2 std (the official ``truncated_normal_``)."""
    with torch.no_grad():
        return nn.init.trunc_normal_(tensor, mean=mean, std=std, a=mean - 2 * std, b=mean + 2 * std)


def clipped_activation(z: torch.Tensor, leak: float = 0.01) -> torch.Tensor:
    """``(1 - leak) * clip(z, 0, 1) + leak * z``: the exp/confluence activation (leak 0.01 in
    the official ``ExpUnit``/``ConfluenceUnit``). Non-decreasing with slope in [leak, 1]."""
    return (1.0 - leak) * torch.clamp(z, 0.0, 1.0) + leak * z


def normalize_monotone(
    monotone: Mapping[int, int] | Sequence[int], n_features: int
) -> dict[int, int]:
    """``{index: +1 | -1}`` from a mapping, or from a list of indices (all increasing)."""
    if not isinstance(monotone, Mapping):
        monotone = {int(i): 1 for i in monotone}
    out: dict[int, int] = {}
    for key, sign in monotone.items():
        j = int(key)
        if not -n_features <= j < n_features:
            raise ValueError(
                f"monotone feature index {key} is out of range for {n_features} features"
            )
        j %= n_features
        if sign not in (1, -1):
            raise ValueError(f"monotone direction for feature {key} must be +1 or -1, got {sign!r}")
        if j in out:
            raise ValueError(f"monotone feature {key} given twice")
        out[j] = int(sign)
    return dict(sorted(out.items()))


class Dense(nn.Module):
    """``x @ W + b`` with W stored as (in, out), as in the official ``ActivationLayer``."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d_in, d_out))
        self.bias = nn.Parameter(torch.empty(d_out))

    def _xavier_(self):
        if self.weight.numel():  # a unit may have no input (e.g. every feature is monotone)
            nn.init.xavier_uniform_(self.weight)


# ---------------------------------------------------------------------------------------
# the three units and the output layer


class ExpUnit(Dense):
    """Exponentiated unit: ``act(x @ exp(W) + b)``, positive weights by construction."""

    def __init__(self, d_in: int, d_out: int, init_range: tuple[float, float] = (-20.0, 2.0)):
        super().__init__(d_in, d_out)
        nn.init.uniform_(self.weight, *init_range)  # W ~ U(-20, 2): official ExpUnit
        truncated_normal_(self.bias, std=0.5)  # b ~ TN(0, 0.5): official ExpUnit

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return clipped_activation(x @ torch.exp(self.weight) + self.bias)


class ReLUUnit(Dense):
    """ReLU unit: an ordinary ReLU layer on the free (non-monotone) path."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__(d_in, d_out)
        self._xavier_()  # official ReLUUnit: xavier_uniform weights
        truncated_normal_(self.bias, std=0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.weight + self.bias)


class ConfluenceUnit(Dense):
    """Confluence unit: unconstrained weights from the free path, clipped activation; its
    output joins the monotone path (feature interactions without breaking monotonicity)."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__(d_in, d_out)
        self._xavier_()  # official ConfluenceUnit: xavier_uniform weights
        truncated_normal_(self.bias, std=0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return clipped_activation(x @ self.weight + self.bias)


class ExpOutput(Dense):
    """Exponentiated output layer ``x @ exp(W) + b`` (official ``FCLayer``)."""

    def __init__(self, d_in: int, d_out: int = 1, init_mean: float = -10.0, init_std: float = 3.0):
        super().__init__(d_in, d_out)
        truncated_normal_(self.weight, mean=init_mean, std=init_std)  # official: TN(-10, 3)
        truncated_normal_(self.bias, std=0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ torch.exp(self.weight) + self.bias


# ---------------------------------------------------------------------------------------
# the network


@dataclass
class SMNNConfig:
    """Sizes of the scalable monotonic hidden layers (one entry per layer)."""

    exp_units: tuple[int, ...] = (128, 128)
    """Width of the exponentiated unit per layer (official Friedman/scalability config)."""
    relu_units: tuple[int, ...] = (16, 16)
    """Width of the ReLU unit per layer (official Friedman/scalability config)."""
    conf_units: tuple[int, ...] = (64, 64)
    """Width of the confluence unit per layer (official Friedman/scalability config)."""
    exp_init: tuple[float, float] = (-20.0, 2.0)
    """U(a, b) initialisation of the exp-unit log-weights (official ``ExpUnit``)."""
    out_init_mean: float = -10.0
    """Mean of the truncated-normal init of the output log-weights (official ``FCLayer``)."""
    out_init_std: float = 3.0
    """Std of the truncated-normal init of the output log-weights (official ``FCLayer``)."""


class PartiallyConnected(nn.Module):
    """The three-path layout shared by SMNN and its unconstrained ablation (official
    ``ScalableMonotonicNeuralNetwork``, whose unit classes are arguments): ``exp_unit``,
    ``relu_unit``, ``conf_unit`` build one layer's units from (in, out); ``output`` the last
    layer from its input width."""

    def __init__(self, n_features: int, monotone, cfg: SMNNConfig, exp_unit, relu_unit,
                 conf_unit, output):  # fmt: skip
        super().__init__()
        if not (len(cfg.exp_units) == len(cfg.relu_units) == len(cfg.conf_units) >= 1):
            raise ValueError(
                "exp_units, relu_units and conf_units need the same number (>= 1) of layers"
            )
        self.n_features = int(n_features)
        self.monotone = normalize_monotone(monotone, self.n_features)
        if not self.monotone:
            raise ValueError("give at least one monotone feature, e.g. monotone={0: +1}")
        self.cfg = cfg
        mono = list(self.monotone)
        free = [j for j in range(self.n_features) if j not in self.monotone]
        self.register_buffer("mono_idx", torch.tensor(mono, dtype=torch.long), persistent=False)
        self.register_buffer("free_idx", torch.tensor(free, dtype=torch.long), persistent=False)
        signs = torch.tensor([float(self.monotone[j]) for j in mono])
        self.register_buffer("mono_sign", signs, persistent=False)  # (m,)
        e, r, c = cfg.exp_units, cfg.relu_units, cfg.conf_units
        # layer 0 reads the inputs; layer l > 0 reads [h_e, h_c] (exp) or h_r (ReLU, confluence)
        self.exp_units = nn.ModuleList(
            exp_unit(len(mono) if i == 0 else e[i - 1] + c[i - 1], e[i]) for i in range(len(e))
        )
        self.relu_units = nn.ModuleList(
            relu_unit(len(free) if i == 0 else r[i - 1], r[i]) for i in range(len(r))
        )
        self.conf_units = nn.ModuleList(
            conf_unit(len(free) if i == 0 else r[i - 1], c[i]) for i in range(len(c))
        )
        self.output = output(e[-1] + c[-1] + r[-1])

    def _split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # decreasing features enter the monotone path negated: y(-x_j) increasing <=> y decreasing
        x_mono = x.index_select(1, self.mono_idx) * self.mono_sign  # (batch, m)
        x_free = x.index_select(1, self.free_idx)  # (batch, d - m)
        return x_mono, x_free

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: (batch, n_features) -> (batch,) scores (regression value or logit)."""
        if x.ndim != 2 or x.shape[1] != self.n_features:
            raise ValueError(
                f"expected input of shape (batch, {self.n_features}), got {tuple(x.shape)}"
            )
        h_mono, h_free = self._split(x)
        for exp_u, relu_u, conf_u in zip(
            self.exp_units, self.relu_units, self.conf_units, strict=True
        ):
            conf = conf_u(h_free)  # (batch, c_l)
            h_mono = torch.cat([exp_u(h_mono), conf], dim=1)  # (batch, e_l + c_l)
            h_free = relu_u(h_free)  # (batch, r_l)
        return self.output(torch.cat([h_mono, h_free], dim=1)).squeeze(-1)


class SMNN(PartiallyConnected):
    """Scalable Monotonic Neural Network.

    ``monotone`` maps feature indices to +1 (non-decreasing) or -1 (non-increasing); a list
    of indices means all increasing. The output is monotone in those features for ANY value
    of the parameters.

    >>> net = SMNN(5, monotone={3: +1, 4: -1})
    >>> net(torch.rand(8, 5)).shape
    torch.Size([8])
    """

    def __init__(self, n_features: int, monotone, cfg: SMNNConfig | None = None, **sizes):
        cfg = cfg or SMNNConfig(**sizes)
        super().__init__(
            n_features, monotone, cfg,
            exp_unit=lambda i, o: ExpUnit(i, o, cfg.exp_init),
            relu_unit=ReLUUnit,
            conf_unit=ConfluenceUnit,
            output=lambda i: ExpOutput(i, 1, cfg.out_init_mean, cfg.out_init_std),
        )  # fmt: skip


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def official_state_dict(state_dict: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The weights of an official model (``SMNN.py``'s ``ScalableMonotonicNeuralNetwork``,
    ``SameStructure`` or ``MultiLayerPerceptron``) under this package's names, for
    ``load_state_dict``: the layouts are the same ((in, out) weights), only ``fclayer`` is
    ``output`` and ``hidden_layers`` is ``hidden`` here. The official model takes its monotone
    columns as given (increasing); build ours with the same (sorted) indices, all ``+1``.

    >>> net = SMNN(6, [1, 4], SMNNConfig((8, 6), (4, 3), (5, 4)))
    >>> net.load_state_dict(official_state_dict(official.state_dict()))  # doctest: +SKIP
    """
    renames = (("fclayer.", "output."), ("hidden_layers.", "hidden."))
    out = {}
    for key, value in state_dict.items():
        for old, new in renames:
            if key.startswith(old):
                key = new + key.removeprefix(old)
        out[key] = value
    return out
