"""The proposed method: a truncated SVD that follows a sparse, evolving matrix.

Fast Updating Truncated SVD for Representation Learning with Sparse Matrices
(Deng et al., ICLR 2024), https://arxiv.org/abs/2401.09703

The SVD A ~ U diag(S) V^T is kept in the paper's *extended decomposition* (Section 3.3)

    U = U' K_u,   V = V' K_v,        U' (m x k), V' (n x k), K_u, K_v (k x k)

so that an update touches only the rows of U'/V' that the sparse update touches, plus the
small k x k matrices. One update (Algorithm 3; Algorithm 9 for the GKL/RPI variants):

1. Augment: X = (I - V V^T) E^T is kept as pairs (b, c), x = b - V c, c = V^T b, and
   orthogonalised with the inner product b1.b2 - c1.c2 (Lemma 1), giving Q = Qb - V Qc and
   W = X^T Q (see ``orthogonalize.py``; QR, GKL or RPI).
2. Project (Rayleigh-Ritz): rows  M = [[S, 0], [C^T, W]]        ((k+s) x (k+l)),
                            weights M = [[S, 0], [0, 0]] + [C_d; W_d^T] [C_e; W_e^T]^T.
   F, S', G = svd_k(M).
3. Update:  [V Q] G = V' K_v (G[:k] - Qc G[k:]) + Qb G[k:]     so
            K_v <- K_v (G[:k] - Qc G[k:]),   V'[touched] += Qb G[k:] K_v^{-1}
   and for new rows  [[U, 0], [0, I]] F:  K_u <- K_u F[:k],  new rows of U' = F[k:] K_u^{-1}.

Beyond the reference code: U'/V' grow in preallocated buffers (amortised O(1) per row
instead of np.append copies), K^{-1} is applied with a linear solve, and when cond(K)
exceeds ``fold_cond`` the factor is folded back (U' <- U' K, K <- I) so that K stays well
conditioned over long streams.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg

from .orthogonalize import gkl, rpi, sparse_qr

METHODS = ("qr", "gkl", "rpi")


@dataclass
class UpdateConfig:
    """How the augmented space of each update is orthogonalised."""

    method: str = "qr"
    """qr: exact sparse QR (Alg. 3); gkl: Golub-Kahan-Lanczos (Alg. 6); rpi: random power iteration (Alg. 8)."""
    depth: int = 10
    """Lanczos / sketch depth l for gkl and rpi (official experiments code: l = min(10, s))."""
    power_iters: int = 3
    """Power iterations t for rpi (official experiments code: num_iter = 3)."""
    fold_cond: float = 1e4
    """Fold K back into U'/V' when cond(K) exceeds this (not in the paper; numerical care)."""
    tol: float = 1e-12
    """Relative squared-norm threshold below which an augmented direction is dropped."""

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.depth < 1 or self.power_iters < 1:
            raise ValueError("depth and power_iters must be >= 1")


def as_csr(E, n_cols: int, what: str) -> sp.csr_matrix:
    """An update block as CSR float64, with a clear error on a wrong width."""
    E = sp.csr_matrix(E, dtype=np.float64) if not sp.issparse(E) else E.tocsr().astype(np.float64)
    if E.ndim != 2 or E.shape[1] != n_cols:
        raise ValueError(f"{what} must have {n_cols} columns, got shape {E.shape}")
    return E


def truncated_svd(M: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank-k SVD of a small dense matrix: F (r x k), S (k,), G (c x k)."""
    F, S, Gt = np.linalg.svd(M, full_matrices=False)
    return F[:, :k], S[:k], Gt[:k].T


def initial_svd(A, k: int, seed: int = 0):
    """Rank-k SVD of a sparse matrix with ARPACK, sorted by decreasing singular value."""
    A = sp.csr_matrix(A, dtype=np.float64)
    if not 0 < k < min(A.shape):
        raise ValueError(f"k must satisfy 0 < k < min(A.shape) = {min(A.shape)}, got {k}")
    v0 = np.random.default_rng(seed).standard_normal(min(A.shape))
    U, S, Vt = scipy.sparse.linalg.svds(A, k=k, v0=v0)
    order = np.argsort(S)[::-1]
    return U[:, order], S[order], Vt[order].T


