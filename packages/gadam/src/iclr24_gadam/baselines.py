"""Baselines on the same PyG ``Data`` interface as GADAM (scores: higher = more anomalous).

- ``degree_score``: node degree (injected cliques raise it).
- ``feature_inconsistency_score``: 1 - cos(x_i, mean of neighbours' x), local inconsistency
  on raw features, no learning.
- ``DominantAE``: a DOMINANT-style GCN autoencoder (Ding et al., SDM 2019): GCN encoder,
  GCN attribute decoder and inner-product structure decoder; score = weighted
  reconstruction errors. Defaults follow PyGOD's DOMINANT (hidden 64, 4 layers split
  between encoder and decoder, lr 4e-3, 100 epochs, weight 0.5).
- ``ColaDetector``: a CoLA-style contrastive detector (Liu et al., TNNLS 2021): a node
  against the readout of a random-walk subgraph around it (its own features masked) vs
  another node's subgraph, bilinear discriminator, score = mean(neg - pos) over rounds.
  Simplified: the subgraph readout is the mean of a shared 1-layer GCN-style embedding of
  the sampled nodes (CoLA runs a GCN on the subgraph's adjacency).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.nn import GCNConv

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


class _DominantNet(nn.Module):
    def __init__(self, in_dim, hidden, layers):
        super().__init__()
        n_enc = layers // 2
        self.enc = nn.ModuleList(
            GCNConv(in_dim if i == 0 else hidden, hidden) for i in range(n_enc)
        )
        n_dec = layers - n_enc
        self.attr_dec = nn.ModuleList(
            GCNConv(hidden, in_dim if i == n_dec - 1 else hidden) for i in range(n_dec)
        )
        self.struct_dec = GCNConv(hidden, hidden)

    def forward(self, x, ei):
        z = x
        for conv in self.enc:
            z = F.relu(conv(z, ei))
        xa = z
        for i, conv in enumerate(self.attr_dec):
            xa = conv(xa, ei)
            xa = F.relu(xa) if i < len(self.attr_dec) - 1 else xa
        zs = F.relu(self.struct_dec(z, ei))
        return xa, torch.sigmoid(zs @ zs.T)  # (N, F), (N, N) dense: the cost GADAM avoids


class DominantAE:
    """DOMINANT-style GCN autoencoder; ``fit(data)`` sets ``decision_score_``."""

    def __init__(self, hidden=64, layers=4, lr=4e-3, epochs=100, weight=0.5, device="cpu"):
        self.hidden, self.layers, self.lr, self.epochs = hidden, layers, lr, epochs
        self.weight, self.device = weight, torch.device(device)

    def fit(self, data):
        x, ei = _inputs(data, self.device)
        n = x.shape[0]
        adj = torch.zeros(n, n, device=self.device)
        adj[ei[0], ei[1]] = 1.0
        net = _DominantNet(x.shape[1], self.hidden, self.layers).to(self.device)
        opt = torch.optim.Adam(net.parameters(), lr=self.lr)
        for _ in range(self.epochs):
            xa, a = net(x, ei)
            score = self._score(x, adj, xa, a)
            loss = score.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            self.decision_score_ = self._score(x, adj, *net(x, ei)).cpu().numpy()
        return self

    def _score(self, x, adj, xa, a):
        attr = (x - xa).pow(2).sum(1).sqrt()
        struct = (adj - a).pow(2).sum(1).sqrt()
        return self.weight * attr + (1 - self.weight) * struct


def random_walk_subgraphs(ei, n, size, gen, device="cpu") -> torch.Tensor:
    """(N, size) node ids: each node followed by ``size - 1`` nodes visited by a random walk
    with restart (p=0.5 back to the start) from it; isolated nodes repeat themselves."""
    src, dst = ei
    order = torch.argsort(src)
    src, dst = src[order], dst[order]
    deg = torch.bincount(src, minlength=n)
    ptr = torch.cat([torch.zeros(1, dtype=torch.long, device=device), deg.cumsum(0)])
    start = torch.arange(n, device=device)
    cur, out = start.clone(), [start]
    for _ in range(size - 1):  # a loop over walk steps, vectorised over all nodes
        d = deg[cur]
        r = (torch.rand(n, generator=gen, device=device) * d.clamp(min=1)).long()
        nxt = torch.where(
            d > 0, dst[(ptr[cur] + r).clamp(max=max(len(dst) - 1, 0))] if len(dst) else cur, cur
        )
        restart = torch.rand(n, generator=gen, device=device) < 0.5
        cur = torch.where(restart, start, nxt)
        out.append(nxt)
    return torch.stack(out, 1)


class ColaDetector:
    """CoLA-style contrastive detector; ``fit(data)`` sets ``decision_score_``.

    Defaults from the CoLA paper: embedding 64, subgraph size 4, lr 1e-3, 100 epochs;
    test rounds 64 (CoLA uses 256; fewer here for CPU time).
    """

    def __init__(
        self, hidden=64, subgraph_size=4, lr=1e-3, epochs=100, rounds=64, device="cpu", seed=0
    ):
        self.hidden, self.size, self.lr, self.epochs, self.rounds = (
            hidden,
            subgraph_size,
            lr,
            epochs,
            rounds,
        )
        self.device, self.seed = torch.device(device), seed

    def _logits(self, x, sub, perm):
        h = self.act(self.lin(x))  # (N, hidden) per-node embedding, shared by target and context
        # CoLA masks the target's own features in its subgraph: its slot embeds a zero vector
        masked = self.act(self.lin.bias)[None, :]  # (1, hidden)
        readout = (masked + h[sub[:, 1:]].sum(1)) / sub.shape[1]  # (N, hidden)
        pos = self.bil(h, readout).squeeze(1)
        neg = self.bil(h, readout[perm]).squeeze(1)
        return pos, neg

    def fit(self, data):
        x, ei = _inputs(data, self.device)
        n = x.shape[0]
        gen = torch.Generator(device=self.device).manual_seed(self.seed)
        torch.manual_seed(self.seed)
        self.lin, self.act = (
            nn.Linear(x.shape[1], self.hidden).to(self.device),
            nn.PReLU().to(self.device),
        )
        self.bil = nn.Bilinear(self.hidden, self.hidden, 1).to(self.device)
        params = [*self.lin.parameters(), *self.act.parameters(), *self.bil.parameters()]
        opt = torch.optim.Adam(params, lr=self.lr)
        for _ in range(self.epochs):
            sub = random_walk_subgraphs(ei, n, self.size, gen, self.device)
            perm = (
                torch.arange(n, device=self.device)
                + torch.randint(1, n, (n,), generator=gen, device=self.device)
            ) % n
            pos, neg = self._logits(x, sub, perm)
            loss = F.binary_cross_entropy_with_logits(
                pos, torch.ones_like(pos)
            ) + F.binary_cross_entropy_with_logits(neg, torch.zeros_like(neg))
            opt.zero_grad()
            loss.backward()
            opt.step()
        score = torch.zeros(n, device=self.device)
        with torch.no_grad():
            for _ in range(self.rounds):
                sub = random_walk_subgraphs(ei, n, self.size, gen, self.device)
                perm = (
                    torch.arange(n, device=self.device)
                    + torch.randint(1, n, (n,), generator=gen, device=self.device)
                ) % n
                pos, neg = self._logits(x, sub, perm)
                score += torch.sigmoid(neg) - torch.sigmoid(pos)
        self.decision_score_ = (score / self.rounds).cpu().numpy()
        return self
