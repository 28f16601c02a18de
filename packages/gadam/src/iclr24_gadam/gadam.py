"""GADAM: Boosting Graph Anomaly Detection with Adaptive Message Passing.

Chen, Zhu, Yuan & Huang, ICLR 2024 (https://openreview.net/forum?id=CanomFZssu).
Official code (DGL): github.com/PasaLab/GADAM (`model.py`, `run.py`); this is a
torch-geometric port with the PyGOD detector API (`fit`, `decision_function`, `predict`).

Two stages, both full-batch:

1. Local inconsistency mining (LIM), an MLP with no message passing:
       h_i = normalize(PReLU(W x_i + b)),   m_i = mean_{j in N(i)} h_j
       pos_i = <h_i, m_i>,   neg_i = <h_i, m_{pi(i)}>      (pi: a derangement)
       L_local = BCE(pos, 1) + BCE(neg, 0)                 local score s_i = -pos_i
2. Global consistency discernment with hybrid-attention adaptive message passing:
   pseudo-labels from the local scores (top k_ano anomalous, bottom k_nor normal), a
   centre c = mean of the LIM embeddings of the pseudo-normal nodes, and a fresh encoder:
       pre_i  = 1 - sigmoid(standardise(mean_{j in N(i)} |pos_j - pos_i|))   (normal-node stats)
       post_i = <h_i, m_i>
       a_i    = beta_t pre_i + (1 - beta_t) post_i,   beta_t = 0.9^t (0 once below 0.1)
       h'_i   = a_i m_i + (1 - a_i) h_i,   g_i = <h'_i, c>
       L_global = BCE(g[normal], 1) + BCE(g[anomalous], 0)
   Final anomaly score: -(g_i + pos_i).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class GADAMConfig:
    """Hyper-parameters; defaults are the official `run.py` / `model.py` values."""

    hidden: int = 64
    """Embedding width (run.py --out-dim 64)."""
    local_lr: float = 1e-3
    """Adam learning rate of the LIM stage (run.py --local-lr)."""
    global_lr: float = 5e-4
    """Adam learning rate of the global stage (run.py --global-lr)."""
    local_epochs: int = 100
    """LIM training epochs (run.py --local-epochs)."""
    global_epochs: int = 50
    """Global-stage training epochs (run.py --global-epochs)."""
    weight_decay: float = 0.0
    """Adam weight decay (run.py --weight-decay)."""
    k_ano: float = 0.05
    """Fraction of nodes pseudo-labelled anomalous (run.py load_info_from_local ano_topk)."""
    k_nor: float = 0.3
    """Fraction of nodes pseudo-labelled normal (run.py nor_topk)."""
    beta: float = 0.9
    """Decay of the pre-attention weight, beta_t = beta^t (model.py GlobalModel.beta)."""
    beta_floor: float = 0.1
    """beta_t below this is set to 0 (model.py GlobalModel.forward)."""
    neighbour_weight: float = 1.0
    """Scale of the attention in h' = a w m + (1 - a w) h (model.py neigh_weight 1.0;
    model_mini.py 0.2)."""
    batch_size: int | None = None
    """None: full-batch training (run.py). An int: the mini-batch variant for large graphs
    (run_mini.py): batches of target nodes, each with its full 1-hop in-neighbourhood."""
    official_quirks: bool = True
    """True: as the official code, local scores and global scores come from the *last*
    epoch while the centre comes from the best-loss LIM checkpoint. False: every
    quantity comes from the best-loss checkpoint of its stage (consistent)."""
    pseudo_labels: str = "local"
    """Where the global stage's pseudo-labels come from: ``local`` (the method: the k_ano
    most and k_nor least locally inconsistent nodes, run.py load_info_from_local) or
    ``random`` (the no-op control: as many nodes of each kind drawn at random, so the global
    stage trains on no information from the local stage; the centre and the pre-attention's
    normal-node statistics come from the random "normal" nodes)."""

    def __post_init__(self):
        if self.pseudo_labels not in ("local", "random"):
            raise ValueError(f"pseudo_labels is local or random, not {self.pseudo_labels!r}")

    @classmethod
    def minibatch(cls, **overrides) -> GADAMConfig:
        """The official mini-batch settings for ogbn-arxiv-sized graphs (run_mini.py:
        lr 1e-4 for both stages, 1 local and 20 global epochs, batch 1024; model_mini.py:
        neighbour weight 0.2; k_ano 0.01 as the paper's ogbn-arxiv setting)."""
        base = dict(local_lr=1e-4, global_lr=1e-4, local_epochs=1, global_epochs=20,
                    batch_size=1024, neighbour_weight=0.2, k_ano=0.01)  # fmt: skip
        return cls(**{**base, **overrides})


# ---------------------------------------------------------------- graph helpers


def prepare_edges(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Coalesce (sort, de-duplicate) and drop self-loops: LIM compares a node with its
    *other* neighbours."""
    src, dst = edge_index
    keep = src != dst
    key = torch.unique(src[keep] * num_nodes + dst[keep])
    return torch.stack([key // num_nodes, key % num_nodes])


def neighbour_mean(h: torch.Tensor, edge_index: torch.Tensor, block: int = 1 << 25) -> torch.Tensor:
    """m_i = mean over incoming edges j -> i of h_j (DGL copy_u + mean); 0 for isolated nodes.

    h: (N, d), edge_index: (2, E) -> (N, d)
    """
    src, dst = edge_index
    n = h.shape[0]
    # the gathered messages h[src] are (E, d): on BlogCatalog's raw features (345k edges x
    # 8,189) that is 11 GB, so they are summed in blocks of edges, in the same order
    step = max(1, block // max(1, h.shape[1]))  # edges per block: ~block gathered numbers
    out = torch.zeros_like(h)
    for i in range(0, src.numel(), step):
        out = out.index_add(0, dst[i : i + step], h[src[i : i + step]])
    deg = torch.bincount(dst, minlength=n).clamp_(min=1).to(h.dtype)
    return out / deg[:, None]


def derangement(n: int, generator: torch.Generator | None = None, device=None) -> torch.Tensor:
    """A permutation-free shift with no fixed point: pi(i) = (i + r_i) mod n, r_i in [1, n)
    (official utils.idx_sample). Every node is paired with another node's neighbourhood."""
    if n < 2:
        raise ValueError("a derangement needs at least 2 nodes")
    r = torch.randint(1, n, (n,), generator=generator, device=device)
    return (torch.arange(n, device=device) + r) % n


class LIMEncoder(nn.Module):
    """Linear -> PReLU -> L2 row normalisation (official model.MLP), plus the neighbour mean."""

    def __init__(self, in_dim: int, hidden: int):
        super().__init__()
        self.lin = nn.Linear(in_dim, hidden)
        self.act = nn.PReLU()
        nn.init.xavier_normal_(self.lin.weight)  # run.py init_xavier

    def embed(self, x):
        return F.normalize(self.act(self.lin(x)), p=2, dim=1)  # (N, hidden)

    def forward(self, x, edge_index, nodes=None, csr=None):
        """(h, m) of every node, or with ``nodes`` (B,) of those nodes only, embedding just
        them and their in-neighbours (a 1-hop block, as DGL's full-neighbour sampler)."""
        if nodes is None:
            h = self.embed(x)
            return h, neighbour_mean(h, edge_index)
        ptr, src = csr if csr is not None else in_csr(edge_index, x.shape[0])
        deg = ptr[nodes + 1] - ptr[nodes]  # (B,)
        owner = torch.repeat_interleave(torch.arange(len(nodes), device=x.device), deg)
        first = torch.repeat_interleave(ptr[nodes] - deg.cumsum(0) + deg, deg)
        nbr = src[first + torch.arange(int(deg.sum()), device=x.device)]  # (sum deg,)
        block, inv = torch.unique(torch.cat([nodes, nbr]), return_inverse=True)
        h_block = self.embed(x[block])
        m = torch.zeros(len(nodes), h_block.shape[1], dtype=h_block.dtype, device=x.device)
        m.index_add_(0, owner, h_block[inv[len(nodes) :]])
        return h_block[inv[: len(nodes)]], m / deg.clamp(min=1).to(m.dtype)[:, None]


def in_csr(edge_index: torch.Tensor, n: int):
    """In-neighbour CSR: the sources of the edges into node i are src[ptr[i]:ptr[i+1]]."""
    src, dst = edge_index
    order = torch.argsort(dst, stable=True)
    ptr = torch.zeros(n + 1, dtype=torch.long, device=dst.device)
    ptr[1:] = torch.bincount(dst, minlength=n).cumsum(0)
    return ptr, src[order]


def pre_attention(pos: torch.Tensor, edge_index: torch.Tensor, normal_idx: torch.Tensor):
    """pre_i = 1 - sigmoid((d_i - mean_normal(d)) / std_normal(d)), d_i = mean_j |pos_j - pos_i|.

    A node whose local score differs from its neighbours' receives little of their message.
    Returns (N, 1).
    """
    d = neighbour_abs_diff(pos, edge_index)  # (N,)
    mu, sd = d[normal_idx].mean(), d[normal_idx].std()
    sd = sd if torch.isfinite(sd) and sd > 0 else torch.ones_like(sd)
    return (1 - torch.sigmoid((d - mu) / sd))[:, None]


def neighbour_abs_diff(pos: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
    """d_i = mean over incoming edges j -> i of |pos_j - pos_i| (0 for isolated nodes). (N,)"""
    src, dst = edge_index
    n = pos.shape[0]
    total = torch.zeros(n, dtype=pos.dtype, device=pos.device).index_add_(
        0, dst, (pos[src] - pos[dst]).abs()
    )
    return total / torch.bincount(dst, minlength=n).clamp_(min=1).to(pos.dtype)


def _bce(logits, target: float):
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


# ---------------------------------------------------------------- the detector


class GADAM:
    """GADAM as a PyGOD-style detector on a PyG ``Data`` (``x``, ``edge_index``).

    >>> det = GADAM(contamination=0.05).fit(data)
    >>> det.decision_score_          # (N,) higher = more anomalous
    >>> det.predict(data)            # (N,) 0/1 labels at the contamination threshold
    """

    def __init__(
        self,
        config: GADAMConfig | None = None,
        *,
        contamination: float = 0.1,
        device: str | torch.device = "cpu",
        seed: int | None = None,
        **overrides,
    ):
        if not 0 < contamination < 0.5:
            raise ValueError(f"contamination must be in (0, 0.5), got {contamination}")
        self.config = replace(config or GADAMConfig(), **overrides)
        self.contamination = contamination
        self.device = torch.device(device)
        self.seed = seed

    # -- batching: one "batch" of all nodes (run.py) or shuffled node batches (run_mini.py)
    def _batches(self, nodes: torch.Tensor, gen, shuffle: bool):
        bs = self.config.batch_size
        if bs is None:  # full batch: every node is embedded, losses pick their nodes
            return [None]
        if shuffle:
            nodes = nodes[torch.randperm(len(nodes), generator=gen, device=self.device)]
        return [b for b in nodes.split(bs) if len(b) > 1 or not shuffle]

    def _eval_nodes(self, fn):
        """Concatenate fn(batch) over all nodes in order (no gradients)."""
        with torch.no_grad():
            everyone = torch.arange(self._n, device=self.device)
            return torch.cat([fn(b) for b in self._batches(everyone, None, False)])

    def _pos(self, enc, x, ei, nodes):
        h, m = enc(x, ei, nodes, self._csr)
        return (h * m).sum(1)  # <h_i, m_i>

    # -- stage 1
    def _fit_local(self, x, ei, gen):
        cfg = self.config
        enc = LIMEncoder(x.shape[1], cfg.hidden).to(self.device)
        opt = torch.optim.Adam(enc.parameters(), lr=cfg.local_lr, weight_decay=cfg.weight_decay)
        best, best_state, losses = math.inf, None, []
        everyone = torch.arange(self._n, device=self.device)
        for _ in range(cfg.local_epochs):
            epoch_losses = []
            for nodes in self._batches(everyone, gen, shuffle=True):
                h, m = enc(x, ei, nodes, self._csr)
                pos = (h * m).sum(1)  # (B,) <h_i, m_i>
                neg = (h * m[derangement(len(h), gen, self.device)]).sum(1)
                loss = _bce(pos, 1.0) + _bce(neg, 0.0)
                opt.zero_grad()
                loss.backward()
                opt.step()
                epoch_losses.append(loss.item())
            losses.append(float(np.mean(epoch_losses)))
            if cfg.batch_size is None:
                last_pos = pos.detach()  # run.py: the last training forward's scores
            if losses[-1] < best:  # run.py / run_mini.py keep the best-loss checkpoint
                best, best_state = losses[-1], copy.deepcopy(enc.state_dict())
        if cfg.batch_size is not None:  # run_mini.py: an evaluation pass after the epoch
            last_pos = self._eval_nodes(lambda b: self._pos(enc, x, ei, b))
        enc.load_state_dict(best_state)
        with torch.no_grad():
            h_best = self._eval_nodes(lambda b: enc(x, ei, b, self._csr)[0])
            pos_best = self._eval_nodes(lambda b: self._pos(enc, x, ei, b))
        pos = last_pos if cfg.official_quirks else pos_best
        return enc, pos, h_best, losses

    # -- stage 2
    def _fit_global(self, x, ei, pos, h_local, gen):
        cfg = self.config
        n = x.shape[0]
        local_score = -pos
        n_ano, n_nor = max(1, int(n * cfg.k_ano)), max(2, int(n * cfg.k_nor))
        if cfg.pseudo_labels == "random":  # the no-op control: pseudo-labels that know nothing
            perm = torch.randperm(n, generator=gen, device=self.device)
            ano_idx, nor_idx = perm[:n_ano], perm[n_ano : n_ano + n_nor]
        else:
            ano_idx = torch.topk(local_score, n_ano).indices
            nor_idx = torch.topk(-local_score, n_nor).indices
        center = h_local[nor_idx].mean(0)  # (hidden,)
        pre = pre_attention(pos, ei, nor_idx)  # (N, 1)
        target = torch.full((n,), -1.0, device=self.device)
        target[nor_idx], target[ano_idx] = 1.0, 0.0  # pseudo-labels (-1: not trained on)
        train_idx = torch.cat([nor_idx, ano_idx])
        enc = LIMEncoder(x.shape[1], cfg.hidden).to(self.device)
        opt = torch.optim.Adam(enc.parameters(), lr=cfg.global_lr, weight_decay=cfg.weight_decay)
        best, best_state, best_epoch, losses = math.inf, None, 0, []
        for epoch in range(cfg.global_epochs):
            epoch_losses = []
            for nodes in self._batches(train_idx, gen, shuffle=True):
                scores = self._global_scores(enc, x, ei, pre, center, epoch, nodes)
                t = target if nodes is None else target[nodes]
                loss = _bce(scores[t == 1.0], 1.0) + _bce(scores[t == 0.0], 0.0)
                opt.zero_grad()
                loss.backward()
                opt.step()
                epoch_losses.append(loss.item())
            losses.append(float(np.mean(epoch_losses)))
            if cfg.batch_size is None:
                last_scores = scores.detach()
            if losses[-1] < best:
                best, best_state, best_epoch = losses[-1], copy.deepcopy(enc.state_dict()), epoch
        final_epoch = cfg.global_epochs - 1
        if not cfg.official_quirks:
            enc.load_state_dict(best_state)
            final_epoch = best_epoch
        if cfg.batch_size is not None or not cfg.official_quirks:
            last_scores = self._eval_nodes(
                lambda b: self._global_scores(enc, x, ei, pre, center, final_epoch, b)
            )
        self._state = dict(center=center, ano_idx=ano_idx, nor_idx=nor_idx, epoch=final_epoch)
        return enc, last_scores, losses

    def _beta(self, epoch: int) -> float:
        b = self.config.beta**epoch
        return 0.0 if b < self.config.beta_floor else b

    def _global_scores(self, enc, x, ei, pre, center, epoch, nodes=None):
        h, m = enc(x, ei, nodes, self._csr)
        post = (h * m).sum(1, keepdim=True)  # (B, 1) post-attention
        b = self._beta(epoch)
        attn = b * (pre if nodes is None else pre[nodes]) + (1 - b) * post
        a = attn * self.config.neighbour_weight
        h = a * m + (1 - a) * h  # adaptive message passing
        return h @ center  # (B,)

    # -- PyGOD API
    def fit(self, data, y=None):
        """Fit on a PyG ``Data``; sets ``decision_score_``, ``label_``, ``threshold_`` and the
        per-stage scores ``local_score_`` / ``global_score_``."""
        x, ei = self._inputs(data)
        gen = torch.Generator(device=self.device)
        if self.seed is not None:
            torch.manual_seed(self.seed)
            gen.manual_seed(self.seed)
        else:
            gen.seed()
        self._n = x.shape[0]
        self._csr = in_csr(ei, self._n) if self.config.batch_size is not None else None
        self.local_encoder_, pos, h_local, self.local_losses_ = self._fit_local(x, ei, gen)
        self.global_encoder_, g, self.global_losses_ = self._fit_global(x, ei, pos, h_local, gen)
        self.local_score_ = (-pos).cpu().numpy()
        self.global_score_ = (-g).cpu().numpy()
        self.decision_score_ = (-(g + pos)).cpu().numpy()
        self.threshold_ = float(np.quantile(self.decision_score_, 1 - self.contamination))
        self.label_ = (self.decision_score_ > self.threshold_).astype(np.int64)
        return self

    @torch.no_grad()
    def decision_function(self, data) -> np.ndarray:
        """Anomaly scores of the nodes of ``data`` with the fitted encoders (higher = more
        anomalous). On the training graph this recomputes the scores with the final weights."""
        self._check_fitted()
        x, ei = self._inputs(data)
        h, m = self.local_encoder_(x, ei)
        pos = (h * m).sum(1)
        pre = pre_attention(
            pos, ei, torch.topk(pos, max(2, int(len(pos) * self.config.k_nor))).indices
        )
        g = self._global_scores(
            self.global_encoder_, x, ei, pre, self._state["center"], self._state["epoch"]
        )
        return (-(g + pos)).cpu().numpy()

    def predict(self, data=None, return_score: bool = False):
        """0/1 labels (1 = anomaly) at the contamination threshold; ``data=None`` returns
        the training labels."""
        self._check_fitted()
        score = self.decision_score_ if data is None else self.decision_function(data)
        label = (score > self.threshold_).astype(np.int64)
        return (label, score) if return_score else label

    def _inputs(self, data):
        if getattr(data, "x", None) is None or getattr(data, "edge_index", None) is None:
            raise ValueError(
                "GADAM needs a PyG Data with node features `x` (N, F) and `edge_index` (2, E)"
            )
        x = data.x.float().to(self.device)
        if x.dim() != 2 or x.shape[0] < 2:
            raise ValueError(f"`x` must be (N >= 2, F), got {tuple(x.shape)}")
        ei = data.edge_index.long()
        if ei.numel() and (ei.min() < 0 or ei.max() >= x.shape[0]):
            raise ValueError(f"`edge_index` refers to nodes outside 0..{x.shape[0] - 1}")
        return x, prepare_edges(ei, x.shape[0]).to(self.device)

    def _check_fitted(self):
        if not hasattr(self, "decision_score_"):
            raise RuntimeError("call fit(data) first")
