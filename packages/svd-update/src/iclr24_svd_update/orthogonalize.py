"""Orthogonalisation of the augmented space, in the paper's sparse representation.

Fast Updating Truncated SVD for Representation Learning with Sparse Matrices
(Deng et al., ICLR 2024), https://arxiv.org/abs/2401.09703 -- Sections 3.2 and 4.

Updating the rank-k SVD A ~ U S V^T by new rows E (s x n) needs an orthonormal basis Q of
the augmented space X = (I - V V^T) E^T (n x s). The paper never forms X: a column of X is
kept as a pair (b, c) with b = E^T e_j restricted to the rows that E touches and
c = V^T E^T e_j, so that x = b - V c. For two such vectors (Lemma 1 of the paper)

    <b1 - V c1, b2 - V c2> = b1 . b2 - c1 . c2        (because c = V^T b)

so the pair z = [b; c] of length (|touched| + k) lives in an indefinite inner-product space
with metric J = diag(+1, ..., +1, -1, ..., -1). Every routine below works on a stacked
matrix Z = [B; C] and a sign vector ``sign`` (the diagonal of J); with ``sign = 1`` it is
the ordinary dense orthogonalisation used by the baselines (Z = X, n x s).

Each routine returns ``(Q, W)`` with Q (rows(Z) x l) J-orthonormal and W = X^T Q (s x l),
so that X ~ Q W^T (exact for the QR and for s <= l).
"""

from __future__ import annotations

import numpy as np


def _jdot(a: np.ndarray, b: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """J-inner products a^T J b (Lemma 1: b1.b2 - c1.c2 in the stacked form)."""
    return a.T @ (sign[:, None] * b) if b.ndim == 2 else a.T @ (sign * b)


def sparse_qr(Z: np.ndarray, sign: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """QR of X in the J-inner product (the paper's Algorithm 2), by Gram-Schmidt applied
    twice (CGS2) per column for stability; columns whose residual norm^2 falls below
    ``tol * ||x_j||^2`` are dropped (Q column and R row set to 0).

    Returns (Q, W) with W = R^T (s x s), so X = Q R.
    """
    rows, s = Z.shape
    Q = np.zeros((rows, s))
    R = np.zeros((s, s))
    for j in range(s):  # loop over the s update vectors only, never over non-zeros
        x = Z[:, j].copy()
        norm0 = float(_jdot(x, x, sign))
        for _ in range(2):  # "twice is enough" (Giraud et al. 2005)
            h = _jdot(Q[:, :j], x, sign)  # (j,)
            x -= Q[:, :j] @ h
            R[:j, j] += h
        nrm2 = float(_jdot(x, x, sign))
        if norm0 > 0 and nrm2 > tol * norm0:
            R[j, j] = np.sqrt(nrm2)
            Q[:, j] = x / R[j, j]
    return Q, R.T


def gkl(
    Z: np.ndarray, sign: np.ndarray, depth: int, rng: np.random.Generator, tol: float = 1e-9
) -> tuple[np.ndarray, np.ndarray]:
    """Golub-Kahan-Lanczos bidiagonalisation of X to ``depth`` steps (the paper's Algorithm 6,
    Vecharynski & Saad 2014 in the dense case), with full reorthogonalisation of both
    Lanczos bases. Stops early when the Krylov space is exhausted (always by step s), so for
    s <= depth the result spans range(X) exactly.

    Returns (Q, W): Q (rows x l) J-orthonormal, W = X^T Q (s x l), l <= depth.
    """
    rows, s = Z.shape
    depth = min(depth, s)
    Q = np.zeros((rows, depth))
    P = np.zeros((s, depth + 1))
    p = rng.standard_normal(s)
    P[:, 0] = p / np.linalg.norm(p)
    scale = np.sqrt(max(float(np.abs(_jdot(Z, Z, sign)).max()), 1e-300))  # ~ ||X||
    l = 0
    for i in range(depth):
        q = Z @ P[:, i]  # X p_i
        for _ in range(2):
            q -= Q[:, :i] @ _jdot(Q[:, :i], q, sign)
        alpha2 = float(_jdot(q, q, sign))
        if alpha2 <= (tol * scale) ** 2:
            break
        Q[:, i] = q / np.sqrt(alpha2)
        l = i + 1
        p = Z.T @ (sign * Q[:, i])  # X^T q_i
        for _ in range(2):
            p -= P[:, : i + 1] @ (P[:, : i + 1].T @ p)
        beta = float(np.linalg.norm(p))
        if beta <= tol * scale:
            break
        P[:, i + 1] = p / beta
    Q = Q[:, :l]
    return Q, Z.T @ (sign[:, None] * Q)


def rpi(
    Z: np.ndarray,
    sign: np.ndarray,
    depth: int,
    iters: int,
    rng: np.random.Generator,
    tol: float = 1e-12,
) -> tuple[np.ndarray, np.ndarray]:
    """Random power iteration on X (the paper's Algorithm 8, Yamazaki et al. 2015 in the
    dense case): P0 ~ N(0, 1)^{s x l}, then ``iters`` times Q = orth_J(X P), P = X^T Q.

    Returns (Q, W): Q J-orthonormal (zero columns where X P was rank deficient), W = X^T Q.
    """
    s = Z.shape[1]
    depth = min(depth, s)
    P = rng.standard_normal((s, depth))
    Q = np.zeros((Z.shape[0], 0))
    for _ in range(max(iters, 1)):
        P, _r = np.linalg.qr(P)
        Q, _w = sparse_qr(Z @ P, sign, tol)
        P = Z.T @ (sign[:, None] * Q)
    return Q, P