class _Factor:
    """One side of the extended decomposition: rows U'[:n] in a growing buffer, and K."""

    def __init__(self, U: np.ndarray, fold_cond: float):
        n, k = U.shape
        self.buf = np.zeros((max(2 * n, 16), k))
        self.buf[:n] = U
        self.n, self.k = n, k
        self.K = np.eye(k)
        self.fold_cond = fold_cond
        self.folds = 0

    @property
    def base(self) -> np.ndarray:
        return self.buf[: self.n]

    def dense(self) -> np.ndarray:
        return self.base @ self.K

    def coords(self, idx: np.ndarray, Bt: np.ndarray) -> np.ndarray:
        """C = (U' K)[idx]^T B for B supported on rows idx: (k, s)."""
        return self.K.T @ (self.buf[idx].T @ Bt)

    def append(self, rows: np.ndarray) -> None:
        s = rows.shape[0]
        if self.n + s > self.buf.shape[0]:  # amortised doubling instead of np.append
            new = np.zeros((max(2 * self.buf.shape[0], self.n + s), self.k))
            new[: self.n] = self.base
            self.buf = new
        self.buf[self.n : self.n + s] = rows
        self.n += s

    def _mix(self, K_new: np.ndarray) -> np.ndarray | None:
        """Adopt K_new and return K_new^{-1}; or, when cond_1(K_new) > fold_cond, fold
        K_new into the rows (U' <- U' K_new, K <- I, O(m k^2), rare) and return None."""
        try:
            K_inv = np.linalg.inv(K_new)
            cond = np.linalg.norm(K_new, 1) * np.linalg.norm(K_inv, 1)
        except np.linalg.LinAlgError:
            cond = np.inf
        if cond <= self.fold_cond:
            self.K = K_new
            return K_inv
        self.buf[: self.n] = self.base @ K_new
        self.K = np.eye(self.k)
        self.folds += 1
        return None

    def extend(self, K_mix: np.ndarray, new_rows: np.ndarray) -> None:
        """[[U' K, 0], [0, I]] F  with K_mix = F[:k], new_rows = F[k:]."""
        K_inv = self._mix(self.K @ K_mix)
        self.append(new_rows if K_inv is None else new_rows @ K_inv)

    def rotate(self, G: np.ndarray, Qb: np.ndarray, Qc: np.ndarray, idx: np.ndarray) -> None:
        """[U' K, Q] G with Q = Qb - U' K Qc:  K <- K (G[:k] - Qc G[k:]),
        U'[idx] += Qb G[k:] K^{-1}  (step 3 of Alg. 3)."""
        k = self.k
        K_inv = self._mix(self.K @ (G[:k] - Qc @ G[k:]))
        if len(idx):
            delta = Qb @ G[k:]
            self.buf[idx] += delta if K_inv is None else delta @ K_inv


