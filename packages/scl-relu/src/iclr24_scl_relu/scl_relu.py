"""Symmetric Neural-Collapse Representations with Supervised Contrastive Loss: The Impact of
ReLU and Batching (Kini, Vakilian, Behnia, Gill & Thrampoulidis, ICLR 2024).
https://arxiv.org/abs/2306.07960 (no official code is public).

Notation: n examples with labels y_i in [k], embeddings h_i = f(x_i) / ||f(x_i)|| in R^d,
temperature tau. For a batch B and an anchor i with n_{B,y_i} - 1 >= 1 positives in B, the
supervised contrastive loss (SCL) of the paper is

    L_B(H) = sum_{i in B} 1/(n_{B,y_i} - 1) sum_{j in B, j != i, y_j = y_i}
             -log( exp(h_i.h_j / tau) / sum_{l in B, l != i} exp(h_i.h_l / tau) )   (eq. 1)

(anchors without a positive in B are skipped) and the training loss is sum_B L_B(H).

* UFM: the unconstrained-features model treats the normalised h_i as free variables.
  Balanced, its minimisers are a simplex ETF; imbalanced, they are not symmetric.
* UFM+: the same with h_i >= 0 entry-wise, the model of a ReLU on the last layer.
  Thm 1: every global minimiser is an orthogonal frame (OF): h_i = h_j for y_i = y_j and
  h_i . h_j = 0 otherwise, whatever the class sizes (needs d >= k).
* Mini-batches (Thm 2): the OF is the unique minimiser of sum_B L_B only under a condition
  on the batches (:func:`batch_graph_condition`); batch-binding (the same k examples, one per
  class, appended to every batch, :class:`BatchBindingSampler`) guarantees it.

``SupConLoss`` is the loss of the reference implementation (HobbitLong/SupContrast,
``losses.py``: multi-view features, labels or mask, temperature / base_temperature).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from torch import Tensor, nn


# ------------------------------------------------------------------ helpers
def normalize_rows(z: Tensor, eps: float = 1e-12) -> Tensor:
    """z / ||z|| along the last axis; an all-zero row stays zero (a dead ReLU embedding)."""
    return z / z.norm(dim=-1, keepdim=True).clamp_min(eps)


def project_nonneg_sphere(z: Tensor) -> Tensor:
    """Euclidean projection of each row onto {h >= 0, ||h|| = 1}: relu(z) / ||relu(z)||,
    and e_argmax(z) for a row with no positive entry (its nearest feasible point).

    z: (n, d) -> (n, d)"""
    p = z.clamp(min=0)
    dead = p.amax(dim=-1) <= 0
    if dead.any():
        p[dead] = nn.functional.one_hot(z[dead].argmax(-1), z.shape[-1]).to(z.dtype)
    return normalize_rows(p)


def label_mask(labels: Tensor) -> Tensor:
    """mask[..., i, j] = labels_i == labels_j. labels: (..., b) -> (..., b, b) bool"""
    return labels[..., :, None] == labels[..., None, :]


# ------------------------------------------------------------------ the losses
def contrast_masks(labels: Tensor, valid: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """What eq. (1) needs of the labels alone (reusable across steps).
    labels: (..., b), valid: (..., b) bool or None -> others (..., b, b) bool (l != i, both
    valid), positives (..., b, b) bool (y_j = y_i among others), n_pos (..., b)."""
    b = labels.shape[-1]
    others = ~torch.eye(b, dtype=torch.bool, device=labels.device)
    if valid is not None:
        others = others & valid[..., None, :] & valid[..., :, None]
    positives = label_mask(labels) & others
    return others, positives, positives.sum(-1)


def scl_loss(
    h: Tensor,
    labels: Tensor,
    temperature: float,
    valid: Tensor | None = None,
    reduction: str = "sum",
    masks: tuple[Tensor, Tensor, Tensor] | None = None,
) -> Tensor:
    """Eq. (1) on one batch or a stack of batches; anchors without a positive are skipped.

    h: (..., b, d) embeddings (normalised by the caller), labels: (..., b),
    valid: (..., b) bool, False for padding (batches of unequal size).
    reduction: "sum" (the paper's sum over anchors and batches) or "mean" (per anchor).
    masks: ``contrast_masks(labels, valid)``, when the caller reuses them.
    """
    if reduction not in ("sum", "mean"):
        raise ValueError(f"reduction must be sum or mean, got {reduction!r}")
    others, positives, n_pos = masks if masks is not None else contrast_masks(labels, valid)
    logits = (h @ h.transpose(-1, -2) / temperature).masked_fill(~others, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    # an anchor without positives has an all-zero row here: it adds nothing
    total = -(log_prob.masked_fill(~positives, 0.0).sum(-1) / n_pos.clamp_min(1)).sum()
    if reduction == "sum":
        return total
    return total / (n_pos > 0).sum().clamp_min(1)


def supcon_loss(
    features: Tensor,
    labels: Tensor | None = None,
    mask: Tensor | None = None,
    *,
    temperature: float = 0.07,
    base_temperature: float = 0.07,
    contrast_mode: str = "all",
) -> Tensor:
    """The SupCon loss with the semantics of HobbitLong/SupContrast ``losses.py``.

    features: (bsz, n_views, ...) (normalised by the caller); labels: (bsz,) or mask:
    (bsz, bsz) with mask[i, j] = 1 when j is a positive of i (may be asymmetric or weighted);
    neither gives SimCLR (the other views of the same example are the positives).
    contrast_mode "all": every view is an anchor; "one": only view 0.
    Returns -(temperature / base_temperature) * the mean over anchors of the mean
    log-probability of their positives; an anchor with no positive adds 0 to that mean
    (upstream's fix for single-view batches). Defaults: temperature = base_temperature = 0.07.
    """
    if features.dim() < 3:
        raise ValueError("features must be (bsz, n_views, ...): at least 3 dimensions")
    features = features.flatten(2)
    bsz, n_views = features.shape[:2]
    if labels is not None and mask is not None:
        raise ValueError("give labels or mask, not both")
    if mask is None:
        if labels is None:
            mask = torch.eye(bsz, device=features.device)
        else:
            labels = labels.reshape(-1)
            if labels.numel() != bsz:
                raise ValueError(f"{labels.numel()} labels for {bsz} feature rows")
            mask = label_mask(labels).float()
    mask = mask.float().to(features.device)
    if contrast_mode not in ("all", "one"):
        raise ValueError(f"contrast_mode must be all or one, got {contrast_mode!r}")
    contrast = features.transpose(0, 1).reshape(n_views * bsz, -1)  # view-major: (V*bsz, D)
    anchor = contrast if contrast_mode == "all" else features[:, 0]
    n_anchor = anchor.shape[0]
    not_self = torch.ones(n_anchor, n_views * bsz, dtype=torch.bool, device=features.device)
    not_self[torch.arange(n_anchor), torch.arange(n_anchor)] = False
    logits = (anchor @ contrast.T / temperature).masked_fill(~not_self, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    pos = mask.repeat(n_anchor // bsz, n_views) * not_self
    n_pos = pos.sum(1)
    n_pos = torch.where(n_pos < 1e-6, torch.ones_like(n_pos), n_pos)
    mean_log_prob_pos = (pos * log_prob.masked_fill(~not_self, 0.0)).sum(1) / n_pos
    return -(temperature / base_temperature) * mean_log_prob_pos.mean()


class SupConLoss(nn.Module):
    """``SupConLoss(temperature)(features, labels=None, mask=None)``: see :func:`supcon_loss`."""

    def __init__(
        self, temperature: float = 0.07, contrast_mode: str = "all", base_temperature: float = 0.07
    ):
        super().__init__()
        self.temperature, self.contrast_mode = temperature, contrast_mode
        self.base_temperature = base_temperature

    def forward(self, features: Tensor, labels: Tensor | None = None, mask: Tensor | None = None):
        return supcon_loss(features, labels, mask, temperature=self.temperature,
                           base_temperature=self.base_temperature,
                           contrast_mode=self.contrast_mode)  # fmt: skip


# ------------------------------------------------------------------ UFM and UFM+
def pad_batches(batches: Sequence[Sequence[int]]) -> tuple[Tensor, Tensor]:
    """Batches of unequal size as one (n_batches, max_size) index tensor and its valid mask."""
    width = max(len(b) for b in batches)
    index = torch.zeros(len(batches), width, dtype=torch.long)
    valid = torch.zeros(len(batches), width, dtype=torch.bool)
    for r, b in enumerate(batches):
        index[r, : len(b)] = torch.as_tensor(list(b), dtype=torch.long)
        valid[r, : len(b)] = True
    return index, valid


class UFM:
    """Unconstrained features on the unit sphere, fitted by projected gradient descent on
    sum_B L_B (eq. 1). ``nonneg=True`` is UFM+ (the ReLU model): each step is followed by
    the projection onto {h >= 0, ||h|| = 1}. (Parameterising h = relu(z)/||relu(z)|| instead
    leaves dead coordinates without gradient.) Example: ``ufm = UFMPlus(n=40, dim=8, seed=0);
    ufm.fit(labels, steps=200, lr=0.1, temperature=0.2)``; the embeddings are ``ufm.H``.
    """

    nonneg = False

    def __init__(self, n: int, dim: int, seed: int = 0, dtype=torch.float32, device="cpu"):
        g = torch.Generator().manual_seed(seed)
        z = torch.randn(n, dim, generator=g, dtype=dtype).to(device)
        self.H = self.project(z)  # (n, d)

    def project(self, z: Tensor) -> Tensor:
        return project_nonneg_sphere(z) if self.nonneg else normalize_rows(z)

    def loss(self, labels, temperature: float, batches=None) -> Tensor:
        """sum_B L_B(H) over ``batches`` (index lists; None: the full batch)."""
        labels = torch.as_tensor(labels, device=self.H.device)
        padded = (
            None if batches is None else tuple(t.to(self.H.device) for t in pad_batches(batches))
        )
        return self._loss(labels, temperature, padded)

    def _loss(self, labels: Tensor, temperature: float, padded, masks=None) -> Tensor:
        if padded is None:
            return scl_loss(self.H, labels, temperature, masks=masks)
        index, valid = padded
        return scl_loss(self.H[index], labels[index], temperature, valid=valid, masks=masks)

    def fit(
        self,
        labels: Tensor,
        *,
        steps: int,
        lr: float,
        temperature: float,
        batches: Sequence[Sequence[int]] | None = None,
        callback=None,
    ) -> float:
        """Projected gradient descent from the random start; returns the final loss.
        ``batches``: fixed index lists (the whole set when None). ``callback(step, loss)``
        is called after every step (progress bars, curves)."""
        labels = torch.as_tensor(labels, device=self.H.device)
        padded = None
        if batches is not None:
            padded = tuple(t.to(self.H.device) for t in pad_batches(batches))
        masks = (
            contrast_masks(labels)
            if padded is None
            else contrast_masks(labels[padded[0]], padded[1])
        )
        H = self.H.clone().requires_grad_(True)
        self.H = H
        for step in range(steps):
            loss = self._loss(labels, temperature, padded, masks)
            (grad,) = torch.autograd.grad(loss, H)
            with torch.no_grad():
                H.copy_(self.project(H - lr * grad))
            if callback is not None:
                callback(step, float(loss.detach()))
        self.H = H.detach()
        with torch.no_grad():
            return float(self._loss(labels, temperature, padded))


class UFMPlus(UFM):
    """UFM+: unconstrained features with h >= 0 (the paper's model of a last-layer ReLU)."""

    nonneg = True


def of_loss_value(labels: Tensor, temperature: float, batches=None) -> float:
    """The loss at an orthogonal frame: h_i.h_j = 1 within a class, 0 across (Thm 1's minimum
    value for UFM+). An anchor of class c with n_c >= 2 contributes
    -1/tau + log((n_c - 1) e^{1/tau} + n - n_c). With ``batches`` (index lists) it is
    sum_B L_B at the OF, each batch by the same formula on its own counts: the minimum of the
    batched objective, since the OF minimises every L_B at once (Thm 1 on each batch), and
    the value every other global minimiser reaches when the batch-graph condition fails
    (Thm 2)."""
    labels = torch.as_tensor(labels).cpu()
    if batches is not None:
        return float(sum(of_loss_value(labels[list(b)], temperature) for b in batches))
    counts = torch.bincount(labels).double()
    n, inv = float(labels.numel()), 1.0 / temperature
    c = counts[counts >= 2]
    per = -inv + torch.log((c - 1) * np.exp(inv) + n - c)
    return float((c * per).sum())


# ------------------------------------------------------------------ batching
def bind(batches: Sequence[Sequence[int]], binding: Sequence[int]) -> list[list[int]]:
    """The same batches with the binding examples appended (those a batch already holds are
    not repeated)."""
    out = []
    for b in batches:
        held = set(b)
        out.append(list(b) + [i for i in binding if i not in held])
    return out


def binding_examples(labels, seed: int = 0) -> list[int]:
    """One example per class, drawn at random: the binding set. labels: (n,) -> (k,)"""
    labels = np.asarray(labels, dtype=np.int64)
    rng = np.random.default_rng(seed)
    return [int(rng.choice(np.flatnonzero(labels == c))) for c in np.unique(labels)]


class BatchBindingSampler(torch.utils.data.Sampler[list[int]]):
    """Batch-binding (Section 5.2): every mini-batch is a batch of the other examples plus the
    same k binding examples, one per class. A batch sampler: ``DataLoader(ds,
    batch_sampler=BatchBindingSampler(labels, batch_size=128))``.

    labels: (n,) ints in [0, k); batch_size counts the examples drawn besides the binding ones;
    binding: one index per class (default: one drawn at random per class with ``seed``);
    shuffle: reshuffle the other examples every epoch (else one fixed partition).
    The binding examples are not drawn again into the batches.
    """

    def __init__(
        self,
        labels: Sequence[int] | np.ndarray | Tensor,
        batch_size: int,
        *,
        binding: Sequence[int] | None = None,
        shuffle: bool = True,
        drop_last: bool = False,
        seed: int = 0,
    ):
        self.labels = np.asarray(labels, dtype=np.int64)
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        classes = np.unique(self.labels)
        if binding is None:
            binding = binding_examples(self.labels, seed)
        self.binding = [int(i) for i in binding]
        if sorted(self.labels[self.binding].tolist()) != classes.tolist():
            raise ValueError("binding must hold exactly one example of every class")
        self.pool = np.setdiff1d(np.arange(len(self.labels)), self.binding)
        self.batch_size, self.shuffle, self.drop_last = batch_size, shuffle, drop_last
        self.epoch, self.seed = 0, seed

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        full, rest = divmod(len(self.pool), self.batch_size)
        return full + (rest > 0 and not self.drop_last)

    def __iter__(self) -> Iterator[list[int]]:
        order = self.pool
        if self.shuffle:
            order = np.random.default_rng([self.seed, self.epoch]).permutation(self.pool)
            self.epoch += 1
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            if len(chunk) < self.batch_size and self.drop_last:
                return
            yield chunk.tolist() + self.binding


@dataclass(frozen=True)
class BatchGraph:
    """The batch-graph condition (Section 5.1) of a set of batches."""

    components: dict[int, int]
    """Per class c: connected components of G_c (vertices: the class's examples; an edge
    joins two of them that share a batch). Thm 2 needs 1 for every class."""
    pairs_missing: int
    """Class pairs (c, c') never in one batch where an example of c has a positive: no term
    of the loss then separates c from c', and the OF is not the unique minimiser."""
    unbatched: int
    """Examples in no batch at all (isolated vertices: never trained)."""

    @property
    def connected(self) -> bool:
        return all(v == 1 for v in self.components.values())

    @property
    def holds(self) -> bool:
        return self.connected and self.pairs_missing == 0


def batch_graph_condition(batches: Sequence[Sequence[int]], labels) -> BatchGraph:
    """Check the batch-graph condition of Thm 2 for a fixed set of batches.

    For each class c, G_c links two examples of c that share a batch (their loss terms pull
    them together): collapse of class c to one point is forced only if G_c is connected.
    The second count is our reading of what the orthogonality of two classes needs: some
    batch where c has an anchor with a positive and c' a negative (or the other way round).
    """
    labels = np.asarray(labels, dtype=np.int64)
    n, classes = len(labels), np.unique(labels)
    rows, cols, seen = [], [], np.zeros(n, dtype=bool)
    k = int(classes.max()) + 1
    meets = np.zeros((k, k), dtype=bool)  # meets[c, c']: c anchors with c' in the batch
    for batch in batches:
        b = np.unique(np.asarray(batch, dtype=np.int64))
        seen[b] = True
        yb = labels[b]
        order = np.argsort(yb, kind="stable")
        b, yb = b[order], yb[order]
        same = yb[1:] == yb[:-1]  # a chain through each class's members links them all
        rows.append(b[1:][same])
        cols.append(b[:-1][same])
        present, counts = np.unique(yb, return_counts=True)
        meets[np.ix_(present[counts >= 2], present)] = True
    r, c = np.concatenate(rows or [[]]), np.concatenate(cols or [[]])
    graph = coo_matrix((np.ones(len(r)), (r.astype(int), c.astype(int))), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    components = {int(cl): len(np.unique(comp[labels == cl])) for cl in classes}
    pair = meets | meets.T
    sub = pair[np.ix_(classes, classes)]
    missing = int((~sub[np.triu_indices(len(classes), 1)]).sum())
    return BatchGraph(components=components, pairs_missing=missing, unbatched=int((~seen).sum()))
