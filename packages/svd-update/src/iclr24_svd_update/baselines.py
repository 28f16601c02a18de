"""The baselines of the paper, with the same interface as ``EvolvingSVD``.

Fast Updating Truncated SVD for Representation Learning with Sparse Matrices
(Deng et al., ICLR 2024), https://arxiv.org/abs/2401.09703 -- Section 5 baselines:

- ``ZhaSimonSVD``     Zha & Simon (1999): dense QR of X = (I - V V^T) E^T.
- ``VecharynskiSVD``  Vecharynski & Saad (2014): GKL bidiagonalisation of X to depth l.
- ``YamazakiSVD``     Yamazaki et al. (2015): random power iteration on X.
- ``RecomputeSVD``    a fresh ``scipy.sparse.linalg.svds`` of the whole matrix.

The three projection methods densify X (n x s) and apply the small rotation to *all*
singular vectors, U <- [[U, 0], [0, I]] F and V <- [V, Q] G: O((m + n) k (k + s)) per
update. That is exactly the cost that the proposed method avoids. The augmentation
routines are the ones of ``orthogonalize.py`` run with the ordinary inner product (J = I),
so for the same random draws a baseline and its sparse counterpart compute the same
subspace and their singular values agree to rounding error.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .orthogonalize import gkl, rpi
from .svd_update import UpdateConfig, as_csr, initial_svd, truncated_svd


class _DenseUpdater:
    """Projection-based updating of a truncated SVD kept as dense U, S, V."""

    method = "qr"

    def __init__(
        self, A=None, k: int = 64, config: UpdateConfig | None = None, *, init=None, seed: int = 0
    ):
        self.config = config or UpdateConfig(method=self.method)
        if init is None:
            if A is None:
                raise ValueError("give the initial matrix A or init=(U, S, V)")
            init = initial_svd(A, k, seed)
        self._U, self._S, self._V = (np.array(x, dtype=np.float64) for x in init)
        self.k = self._S.shape[0]
        self.rng = np.random.default_rng(seed)

    @property
    def shape(self) -> tuple[int, int]:
        return self._U.shape[0], self._V.shape[0]

    @property
    def U(self) -> np.ndarray:
        return self._U

    @property
    def S(self) -> np.ndarray:
        return self._S.copy()

    @property
    def V(self) -> np.ndarray:
        return self._V

    def row(self, i) -> np.ndarray:
        return self._U[i]

    def col(self, j) -> np.ndarray:
        return self._V[j]

    def transform(self, X) -> np.ndarray:
        return (as_csr(X, self._V.shape[0], "X") @ self._V) / self._S

    def reconstruct(self) -> np.ndarray:
        return (self._U * self._S) @ self._V.T

    def _orth(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """An orthonormal basis Q of (part of) range(X) and W = X^T Q."""
        cfg, ones = self.config, np.ones(X.shape[0])
        if self.method == "gkl":
            return gkl(X, ones, cfg.depth, self.rng)
        if self.method == "rpi":
            return rpi(X, ones, cfg.depth, cfg.power_iters, self.rng, cfg.tol)
        Q, R = np.linalg.qr(X)  # Zha-Simon: Householder QR of the densified X
        return Q, R.T

    def _augment(self, Et: sp.csr_matrix, B: np.ndarray):
        C = (Et @ B).T  # (k, s) = B^T E^T
        X = Et.T.toarray() - B @ C  # (rows, s): densified, as in the original methods
        Q, W = self._orth(X)
        return Q, W, C

    def _add_rows(self, E: sp.csr_matrix, U: np.ndarray, V: np.ndarray):
        s, k = E.shape[0], self.k
        if s == 0:
            return U, V
        Q, W, C = self._augment(E, V)
        M = np.zeros((k + s, k + Q.shape[1]))
        M[:k, :k] = np.diag(self._S)
        M[k:, :k] = C.T
        M[k:, k:] = W
        F, self._S, G = truncated_svd(M, k)
        return np.vstack([U @ F[:k], F[k:]]), V @ G[:k] + Q @ G[k:]

    def add_rows(self, E) -> None:
        E = as_csr(E, self._V.shape[0], "E (new rows)")
        self._U, self._V = self._add_rows(E, self._U, self._V)

    def add_columns(self, E) -> None:
        E = sp.csc_matrix(E, dtype=np.float64)
        if E.shape[0] != self._U.shape[0]:
            raise ValueError(f"E (new columns) must have {self._U.shape[0]} rows, got {E.shape}")
        self._V, self._U = self._add_rows(as_csr(E.T, self._U.shape[0], "E^T"), self._V, self._U)

    def update_weights(self, D, E) -> None:
        D = as_csr(sp.csr_matrix(D).T, self._U.shape[0], "D^T (D must be m x s)")
        E = as_csr(sp.csr_matrix(E).T, self._V.shape[0], "E^T (E must be n x s)")
        if D.shape[0] != E.shape[0]:
            raise ValueError(
                f"D and E need the same number of columns, got {D.shape[0]}, {E.shape[0]}"
            )
        if D.shape[0] == 0:
            return
        k = self.k
        Qd, Wd, Cd = self._augment(D, self._U)
        Qe, We, Ce = self._augment(E, self._V)
        M = np.zeros((k + Qd.shape[1], k + Qe.shape[1]))
        M[:k, :k] = np.diag(self._S)
        M += np.vstack([Cd, Wd.T]) @ np.vstack([Ce, We.T]).T
        F, self._S, G = truncated_svd(M, k)
        self._U = self._U @ F[:k] + Qd @ F[k:]
        self._V = self._V @ G[:k] + Qe @ G[k:]


class ZhaSimonSVD(_DenseUpdater):
    """Zha & Simon (1999), "On updating problems in latent semantic indexing"."""

    method = "qr"


class VecharynskiSVD(_DenseUpdater):
    """Vecharynski & Saad (2014), "Fast updating algorithms for latent semantic indexing"."""

    method = "gkl"


class YamazakiSVD(_DenseUpdater):
    """Yamazaki et al. (2015), "Randomized algorithms to update partial SVD ..."."""

    method = "rpi"


class RecomputeSVD:
    """Keeps the whole sparse matrix and recomputes its rank-k SVD with ``svds`` when read."""

    def __init__(self, A, k: int = 64, *, seed: int = 0):
        self.A = sp.csr_matrix(A, dtype=np.float64)
        self.k, self.seed = k, seed
        self._svd = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.A.shape

    def refresh(self) -> None:
        if self._svd is None:
            self._svd = initial_svd(self.A, self.k, self.seed)

    @property
    def U(self) -> np.ndarray:
        self.refresh()
        return self._svd[0]

    @property
    def S(self) -> np.ndarray:
        self.refresh()
        return self._svd[1].copy()

    @property
    def V(self) -> np.ndarray:
        self.refresh()
        return self._svd[2]

    def row(self, i) -> np.ndarray:
        return self.U[i]

    def col(self, j) -> np.ndarray:
        return self.V[j]

    def transform(self, X) -> np.ndarray:
        return (as_csr(X, self.A.shape[1], "X") @ self.V) / self.S

    def reconstruct(self) -> np.ndarray:
        return (self.U * self.S) @ self.V.T

    def add_rows(self, E) -> None:
        self.A = sp.vstack([self.A, as_csr(E, self.A.shape[1], "E (new rows)")]).tocsr()
        self._svd = None

    def add_columns(self, E) -> None:
        E = sp.csc_matrix(E, dtype=np.float64)
        if E.shape[0] != self.A.shape[0]:
            raise ValueError(f"E (new columns) must have {self.A.shape[0]} rows, got {E.shape}")
        self.A = sp.hstack([self.A, E]).tocsr()
        self._svd = None

    def update_weights(self, D, E) -> None:
        D, E = sp.csr_matrix(D, dtype=np.float64), sp.csr_matrix(E, dtype=np.float64)
        if (
            D.shape[0] != self.A.shape[0]
            or E.shape[0] != self.A.shape[1]
            or D.shape[1] != E.shape[1]
        ):
            raise ValueError(
                f"need D (m, s), E (n, s) for A {self.A.shape}; got {D.shape}, {E.shape}"
            )
        self.A = (self.A + D @ E.T).tocsr()
        self._svd = None
