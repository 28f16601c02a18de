"""CoLA: "Anomaly Detection on Attributed Networks via Contrastive Self-Supervised Learning",
Liu, Li, Pan, Gong, Zhou & Karypis, TNNLS 2021 (arXiv 2103.00113), a port of the official
code (GRAND-Lab/CoLA: ``run.py``, ``model.py``, ``utils.py``; PyGOD's first CoLA port,
``pygod/models/cola.py``, keeps the same sampling and defaults).

Every target node i is contrasted with a small subgraph around it:

    subgraph  RWR from i: the first ``size - 1`` distinct nodes visited, then i itself
    A_s       the rows/columns of  D^-1/2 A D^-1/2 + I  for those nodes        (size, size)
    X_s       their features, the target's own row zeroed (it is "anonymised")
    H         = PReLU(A_s X_s W + b)     a one-layer GCN over the subgraph's adjacency
    c         = mean of H's rows         readout of the subgraph
    e         = PReLU(x_i W + b)         the target alone (an extra row with a self-loop)
    pos       = e^T B c + b',  neg = e^T B c'   (c': another target's readout in the batch)
    L         = BCE(pos, 1) + BCE(neg, 0)

trained on batches of 300 targets with fresh subgraphs every epoch; the best-loss epoch is
kept and the anomaly score is the mean over 256 rounds (fresh subgraphs and batches) of
sigmoid(neg) - sigmoid(pos).
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .gadam import prepare_edges

CONTEXT_DRAWS = 3  # utils.generate_rwr_subgraph: max_nodes_per_seed = subgraph_size * 3
RETRY_VISITS = 5  # ... retries with restart_prob 0.9 and max_nodes_per_seed = subgraph_size * 5
RETRY_RESTART = 0.9
RETRIES = 11  # ... `while len < reduced_size` with `retry_time > 10` before padding


@dataclass(frozen=True)
class ColaConfig:
    """Hyper-parameters; defaults are the official ``run.py`` values for Cora / CiteSeer /
    PubMed (``for_dataset`` gives the other datasets')."""

    hidden: int = 64
    """Embedding width (run.py --embedding_dim 64)."""
    subgraph_size: int = 4
    """Nodes per RWR subgraph, target included (run.py --subgraph_size 4)."""
    batch_size: int = 300
    """Target nodes per step (run.py --batch_size 300)."""
    lr: float = 1e-3
    """Adam learning rate (run.py: 1e-3 on Cora, CiteSeer, PubMed, Flickr)."""
    epochs: int = 100
    """Training epochs (run.py: 100 on Cora, CiteSeer, PubMed)."""
    test_rounds: int = 256
    """Scoring rounds averaged (run.py --auc_test_rounds 256)."""
    weight_decay: float = 0.0
    """Adam weight decay (run.py --weight_decay 0.0)."""

    @classmethod
    def for_dataset(cls, name: str, **overrides) -> ColaConfig:
        """run.py's per-dataset settings: ACM lr 5e-4, BlogCatalog lr 3e-3; 400 epochs on
        ACM, BlogCatalog and Flickr."""
        key = name.lower()
        base = {}
        if key in ("acm", "blogcatalog", "flickr"):
            base = {"epochs": 400, "lr": {"acm": 5e-4, "blogcatalog": 3e-3}.get(key, 1e-3)}
        return replace(cls(), **{**base, **overrides})


# ---------------------------------------------------------------- sampling


def out_csr(edge_index: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Neighbour CSR of a coalesced edge list (sorted by source, then target): the
    neighbours of i are nbr[ptr[i]:ptr[i+1]], in ascending order whatever the input order."""
    ei = prepare_edges(edge_index, n)  # sorted and unique: the CSR does not depend on edge order
    ptr = torch.zeros(n + 1, dtype=torch.long)
    ptr[1:] = torch.bincount(ei[0], minlength=n).cumsum(0)
    return ptr, ei[1]


def _step(cur: torch.Tensor, ptr, nbr, gen) -> torch.Tensor:
    """One random-walk step from each node of ``cur`` (any shape); -1 where it has no neighbour."""
    deg = ptr[cur + 1] - ptr[cur]
    r = (torch.rand(cur.shape, generator=gen) * deg).long()
    nxt = nbr[(ptr[cur] + r).clamp(max=max(len(nbr) - 1, 0))] if len(nbr) else cur
    return torch.where(deg > 0, nxt, torch.full_like(cur, -1))


@functools.cache
def _earlier(length: int) -> torch.Tensor:
    """(L, L) mask of the positions before each position."""
    return torch.ones(length, length, dtype=torch.bool).tril(-1)


def _first_distinct(visits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``k`` distinct non-negative entries of each row in visit order (-1 padded),
    and how many there are. visits: (m, L) -> (m, k), (m,)"""
    m, length = visits.shape
    same = visits[:, :, None] == visits[:, None, :]  # (m, L, L)
    new = (visits >= 0) & ~(same & _earlier(length)).any(2)
    rank = new.cumsum(1)  # 1-based rank of each new node
    out = torch.full((m, k), -1, dtype=torch.long)
    rows, cols = torch.nonzero(new & (rank <= k), as_tuple=True)
    out[rows, rank[rows, cols] - 1] = visits[rows, cols]
    return out, new.sum(1).clamp(max=k)


class RWRSampler:
    """CoLA's RWR subgraphs (utils.generate_rwr_subgraph); ``sampler(gen)`` -> (N, size)
    node ids, the target last.

    3 * size one-step walks (restart probability 1) give each node its context: the first
    size - 1 distinct nodes. A node with fewer retries up to 11 times, each retry a fresh
    walk restarting with probability 0.9 over 5 * size visits (it can reach 2-hop nodes and
    the target itself) that replaces the last one; what is still short after that is
    repeated cyclically. A node whose connected component has fewer than size - 1 nodes
    cannot succeed, so only its last retry, the one that counts, is drawn. Our choices: the
    first distinct nodes are taken in visit order (the official code slices
    ``torch.unique(sorted=False)``, an order set by a hash table), and an isolated node, on
    which the official sampler fails, is its own context.
    """

    def __init__(self, edge_index: torch.Tensor, n: int, size: int):
        import scipy.sparse as sp
        from scipy.sparse.csgraph import connected_components

        self.ptr, self.nbr = out_csr(edge_index.cpu(), n)
        self.n, self.size, self.k = n, size, size - 1
        adj = sp.csr_matrix((np.ones(len(self.nbr)), self.nbr.numpy(), self.ptr.numpy()), (n, n))
        _, comp = connected_components(adj, directed=False)
        self.can_fill = torch.from_numpy(np.bincount(comp)[comp] >= self.k)  # (N,)

    def _walks(self, start, gen):
        """One retry walk from each node of ``start``: its first distinct nodes and count."""
        cur, visits = start.clone(), torch.full((len(start), RETRY_VISITS * self.size), -1)
        for t in range(visits.shape[1]):  # a loop over walk steps, vectorised over walks
            nxt = _step(cur, self.ptr, self.nbr, gen)
            visits[:, t] = nxt
            restart = (torch.rand(len(start), generator=gen) < RETRY_RESTART) | (nxt < 0)
            cur = torch.where(restart, start, nxt)
        return _first_distinct(visits, self.k)

    def __call__(self, gen: torch.Generator) -> torch.Tensor:
        n, k = self.n, self.k
        nodes = torch.arange(n)
        draws = _step(nodes[:, None].expand(n, CONTEXT_DRAWS * self.size), self.ptr, self.nbr, gen)
        ctx, count = _first_distinct(draws, k)
        short = (count < k) & (self.ptr[1:] > self.ptr[:-1])  # isolated nodes: nothing to walk
        todo = torch.nonzero(short & self.can_fill).flatten()
        hopeless = torch.nonzero(short & ~self.can_fill).flatten()
        # a node that cannot succeed walks once: its last retry, the one that counts
        first = torch.cat([todo, hopeless])
        if len(first):
            ctx[first], count[first] = self._walks(first, gen)
        todo = todo[count[todo] < k]
        if len(todo):  # the other 10 retries of the few still short, at once; the first success
            r_ctx, r_count = self._walks(todo.repeat_interleave(RETRIES - 1), gen)  # is kept
            ok = (r_count >= k).view(len(todo), RETRIES - 1)
            pick = torch.where(ok.any(1), ok.float().argmax(1), RETRIES - 2)
            rows = torch.arange(len(todo)) * (RETRIES - 1) + pick
            ctx[todo], count[todo] = r_ctx[rows], r_count[rows]
        # pad the short ones by repeating their distinct nodes (the node itself when it has none)
        fill = torch.arange(k)[None, :] % count.clamp(min=1)[:, None]
        padded = torch.gather(torch.where(ctx >= 0, ctx, nodes[:, None]), 1, fill)
        ctx = torch.where(count[:, None] >= k, ctx, padded)
        return torch.cat([ctx, nodes[:, None]], 1)


# ---------------------------------------------------------------- the model


class _Adjacency:
    """Entries of  D^-1/2 A D^-1/2 + I  looked up for node pairs (official normalize_adj + eye),
    without the dense N x N matrix."""

    def __init__(self, ptr, nbr, n):
        src = torch.repeat_interleave(torch.arange(n), ptr[1:] - ptr[:-1])
        self.keys = src * n + nbr  # sorted: the CSR is coalesced
        deg = (ptr[1:] - ptr[:-1]).float()
        self.dinv = torch.where(deg > 0, deg.rsqrt(), torch.zeros_like(deg))
        self.n = n

    def __call__(self, sub: torch.Tensor) -> torch.Tensor:
        """sub (B, s) -> (B, s, s): A_hat[sub[b, i], sub[b, j]]."""
        u, v = sub[:, :, None], sub[:, None, :]
        q = u * self.n + v  # (B, s, s) pair keys
        edge = torch.zeros(q.shape, dtype=torch.bool)
        if len(self.keys):
            pos = torch.searchsorted(self.keys, q.flatten()).clamp(max=len(self.keys) - 1)
            edge = (self.keys[pos] == q.flatten()).view(q.shape)
        return edge.float() * self.dinv[u] * self.dinv[v] + (u == v).float()


class _Features:
    """X W^T for chosen rows. Bag-of-words features (under 10% non-zero) go through a sparse
    product: the same numbers, several times faster than gathering dense rows."""

    def __init__(self, x: torch.Tensor):
        self.x = x
        self.sparse = bool((x != 0).sum() < 0.1 * x.numel())
        if self.sparse:
            rows, self.col = x.nonzero(as_tuple=True)  # row-major: a CSR
            self.val = x[rows, self.col]
            self.ptr = torch.zeros(x.shape[0] + 1, dtype=torch.long, device=x.device)
            self.ptr[1:] = torch.bincount(rows, minlength=x.shape[0]).cumsum(0)

    def project(self, rows: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """rows (R,) -> (R, H) = x[rows] @ weight.T"""
        if not self.sparse:
            return F.linear(self.x.index_select(0, rows), weight)
        start, cnt = self.ptr[rows], self.ptr[rows + 1] - self.ptr[rows]
        first = torch.repeat_interleave(start - (cnt.cumsum(0) - cnt), cnt)
        pos = first + torch.arange(len(first), device=rows.device)
        r = torch.repeat_interleave(torch.arange(len(rows), device=rows.device), cnt)
        coo = torch.sparse_coo_tensor(torch.stack([r, self.col[pos]]), self.val[pos],
                                      (len(rows), self.x.shape[1]), check_invariants=False,
                                      is_coalesced=True)  # rows, then columns: sorted, unique  # fmt: skip
        return torch.sparse.mm(coo, weight.t())


class _ColaNet(nn.Module):
    def __init__(self, in_dim: int, hidden: int):
        super().__init__()
        self.fc = nn.Linear(in_dim, hidden, bias=False)  # model.GCN: fc without bias, + bias
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.act = nn.PReLU()
        self.disc = nn.Bilinear(hidden, hidden, 1)  # model.Discriminator
        nn.init.xavier_uniform_(self.fc.weight)
        nn.init.xavier_uniform_(self.disc.weight)
        nn.init.zeros_(self.disc.bias)

    def embed(self, xw_sub, adj, xw_target):
        """xw_sub (B, s, H): the subgraph's X W with the target's row zeroed; adj (B, s, s);
        xw_target (B, H). Returns the readout c (B, H) and the target embedding e (B, H)."""
        h = self.act(torch.bmm(adj, xw_sub) + self.bias)
        e = self.act(xw_target + self.bias)  # the extra row: only its self-loop
        return h.mean(1), e

    def logits(self, c, e, neg_idx):
        pos = self.disc(e, c).squeeze(1)
        neg = self.disc(e, c.index_select(0, neg_idx)).squeeze(1)
        return pos, neg


def _negatives(sizes: list[int]) -> torch.Tensor:
    """model.Discriminator's negative pairing inside each batch: c_mi = cat(c[-2:-1], c[:-1]),
    i.e. target 0 meets the readout of target B-2 and target j that of target j-1."""
    out, start = [], 0
    for b in sizes:
        first = torch.tensor([(b - 2) % b])
        out.append(start + torch.cat([first, torch.arange(b - 1)]))
        start += b
    return torch.cat(out)


class CoLA:
    """CoLA as a PyGOD-style detector: ``fit(data)`` sets ``decision_score_`` (N,), higher =
    more anomalous, and ``losses_`` (per epoch)."""

    def __init__(self, config: ColaConfig | None = None, *, device="cpu", seed=None, **overrides):
        self.config = replace(config or ColaConfig(), **overrides)
        self.device, self.seed = torch.device(device), seed

    def _batches(self, n, gen):
        """A fresh shuffle of all nodes in batches of batch_size (run.py: random.shuffle)."""
        order = torch.randperm(n, generator=gen)
        return [b for b in order.split(self.config.batch_size) if len(b)]

    def _forward(self, net, feats, adj, sub, batch):
        """Logits (pos, neg) of one batch of targets; sampling stays on the CPU."""
        s = sub[batch]  # (B, size): context..., target
        xw = feats.project(s.flatten().to(feats.x.device), net.fc.weight).view(*s.shape, -1)
        return self._logits(net, xw, adj(s).to(xw.device), [len(batch)])

    @staticmethod
    def _logits(net, xw, a_sub, sizes):
        """xw (B, size, H): X W of the subgraph nodes, the target last; a_sub (B, size, size)."""
        xw_sub = torch.cat([xw[:, :-1], torch.zeros_like(xw[:, -1:])], 1)  # target anonymised
        c, e = net.embed(xw_sub, a_sub, xw[:, -1])
        return net.logits(c, e, _negatives(sizes).to(xw.device))

    def fit(self, data):
        cfg = self.config
        x = data.x.float()
        s = x.sum(1, keepdim=True)  # utils.preprocess_features: row-normalised features
        x = (x / torch.where(s > 0, s, torch.ones_like(s)) if (x >= 0).all() else x).to(self.device)
        n = x.shape[0]
        sampler = RWRSampler(data.edge_index.long(), n, cfg.subgraph_size)
        adj = _Adjacency(sampler.ptr, sampler.nbr, n)
        gen = torch.Generator().manual_seed(0 if self.seed is None else self.seed)
        if self.seed is not None:
            torch.manual_seed(self.seed)
        net = _ColaNet(x.shape[1], cfg.hidden).to(self.device)
        feats = _Features(x)
        opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        best, best_state, self.losses_, self.steps_ = math.inf, None, [], 0
        for _ in range(cfg.epochs):
            sub = sampler(gen)
            total = 0.0
            for batch in self._batches(n, gen):
                pos, neg = self._forward(net, feats, adj, sub, batch)
                loss = F.binary_cross_entropy_with_logits(
                    torch.cat([pos, neg]), torch.cat([torch.ones_like(pos), torch.zeros_like(neg)])
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
                self.steps_ += 1
                total += loss.item() * len(batch)
            self.losses_.append(total / n)
            if self.losses_[-1] < best:  # run.py keeps the best-loss epoch for testing
                best, best_state = self.losses_[-1], copy.deepcopy(net.state_dict())
        net.load_state_dict(best_state)
        self.decision_score_ = self._score(net, x, adj, sampler, gen)
        return self

    @torch.no_grad()
    def _score(self, net, x, adj, sampler, gen) -> np.ndarray:
        """Mean over test_rounds of sigmoid(neg) - sigmoid(pos), each round with fresh
        subgraphs and batches (run.py's test loop)."""
        cfg = self.config
        xw_all = net.fc(x)  # the weights are fixed now: X W once for every node
        score = torch.zeros(sampler.n, device=self.device)
        for _ in range(cfg.test_rounds):  # every batch of a round at once
            sub = sampler(gen)
            batches = self._batches(sampler.n, gen)
            order = torch.cat(batches)
            s = sub[order]
            xw = xw_all.index_select(0, s.flatten().to(x.device)).view(*s.shape, -1)
            pos, neg = self._logits(net, xw, adj(s).to(x.device), [len(b) for b in batches])
            score.index_add_(0, order.to(x.device), torch.sigmoid(neg) - torch.sigmoid(pos))
        return (score / cfg.test_rounds).cpu().numpy()
