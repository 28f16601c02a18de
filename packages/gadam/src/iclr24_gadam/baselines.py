"""Baselines on the same PyG ``Data`` interface as GADAM (scores: higher = more anomalous).

- ``degree_score``: node degree (injected cliques raise it); no learning.
- ``feature_inconsistency_score``: 1 - cos(x_i, mean of neighbours' x); no learning.
- ``GAE``, ``DOMINANT``, ``AnomalyDAE``: the reconstruction detectors the GADAM paper runs
  from PyGOD, ported from PyGOD 1.x (``pygod/detector/{gae,dominant,anomalydae}.py``,
  ``pygod/nn/{gae,dominant,anomalydae,decoder,functional}.py``) with its defaults, on
  torch_geometric's ``GCN`` and ``GATConv`` backbones as PyGOD uses them. Full-batch; the
  scores are those of the last training epoch's forward pass, as PyGOD's ``fit`` leaves
  ``decision_score_``. DOMINANT and AnomalyDAE reconstruct the dense N x N adjacency.
- CoLA (contrastive, sampled subgraphs) is in ``cola.py``.

CONAD is not here: PyGOD's CONAD adds ``MarginRankingLoss(h, h, h_aug)`` to DOMINANT's loss,
which compares h with itself and is the constant margin, so it trains exactly as DOMINANT.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.nn import GCN, GATConv

from .gadam import neighbour_mean, prepare_edges


def _inputs(data, device="cpu"):
    x = data.x.float().to(device)
    return x, prepare_edges(data.edge_index.long(), x.shape[0]).to(device)


def degree_score(data) -> np.ndarray:
    x, ei = _inputs(data)
    return torch.bincount(ei[1], minlength=x.shape[0]).double().numpy()


def feature_inconsistency_score(data) -> np.ndarray:
    x, ei = _inputs(data)
    return (1 - F.cosine_similarity(x, neighbour_mean(x, ei), dim=1, eps=1e-12)).numpy()


def dense_adjacency(ei: torch.Tensor, n: int) -> torch.Tensor:
    """S (N, N) with S[i, j] = 1 for an edge i -> j (PyGOD: to_dense_adj(edge_index)[0])."""
    s = torch.zeros(n, n, device=ei.device)
    s[ei[0], ei[1]] = 1.0
    return s


def gcn_adjacency(ei: torch.Tensor, n: int) -> torch.Tensor:
    """The graph as the sparse CSR ``adj_t`` PyG's GCNConv also accepts (row i: the sources
    of the edges into i): one sparse product per layer instead of a gather and a scatter
    over the edges, the same numbers 2-3x faster for wide features."""
    with warnings.catch_warnings():  # torch calls its sparse CSR support "beta"
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta", UserWarning)
        ones = torch.ones(ei.shape[1], device=ei.device)
        return torch.sparse_coo_tensor(ei.flip(0), ones, (n, n)).coalesce().to_sparse_csr()


def reconstruction_error(x, x_, s, s_, weight=0.5, pos_weight_a=0.5, pos_weight_s=0.5):
    """PyGOD's double_recon_loss: weight * ||x_i - x_i'|| + (1 - weight) * ||s_i - s_i'||,
    with squared errors on non-zero entries weighted by pos_weight (off at 0.5).
    Returns (score, attribute error, structure error), each (N,)."""
    diff_a = (x - x_).pow(2)
    if pos_weight_a != 0.5:
        diff_a = torch.where(x > 0, diff_a * pos_weight_a, diff_a * (1 - pos_weight_a))
    diff_s = (s - s_).pow(2)
    if pos_weight_s != 0.5:
        diff_s = torch.where(s > 0, diff_s * pos_weight_s, diff_s * (1 - pos_weight_s))
    attr, struct = diff_a.sum(1).sqrt(), diff_s.sum(1).sqrt()
    return weight * attr + (1 - weight) * struct, attr, struct


def _backbone(in_dim, hidden, out_dim, layers):
    """PyGOD's default backbone: torch_geometric.nn.GCN (ReLU between layers, none after the
    last; GCNConv with self-loops and symmetric normalisation), no dropout."""
    return GCN(in_dim, hidden, layers, out_dim, dropout=0.0, act="relu")


class _Detector:
    """The full-batch training loop PyGOD's DeepDetector.fit runs for these detectors."""

    config: object
    sparse_propagation = True  # GCN backbones: propagate with the sparse adj_t

    def __init__(self, config=None, *, device="cpu", seed=None, **overrides):
        self.config = replace(config or type(self).Config(), **overrides)
        self.device, self.seed = torch.device(device), seed

    def fit(self, data):
        # PyG builds sparse tensors in GCNConv; opting out of torch's invariant checks (off by
        # default) explicitly keeps torch from warning about it
        with torch.sparse.check_sparse_tensor_invariants(enable=False):
            return self._fit(data)

    def _fit(self, data):
        cfg = self.config
        x, ei = _inputs(data, self.device)
        if self.seed is not None:
            torch.manual_seed(self.seed)
        net = self._model(x.shape[0], x.shape[1]).to(self.device)
        opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        target = self._target(x, ei)
        ei = gcn_adjacency(ei, x.shape[0]) if self.sparse_propagation else ei
        self.losses_ = []
        for _ in range(cfg.epochs):
            score, parts = self._score(net, x, ei, target)
            loss = score.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.losses_.append(loss.item())
        # PyGOD keeps the scores of the last epoch's forward pass (before its step)
        self.decision_score_ = score.detach().cpu().numpy()
        self.attr_error_, self.struct_error_ = (p.detach().cpu().numpy() for p in parts)
        return self


