"""Geometry of learned embeddings: the class-mean Gram matrix against the orthogonal frame
(OF) and the simplex ETF, neural collapse (NC1), majority/minority angles, dead embeddings.

The paper measures the geometry by the distance between normalised Gram matrices,
||G_M / ||G_M||_F - G* / ||G*||_F||_F, with G_M = M M^T for the class means M (k, d) of the
normalised embeddings, G* = I_k for the OF and I_k - 11^T/k for the simplex ETF. Centring the
means (subtracting their unweighted average) maps an OF to a simplex ETF (Appendix D.1), so
the centred distance to the ETF cannot tell the two apart: the uncentred distances can.
For k classes the OF and the ETF are themselves sqrt(2 - 2 sqrt((k-1)/k)) apart (0.32 for
k = 10, 0.52 for k = 4).
"""

from __future__ import annotations

import numpy as np


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def orthogonal_frame(k: int) -> np.ndarray:
    """The Gram matrix of an OF: I_k."""
    return np.eye(k)


def simplex_etf(k: int) -> np.ndarray:
    """The Gram matrix of a simplex ETF with unit vectors: k/(k-1) (I_k - 11^T/k)."""
    return k / (k - 1) * (np.eye(k) - np.ones((k, k)) / k)


def etf_of_distance(k: int) -> float:
    """The distance between the simplex ETF and the OF of k classes (both Gram matrices
    normalised): sqrt(2 - 2 sqrt((k-1)/k)), 0.320 for k = 10."""
    return gram_distance(simplex_etf(k), orthogonal_frame(k))


def class_means(h, labels, k: int | None = None) -> np.ndarray:
    """Mean embedding of each class. h: (n, d), labels: (n,) -> (k, d)"""
    h, labels = _np(h), _np(labels).astype(np.int64)
    k = int(labels.max()) + 1 if k is None else k
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    sums = np.zeros((k, h.shape[1]))
    np.add.at(sums, labels, h)
    return sums / np.maximum(counts, 1)[:, None]


def gram_distance(G, target) -> float:
    """||G/||G||_F - T/||T||_F||_F (0 for G proportional to T; at most 2)."""
    G, T = _np(G), _np(target)
    norm = np.linalg.norm(G)
    if norm == 0:
        return float(np.sqrt(2.0))  # no geometry at all (every mean is zero)
    return float(np.linalg.norm(G / norm - T / np.linalg.norm(T)))


def nc1(h, labels, k: int | None = None) -> float:
    """NC1 = tr(Sigma_W Sigma_B^+) / k: within-class over between-class variability
    (Papyan et al. 2020), with the class means centred on their unweighted average."""
    h, labels = _np(h), _np(labels).astype(np.int64)
    M = class_means(h, labels, k)
    k = M.shape[0]
    dev = h - M[labels]
    sigma_w = dev.T @ dev / len(h)
    centred = M - M.mean(0)
    sigma_b = centred.T @ centred / k
    return float(np.trace(sigma_w @ np.linalg.pinv(sigma_b, rcond=1e-10, hermitian=True)) / k)


def mean_angle(M, rows, cols) -> float:
    """Mean angle in degrees between the class means of ``rows`` and of ``cols`` (distinct
    pairs only)."""
    M = _np(M)
    norms = np.linalg.norm(M, axis=1)
    C = (M @ M.T) / np.maximum(np.outer(norms, norms), 1e-300)
    rows, cols = np.asarray(rows), np.asarray(cols)
    pairs = [(i, j) for i in rows for j in cols if i != j]
    if not pairs:
        return float("nan")
    cos = np.clip([C[i, j] for i, j in pairs], -1.0, 1.0)
    return float(np.degrees(np.arccos(cos)).mean())


def zero_row_fraction(z, atol: float = 0.0) -> float:
    """Fraction of embeddings that are all zero before normalisation (a dead ReLU output)."""
    z = _np(z)
    return float((np.abs(z).max(axis=1) <= atol).mean())


def geometry(h, labels, majority, k: int | None = None) -> dict[str, float]:
    """Every geometry metric of normalised embeddings h (n, d) with labels (n,);
    ``majority``: the majority classes (the rest are minorities)."""
    M = class_means(h, labels, k)
    k = M.shape[0]
    G = M @ M.T
    centred = M - M.mean(0)
    maj = np.asarray(sorted(majority), dtype=np.int64)
    mino = np.setdiff1d(np.arange(k), maj)
    return {
        "dist_of": gram_distance(G, orthogonal_frame(k)),
        "dist_etf": gram_distance(G, simplex_etf(k)),
        "dist_etf_centred": gram_distance(centred @ centred.T, simplex_etf(k)),
        "nc1": nc1(h, labels, k),
        "angle_maj_maj": mean_angle(M, maj, maj),
        "angle_min_min": mean_angle(M, mino, mino),
        "angle_maj_min": mean_angle(M, maj, mino),
        "mean_norm": float(np.linalg.norm(M, axis=1).mean()),
    }