class EvolvingSVD:
    """Rank-k truncated SVD of a sparse matrix that grows by rows and columns and takes
    low-rank weight updates, updated in time governed by the sparsity of the update.

    >>> import scipy.sparse as sp
    >>> A = sp.random(300, 200, density=0.05, random_state=0)
    >>> svd = EvolvingSVD(A, k=8)
    >>> svd.add_rows(sp.random(10, 200, density=0.05, random_state=1))
    >>> svd.U.shape, svd.S.shape, svd.V.shape
    ((310, 8), (8,), (200, 8))
    """

    def __init__(
        self,
        A=None,
        k: int = 64,
        config: UpdateConfig | None = None,
        *,
        init: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        seed: int = 0,
    ):
        self.config = config or UpdateConfig()
        if init is None:
            if A is None:
                raise ValueError("give the initial matrix A or init=(U, S, V)")
            init = initial_svd(A, k, seed)
        U, S, V = (np.asarray(x, dtype=np.float64) for x in init)
        if U.shape[1] != S.shape[0] or V.shape[1] != S.shape[0]:
            raise ValueError(f"inconsistent init shapes {U.shape}, {S.shape}, {V.shape}")
        self.k = S.shape[0]
        self._u = _Factor(U, self.config.fold_cond)
        self._v = _Factor(V, self.config.fold_cond)
        self._S = S.copy()
        self.rng = np.random.default_rng(seed)

    # ----------------------------------------------------------------- read access
    @property
    def shape(self) -> tuple[int, int]:
        return self._u.n, self._v.n

    @property
    def U(self) -> np.ndarray:
        """Left singular vectors U' K_u: (m, k)."""
        return self._u.dense()

    @property
    def S(self) -> np.ndarray:
        """Singular values, decreasing: (k,)."""
        return self._S.copy()

    @property
    def V(self) -> np.ndarray:
        """Right singular vectors V' K_v: (n, k)."""
        return self._v.dense()

    @property
    def folds(self) -> int:
        """How many times K_u or K_v was folded back into U'/V'."""
        return self._u.folds + self._v.folds

    def row(self, i) -> np.ndarray:
        """Left singular vector rows U[i] = U'[i] K_u, O(k^2) each: (k,) or (len(i), k)."""
        return self._u.buf[_check_index(i, self._u.n, "row")] @ self._u.K

    def col(self, j) -> np.ndarray:
        """Right singular vector rows V[j] = V'[j] K_v: (k,) or (len(j), k)."""
        return self._v.buf[_check_index(j, self._v.n, "column")] @ self._v.K

    def transform(self, X) -> np.ndarray:
        """Fold new rows in: X V S^{-1} (LSI's query projection): (r, n) -> (r, k)."""
        X = as_csr(X, self._v.n, "X")
        return (X @ self._v.base) @ self._v.K / self._S

    def reconstruct(self) -> np.ndarray:
        """Dense U diag(S) V^T: (m, n). For small matrices only."""
        return (self.U * self._S) @ self.V.T

    # ----------------------------------------------------------------- updates
    def add_rows(self, E) -> None:
        """Append the rows E (s, n) to the matrix."""
        E = as_csr(E, self._v.n, "E (new rows)")
        self._add_rows(E, self._u, self._v)

    def add_columns(self, E) -> None:
        """Append the columns E (m, s) to the matrix (the row update of A^T)."""
        E = sp.csc_matrix(E, dtype=np.float64) if not sp.issparse(E) else E.tocsc()
        if E.shape[0] != self._u.n:
            raise ValueError(f"E (new columns) must have {self._u.n} rows, got shape {E.shape}")
        self._add_rows(as_csr(E.T, self._u.n, "E^T"), self._v, self._u)

    def update_weights(self, D, E) -> None:
        """Low-rank update A <- A + D E^T with D (m, s) and E (n, s) sparse."""
        D = as_csr(sp.csr_matrix(D).T, self._u.n, "D^T (D must be m x s)")
        E = as_csr(sp.csr_matrix(E).T, self._v.n, "E^T (E must be n x s)")
        if D.shape[0] != E.shape[0]:
            raise ValueError(
                f"D and E need the same number of columns, got {D.shape[0]}, {E.shape[0]}"
            )
        if D.shape[0] == 0:
            return
        k = self.k
        Qd, Wd, Cd, idx_d = self._augment(D, self._u)
        Qe, We, Ce, idx_e = self._augment(E, self._v)
        # M = [[S, 0], [0, 0]] + [C_d; W_d^T] [C_e; W_e^T]^T   (weight update, Alg. 9)
        M = np.zeros((k + Qd.shape[1], k + Qe.shape[1]))
        M[:k, :k] = np.diag(self._S)
        M += np.vstack([Cd, Wd.T]) @ np.vstack([Ce, We.T]).T
        F, self._S, G = truncated_svd(M, k)
        nd, ne = len(idx_d), len(idx_e)
        self._u.rotate(F, Qd[:nd], Qd[nd:], idx_d)
        self._v.rotate(G, Qe[:ne], Qe[ne:], idx_e)

    # ----------------------------------------------------------------- internals
    def _augment(self, Et: sp.csr_matrix, side: _Factor):
        """The augmented space of the columns of Et^T against ``side``: (Q, W, C, touched)."""
        Et = Et.tocsc()  # Et: (s, rows of side); the touched rows are its non-empty columns
        idx = np.flatnonzero(np.diff(Et.indptr))
        Bt = Et[:, idx].toarray().T  # (|touched|, s): the dense part b, never n x s
        C = side.coords(idx, Bt)  # (k, s) = V^T E^T
        Z = np.vstack([Bt, C])  # stacked (b, c) pairs
        sign = np.concatenate([np.ones(len(idx)), -np.ones(self.k)])  # J of Lemma 1
        cfg = self.config
        if cfg.method == "qr":
            Q, W = sparse_qr(Z, sign, cfg.tol)
        elif cfg.method == "gkl":
            Q, W = gkl(Z, sign, cfg.depth, self.rng)
        else:
            Q, W = rpi(Z, sign, cfg.depth, cfg.power_iters, self.rng, cfg.tol)
        return Q, W, C, idx

    def _add_rows(self, E: sp.csr_matrix, rows: _Factor, cols: _Factor) -> None:
        s, k = E.shape[0], self.k
        if s == 0:
            return
        Q, W, C, idx = self._augment(E, cols)
        # M = [[S, 0], [C^T, W]]   (Alg. 3 line 2; W = R^T for the QR)
        M = np.zeros((k + s, k + Q.shape[1]))
        M[:k, :k] = np.diag(self._S)
        M[k:, :k] = C.T
        M[k:, k:] = W
        F, self._S, G = truncated_svd(M, k)
        rows.extend(F[:k], F[k:])
        cols.rotate(G, Q[: len(idx)], Q[len(idx) :], idx)


def _check_index(i, n: int, what: str) -> np.ndarray:
    i = np.asarray(i)
    if i.size and (i.min() < -n or i.max() >= n):
        raise IndexError(f"{what} index out of range for {n} {what}s")
    return np.where(i < 0, i + n, i)