@dataclass(frozen=True)
class GAEConfig:
    """PyGOD GAE defaults (pygod/detector/gae.py): GCN encoder/decoder reconstructing X."""

    hidden: int = 64
    """Hidden width (hid_dim 64)."""
    layers: int = 4
    """GCN layers, floor half for the encoder, the rest for the decoder (num_layers 4)."""
    lr: float = 4e-3
    """Adam learning rate (lr 0.004)."""
    epochs: int = 100
    """Full-batch epochs (epoch 100)."""
    weight_decay: float = 0.0
    """Adam weight decay (weight_decay 0)."""


class _GAENet(nn.Module):
    def __init__(self, in_dim, hidden, layers):
        super().__init__()
        self.encoder = _backbone(in_dim, hidden, hidden, layers // 2)
        self.decoder = _backbone(hidden, hidden, in_dim, layers - layers // 2)

    def forward(self, x, ei):
        return self.decoder(self.encoder(x, ei), ei)


class GAE(_Detector):
    """Graph autoencoder (Kipf & Welling 2016) as PyGOD's GAE detector: score = mean squared
    feature reconstruction error of the node. Sparse: scales to large graphs."""

    Config = GAEConfig

    def _model(self, n, in_dim):
        return _GAENet(in_dim, self.config.hidden, self.config.layers)

    def _target(self, x, ei):
        return None

    def _score(self, net, x, ei, target):
        err = (net(x, ei) - x).pow(2).mean(1)  # F.mse_loss(reduction="none").mean(1)
        return err, (err, torch.zeros_like(err))


@dataclass(frozen=True)
class DominantConfig:
    """PyGOD DOMINANT defaults (pygod/detector/dominant.py)."""

    hidden: int = 64
    """Hidden width (hid_dim 64)."""
    layers: int = 4
    """floor(4/2) = 2 GCN layers encode, ceil(4/2) = 2 decode attributes, 1 decodes
    structure (num_layers 4)."""
    lr: float = 4e-3
    """Adam learning rate (lr 0.004)."""
    epochs: int = 100
    """Full-batch epochs (epoch 100)."""
    weight: float = 0.5
    """Weight of the attribute error against the structure error (weight 0.5; the
    "alpha" of PyGOD 0.3)."""
    weight_decay: float = 0.0
    """Adam weight decay (weight_decay 0)."""


class _DominantNet(nn.Module):
    """pygod/nn/dominant.py DOMINANTBase with its DotProductDecoder (sigmoid_s=False):
    S' = h h^T with h the output of a GCN on the shared embedding, no activation after it."""

    def __init__(self, in_dim, hidden, layers):
        super().__init__()
        enc, dec = layers // 2, layers - layers // 2
        self.shared_encoder = _backbone(in_dim, hidden, hidden, enc)
        self.attr_decoder = _backbone(hidden, hidden, in_dim, dec)
        self.struct_decoder = _backbone(hidden, hidden, hidden, dec - 1)

    def forward(self, x, ei):
        z = self.shared_encoder(x, ei)
        h = self.struct_decoder(z, ei)
        return self.attr_decoder(z, ei), h @ h.T  # (N, F), (N, N) dense: the cost GADAM avoids


class DOMINANT(_Detector):
    """DOMINANT (Ding et al., SDM 2019) as PyGOD's detector: a shared GCN encoder, a GCN
    attribute decoder and an inner-product structure decoder; score = weighted norms of the
    attribute and structure reconstruction errors (``attr_error_``, ``struct_error_``)."""

    Config = DominantConfig

    def _model(self, n, in_dim):
        return _DominantNet(in_dim, self.config.hidden, self.config.layers)

    def _target(self, x, ei):
        return dense_adjacency(ei, x.shape[0])

    def _score(self, net, x, ei, s):
        x_, s_ = net(x, ei)
        score, attr, struct = reconstruction_error(x, x_, s, s_, self.config.weight)
        return score, (attr, struct)


@dataclass(frozen=True)
class AnomalyDAEConfig:
    """PyGOD AnomalyDAE defaults (pygod/detector/anomalydae.py), except the epochs."""

    emb_dim: int = 64
    """Width after the first linear layers (emb_dim 64)."""
    hidden: int = 64
    """Width of the node and attribute embeddings (hid_dim 64)."""
    alpha: float = 0.5
    """Weight of the structure error; attributes get 1 - alpha (alpha 0.5)."""
    theta: float = 1.0
    """Penalty on the non-zero adjacency entries, pos_weight_s = theta / (1 + theta) (theta 1)."""
    eta: float = 1.0
    """Penalty on the non-zero attributes, pos_weight_a = eta / (1 + eta) (eta 1)."""
    lr: float = 4e-3
    """Adam learning rate (lr 0.004)."""
    epochs: int = 100
    """Full-batch epochs: the official AnomalyDAE run.py's 100 iterations (PyGOD's default
    of 5 epochs is a quick-test budget)."""
    weight_decay: float = 0.0
    """Adam weight decay (weight_decay 0)."""


class _AnomalyDAENet(nn.Module):
    """pygod/nn/anomalydae.py AnomalyDAEBase: a structure autoencoder (linear, GAT, sigmoid
    of inner products) and an attribute autoencoder on X^T (features as samples)."""

    def __init__(self, in_dim, num_nodes, emb_dim, hidden):
        super().__init__()
        self.dense_stru = nn.Linear(in_dim, emb_dim)
        self.gat_layer = GATConv(emb_dim, hidden)
        self.dense_attr_1 = nn.Linear(num_nodes, emb_dim)
        self.dense_attr_2 = nn.Linear(emb_dim, hidden)

    def forward(self, x, ei):
        h = self.gat_layer(F.relu(self.dense_stru(x)), ei)  # (N, hidden) node embeddings
        a = self.dense_attr_2(F.relu(self.dense_attr_1(x.T)))  # (F, hidden) attribute embeddings
        return h @ a.T, torch.sigmoid(h @ h.T)  # (N, F), (N, N)


class AnomalyDAE(_Detector):
    """AnomalyDAE (Fan et al., ICASSP 2020) as PyGOD's detector: dual autoencoder whose
    attribute decoder crosses node and attribute embeddings; score = weighted norms of the
    attribute and structure reconstruction errors."""

    Config = AnomalyDAEConfig
    sparse_propagation = False  # GATConv attends over the edge list

    def _model(self, n, in_dim):
        cfg = self.config
        return _AnomalyDAENet(in_dim, n, cfg.emb_dim, cfg.hidden)

    def _target(self, x, ei):
        return dense_adjacency(ei, x.shape[0])

    def _score(self, net, x, ei, s):
        cfg = self.config
        x_, s_ = net(x, ei)
        score, attr, struct = reconstruction_error(
            x, x_, s, s_, 1 - cfg.alpha, cfg.eta / (1 + cfg.eta), cfg.theta / (1 + cfg.theta)
        )
        return score, (attr, struct)
