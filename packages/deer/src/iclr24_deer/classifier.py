"""The official EigenWorms model (experiments/04_rnn_eigenworms/models.py, SingleScaleGRU with
one channel) in torch, with its GRU layers evaluated by DEER or sequentially.

encoder MLP -> nlayer x [LayerNorm -> GRU -> LayerNorm(gru + input) -> MLP(x) + x] ->
classifier MLP, averaged over time (train.py ``rollout``: ``out.mean(axis=0)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .modules import DEERGRU


@dataclass(frozen=True)
class ClassifierConfig:
    """Shape of the residual GRU classifier (official EigenWorms values in comments)."""

    ninp: int = 6
    """input channels (EigenWorms: 6)."""
    nstate: int = 32
    """width of every layer and GRU hidden size (official --nstates 32)."""
    nlayer: int = 5
    """residual GRU layers (official --nlayer 5)."""
    nclass: int = 5
    """classes (EigenWorms: 5)."""


def _mlp(n_in: int, width: int, n_out: int) -> nn.Sequential:
    """Official MLP: one hidden ReLU layer, he_uniform weights, zero biases."""
    m = nn.Sequential(nn.Linear(n_in, width), nn.ReLU(), nn.Linear(width, n_out))
    for lin in (m[0], m[2]):
        nn.init.kaiming_uniform_(lin.weight, nonlinearity="relu")
        nn.init.zeros_(lin.bias)
    return m


class ResidualGRUClassifier(nn.Module):
    """logits = model(x) with x (B, T, ninp) -> (B, nclass).

    method: "deer" | "sequential" | "native" for every GRU layer (see DEERGRU).
    """

    def __init__(self, cfg: ClassifierConfig, method: str = "deer", jacobian: str = "full"):
        super().__init__()
        self.cfg = cfg
        n = cfg.nstate
        self.encoder = _mlp(cfg.ninp, n, n)
        self.grus = nn.ModuleList(
            DEERGRU(n, n, batch_first=True, method=method, jacobian=jacobian)
            for _ in range(cfg.nlayer)
        )
        for g in self.grus:  # official custom_gru: lecun_normal W_ih, orthogonal W_hh, zero bias
            nn.init.normal_(g.weight_ih_l0, std=(1.0 / n) ** 0.5)
            nn.init.orthogonal_(g.weight_hh_l0)  # on the stacked (3n, n) matrix, as official
            nn.init.zeros_(g.bias_ih_l0)
            nn.init.zeros_(g.bias_hh_l0)
        self.mlps = nn.ModuleList(_mlp(n, n, n) for _ in range(cfg.nlayer))
        self.classifier = _mlp(n, n, cfg.nclass)

    def set_method(self, method: str) -> None:
        for g in self.grus:
            g.method = method

    def deer_iterations(self) -> list[int]:
        return [it for g in self.grus for it in g.last_iterations]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = lambda v: nn.functional.layer_norm(v, v.shape[-1:])  # noqa: E731 (no affine)
        inp = self.encoder(x)
        for gru, mlp in zip(self.grus, self.mlps):
            inp = norm(inp)
            h, _ = gru(inp)
            h = norm(h + inp)
            inp = mlp(h) + h
        return self.classifier(inp).mean(1)
