"""Accuracy metrics of an updated truncated SVD (Section 5 of the paper) and a downstream
ranking metric computed from its embeddings."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def relative_sv_error(S: np.ndarray, S_ref: np.ndarray) -> float:
    """mean_i |s_i - s_ref_i| / s_ref_i over the k singular values."""
    S, S_ref = np.asarray(S, float), np.asarray(S_ref, float)
    return float(np.mean(np.abs(S - S_ref) / np.abs(S_ref)))


def max_relative_sv_gap(S: np.ndarray, S_ref: np.ndarray) -> float:
    """max_i |s_i - s_ref_i| / s_ref_i: for agreement between two methods."""
    S, S_ref = np.asarray(S, float), np.asarray(S_ref, float)
    return float(np.max(np.abs(S - S_ref) / np.abs(S_ref)))


def scaled_residual(A, U: np.ndarray, S: np.ndarray, V: np.ndarray) -> float:
    """mean_i ||A v_i - s_i u_i||_2 / s_i: how far (s_i, u_i, v_i) is from a singular triplet
    of the current matrix A (the paper's residual metric)."""
    R = A @ V - U * S  # (m, k)
    return float(np.mean(np.linalg.norm(R, axis=0) / S))


def frobenius_residual(A, U: np.ndarray, S: np.ndarray, V: np.ndarray) -> float:
    """||A - U diag(S) V^T||_F for orthonormal U, V (the residual of the official IncSVD
    tutorial), without forming the dense product:
    ||A||_F^2 - 2 sum_i s_i u_i^T A v_i + ||S||^2."""
    AV = A @ V  # (m, k)
    sq = float(A.multiply(A).sum()) - 2.0 * float(np.sum(S * np.einsum("ij,ij->j", U, AV)))
    return float(np.sqrt(max(sq + float(np.sum(np.asarray(S) ** 2)), 0.0)))


def orthogonality_error(U: np.ndarray) -> float:
    """||U^T U - I||_max."""
    return float(np.abs(U.T @ U - np.eye(U.shape[1])).max())


def hit_rate_mrr(
    user_emb: np.ndarray,
    item_emb: np.ndarray,
    train: sp.csr_matrix,
    users: np.ndarray,
    test_items: np.ndarray,
    topk: int = 10,
    chunk: int = 512,
) -> tuple[float, float]:
    """Leave-one-out ranking: HR@topk and MRR of each user's held-out item among the items
    the user has not interacted with, scored by user_emb[u] . item_emb[i]."""
    ranks = np.empty(len(users), dtype=np.int64)
    for lo in range(0, len(users), chunk):
        u = users[lo : lo + chunk]
        scores = user_emb[u] @ item_emb.T  # (chunk, n_items)
        seen = train[u]
        scores[np.repeat(np.arange(len(u)), np.diff(seen.indptr)), seen.indices] = -np.inf
        target = scores[np.arange(len(u)), test_items[lo : lo + chunk]]
        ranks[lo : lo + chunk] = (scores > target[:, None]).sum(axis=1)
    return float(np.mean(ranks < topk)), float(np.mean(1.0 / (ranks + 1)))


def hold_out(A: sp.csr_matrix, n_users: int, rng: np.random.Generator, segments=None):
    """Remove one random interaction from each of ``n_users`` random users that have >= 2.
    ``segments``: row ranges ``[(lo, hi), ...]`` to draw the users from, an equal share from
    each (all of a range's eligible rows where it has fewer); None: every row.
    Returns (train matrix, users, held-out items)."""
    A = A.tocsr(copy=True)
    deg = np.diff(A.indptr)
    segments = segments or [(0, A.shape[0])]
    share = n_users // len(segments)
    picked = []
    for i, (lo, hi) in enumerate(segments):
        pool = lo + np.flatnonzero(deg[lo:hi] >= 2)
        size = min(share + (n_users % len(segments) if i == len(segments) - 1 else 0), len(pool))
        picked.append(rng.choice(pool, size=size, replace=False))
    users = np.sort(np.concatenate(picked)).astype(np.int64)
    pos = A.indptr[users] + (rng.random(len(users)) * deg[users]).astype(np.int64)
    items = A.indices[pos].copy()
    A.data[pos] = 0.0
    A.eliminate_zeros()
    return A, users, items
