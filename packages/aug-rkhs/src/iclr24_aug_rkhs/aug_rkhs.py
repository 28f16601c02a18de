"""Understanding Augmentation-based Self-Supervised Representation Learning via RKHS
Approximation and Regression (Zhai, Liu, Risteski, Kolter & Ravikumar, ICLR 2024).
https://arxiv.org/abs/2306.00788

An augmentation is a conditional p(a|x) from inputs to augmented views. On a finite space it
is a sparse row-stochastic matrix C (n_x, n_a) next to P_X, and every object of the paper's
Section 2 is exact:

    p(a)              = sum_x p(x) p(a|x)
    (Gamma f)(a)      = E[f(X) | a]   = sum_x p(x) p(a|x) f(x) / p(a)    L2(P_X) -> L2(P_A)
    (Gamma* g)(x)     = E[g(A) | x]   = sum_a p(a|x) g(a)                L2(P_A) -> L2(P_X)
    K_X(x, x')        = sum_a p(a|x) p(a|x') / p(a)                      augmentation kernel
    (Gamma* Gamma f)  = E_X'[K_X(., X') f(X')]                           its integral operator
    spectrum          : 1 = lambda_0 >= lambda_1 >= ... >= 0, psi_0 = 1  (Jensen)
    ||f||_H^2         = sum_i <f, psi_i>^2 / lambda_i                    the RKHS H_Gamma
    kappa^2           = sup_x K_X(x, x) = 1 + sup_x chi2(p(.|x) || p_A)  augmentation complexity
    epsilon(f)        = 1 - ||f||^2 / ||f||_H^2                          isometry (1-eps)||f||_H^2 <= ||f||^2

Indexing: psi_0 is the constant; "the top-d eigenspace" is span(psi_1 .. psi_d), so the
first eigenvalue left out is lambda_{d+1}; a linear probe adds the constant as its bias.

The ideal d-dimensional encoder is the top-d eigenspace (``Spectrum.encoder``); the
finite-sample encoder of the second theorem takes the top-d eigenspace of the kernel
estimated from m pretraining samples (p(a) replaced by its Monte-Carlo estimate over the
samples) and extends it to every input by Nystrom (``nystrom_encoder``). For sequences too
long to enumerate, K_X(x, x) of [MASK] replacement is E_S[1 / P(X_keep = x_keep)] over the
random mask S: estimated by Monte Carlo over S (``mask_log_kernel_diagonal_mc``) or summed
exactly when P_X is a Markov chain (``mask_log_kernel_diagonal_markov``); kappa is then a
Monte-Carlo maximum over sampled inputs, and the augmentation space is never built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp


@dataclass(frozen=True)
class Spectrum:
    """Eigenpairs of Gamma* Gamma in L2(P_X), largest first."""

    eigenvalues: np.ndarray
    """(r,) 1 = lambda_0 >= lambda_1 >= ... >= 0."""
    eigenfunctions: np.ndarray
    """(n_x, r) orthonormal in L2(P_X); column 0 is the constant 1."""

    def encoder(self, d: int) -> np.ndarray:
        """The ideal encoder: the top-d non-constant eigenfunctions psi_1..psi_d. (n_x, d)"""
        if not 1 <= d < len(self.eigenvalues):
            raise ValueError(f"d must be in [1, {len(self.eigenvalues) - 1}]")
        return self.eigenfunctions[:, 1 : d + 1]


class FiniteAugmentation:
    """An augmentation on a finite input space: p(a|x) as a sparse matrix, and P_X.

    conditional: (n_x, n_a) row-stochastic, p(a|x); p_x: (n_x,) strictly positive, sums to 1.
    Augmentations no input reaches (p(a) = 0) are dropped.
    """

    def __init__(self, conditional, p_x):
        cond = sp.csr_matrix(conditional, dtype=float)
        p_x = np.asarray(p_x, dtype=float)
        if cond.ndim != 2 or cond.shape[0] != p_x.shape[0]:
            raise ValueError("conditional must be (n_x, n_a) with n_x = len(p_x)")
        if (cond.data < 0).any() or not np.allclose(cond.sum(1).A1, 1, atol=1e-9):
            raise ValueError("every row of the conditional p(a|x) must be a distribution")
        if (p_x <= 0).any() or not np.isclose(p_x.sum(), 1):
            raise ValueError("p_x must be strictly positive and sum to 1 (drop inputs with p=0)")
        p_a = cond.T @ p_x
        reached = np.flatnonzero(p_a > 0)
        self.conditional = cond[:, reached].tocsr()  # (n_x, n_a)
        self.p_x = p_x  # (n_x,)
        self.p_a = p_a[reached]  # (n_a,)

    @property
    def n_inputs(self) -> int:
        return self.conditional.shape[0]

    @property
    def n_augmentations(self) -> int:
        return self.conditional.shape[1]

    def gamma(self, f: np.ndarray) -> np.ndarray:
        """(Gamma f)(a) = E[f(X) | a]. (n_x,) -> (n_a,)"""
        return (self.conditional.T @ (self.p_x * f)) / self.p_a

    def gamma_adjoint(self, g: np.ndarray) -> np.ndarray:
        """(Gamma* g)(x) = E[g(A) | x]. (n_a,) -> (n_x,)"""
        return self.conditional @ g

    def kernel(self, rows=None) -> np.ndarray:
        """K_X(x, x') for x in ``rows`` (default all) and every x'. (len(rows), n_x)"""
        left = self.conditional if rows is None else self.conditional[rows]
        return (left @ sp.diags(1 / self.p_a) @ self.conditional.T).toarray()

    def kernel_diagonal(self) -> np.ndarray:
        """K_X(x, x) = sum_a p(a|x)^2 / p(a). (n_x,)"""
        return self.conditional.multiply(self.conditional) @ (1 / self.p_a)

    def integral_operator(self, f: np.ndarray) -> np.ndarray:
        """(T_K f)(x) = E_X'[K_X(x, X') f(X')], which equals Gamma* Gamma f. (n_x,)"""
        return self.kernel() @ (self.p_x * f)

    @cached_property
    def spectrum(self) -> Spectrum:
        """Exact eigendecomposition, via the symmetric D^1/2 K D^1/2 with D = diag(P_X)."""
        half = self.conditional.multiply(np.sqrt(self.p_x)[:, None]) @ sp.diags(self.p_a**-0.5)
        sym = (half @ half.T).toarray()  # (n_x, n_x) = D^1/2 K D^1/2 = B B^T, PSD
        lam, vec = np.linalg.eigh(sym)
        order = np.argsort(lam)[::-1]
        lam, vec = np.clip(lam[order], 0.0, None), vec[:, order]
        psi = vec / np.sqrt(self.p_x)[:, None]
        if psi[:, 0].sum() < 0:  # psi_0 = +1, not -1
            psi[:, 0] *= -1
        return Spectrum(lam, psi)

    def kappa(self) -> float:
        """Augmentation complexity kappa = sqrt(sup_x K_X(x, x))."""
        return float(np.sqrt(self.kernel_diagonal().max()))

    def trace(self) -> float:
        """E_X[K_X(X, X)] = sum_i lambda_i."""
        return float(self.p_x @ self.kernel_diagonal())

    def coefficients(self, f: np.ndarray) -> np.ndarray:
        """u_i = <f, psi_i>_{P_X}. (n_x,) -> (r,)"""
        return self.spectrum.eigenfunctions.T @ (self.p_x * f)

    def rkhs_norm_sq(self, f: np.ndarray, tol: float = 1e-12) -> float:
        """||f||_H^2 = sum_i u_i^2 / lambda_i; inf if f has weight where lambda_i = 0."""
        u, lam = self.coefficients(f), self.spectrum.eigenvalues
        null = lam <= tol
        if np.any(u[null] ** 2 > tol * max(1.0, float(u @ u))):
            return float("inf")
        return float(np.sum(u[~null] ** 2 / lam[~null]))

    def isometry_epsilon(self, f: np.ndarray) -> float:
        """The smallest eps with (1 - eps) ||f||_H^2 <= ||f||^2_{P_X} (f non-zero)."""
        return 1.0 - float(self.p_x @ f**2) / self.rkhs_norm_sq(f)

    def grams(self, features: np.ndarray, tol: float = 1e-13) -> tuple[np.ndarray, np.ndarray]:
        """The L2(P_X) and H_Gamma Gram matrices of the span of the constant and the encoder's
        functions: G_L2 = <phi_j, phi_k>_{P_X}, G_H = <phi_j, phi_k>_H = sum_i
        c_ij c_ik / lambda_i with c = <phi, psi_i> (components on lambda_i <= tol dropped:
        a Nystrom encoder lies in the kernel's range). features: (n_x, d) -> two (d+1, d+1)"""
        funcs = np.column_stack([np.ones(self.n_inputs), features])
        coef = self.spectrum.eigenfunctions.T @ (self.p_x[:, None] * funcs)  # (r, d + 1)
        lam = self.spectrum.eigenvalues
        keep = lam > tol
        return coef.T @ coef, coef[keep].T @ (coef[keep] / lam[keep, None])

    def ratio_trace(self, features: np.ndarray) -> float:
        """Tr(G_H^{-1} G_L2) of span(1, phi_1..phi_d): the trace of Gamma* Gamma on that
        span read through H_Gamma; at most lambda_0 + ... + lambda_d (Ky Fan), with equality
        for the top-d eigenspace. The gap to that maximum is ``trace_gap``."""
        g_l2, g_h = self.grams(features)
        return float(np.trace(np.linalg.solve(g_h, g_l2)))

    def trace_gap(self, features: np.ndarray) -> float:
        """tau = sum_{i <= d} lambda_i - ratio trace >= 0 (0 for the ideal encoder).
        features: (n_x, d)"""
        d = features.shape[1]
        return float(self.spectrum.eigenvalues[: d + 1].sum() - self.ratio_trace(features))

    def approximation_error(self, f: np.ndarray, d: int) -> float:
        """||f - (projection of f on span(psi_0 .. psi_d))||^2_{P_X}, exactly."""
        u = self.coefficients(f)
        return float(self.p_x @ f**2 - np.sum(u[: d + 1] ** 2))


# ------------------------------------------------------------------ augmentations
def mask_augmentation(p_x, vocab_size: int, length: int, alpha: float) -> FiniteAugmentation:
    """i.i.d. [MASK] replacement: each of the L tokens is replaced by [MASK] with probability
    alpha. Inputs are every sequence of V**L in enumeration order (first position most
    significant); augmented views are indexed in base V+1 with digit V = [MASK]. Each input
    has 2**L views: p(a|x) = alpha^|S| (1 - alpha)^(L - |S|) for the masked set S."""
    _check_rate(alpha)
    pos = np.arange(length)
    seqs = np.indices((vocab_size,) * length).reshape(length, -1).T  # (n_x, L)
    masks = (np.arange(2**length)[:, None] >> pos[::-1]) & 1  # (2^L, L) 1 = masked
    k = masks.sum(1)
    weight = alpha**k * (1 - alpha) ** (length - k)  # (2^L,)
    place = (vocab_size + 1) ** pos[::-1]  # (L,)
    kept = seqs @ place  # (n_x,) index of the unmasked view
    masked_shift = (masks * (vocab_size - seqs[:, None, :])) @ place  # (n_x, 2^L)
    cols = (kept[:, None] + masked_shift).ravel()
    rows = np.repeat(np.arange(len(seqs)), len(masks))
    shape = (len(seqs), (vocab_size + 1) ** length)
    cond = sp.csr_matrix((np.tile(weight, len(seqs)), (rows, cols)), shape=shape)
    return FiniteAugmentation(cond, p_x)


def replacement_augmentation(p_x, vocab_size: int, length: int, alpha: float):
    """Random token replacement: each token is, with probability alpha, replaced by a token
    drawn uniformly from the V tokens (possibly itself). Views are sequences (A = X)."""
    _check_rate(alpha)
    q = (1 - alpha) * np.eye(vocab_size) + alpha / vocab_size  # (V, V) per-position p(a|x)
    cond = sp.csr_matrix(np.ones((1, 1)))
    for _ in range(length):
        cond = sp.kron(cond, sp.csr_matrix(q), format="csr")
    return FiniteAugmentation(cond, p_x)


def _check_rate(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"the augmentation rate alpha must be in (0, 1), got {alpha}")


# ------------------------------------------------------------------ closed forms
def mask_trace(vocab_size: int, length: int, alpha: float) -> float:
    """sum_i lambda_i = E K_X(X, X) of [MASK] replacement, for ANY P_X with full support on
    V**L: E_S[#values of x_keep] = (alpha + V (1 - alpha))^L."""
    return float((alpha + vocab_size * (1 - alpha)) ** length)


def mask_kappa_sq_product(marginals: np.ndarray, alpha: float) -> float:
    """kappa^2 of [MASK] replacement when P_X is a product of per-position marginals
    (L, V): K(x, x) = prod_j (alpha + (1 - alpha) / p_j(x_j)), largest at the rarest tokens."""
    marginals = np.asarray(marginals, float)
    return float(np.prod(alpha + (1 - alpha) / marginals.min(axis=1)))


def mask_eigenvalues_product(vocab_size: int, length: int, alpha: float) -> np.ndarray:
    """The spectrum of [MASK] replacement under a product P_X: (1 - alpha)^k with
    multiplicity C(L, k) (V - 1)^k, k = 0..L (eigenfunctions: products over k positions of
    zero-mean functions). Largest first. (V**L,)"""
    from math import comb

    lam = [((1 - alpha) ** k, comb(length, k) * (vocab_size - 1) ** k) for k in range(length + 1)]
    return np.concatenate([np.full(m, v) for v, m in lam])


def replacement_kappa_sq_uniform(vocab_size: int, length: int, alpha: float) -> float:
    """kappa^2 of random token replacement under the uniform P_X:
    (1 + (V - 1)(1 - alpha)^2)^L (and K(x, x) is the same at every x)."""
    return float((1 + (vocab_size - 1) * (1 - alpha) ** 2) ** length)


# ------------------------------------------------------------------ kernel diagonal, large L
def mask_log_kernel_diagonal_mc(
    seqs: np.ndarray,
    log_marginal: Callable[[np.ndarray, np.ndarray], np.ndarray],
    alpha: float,
    n_masks: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Monte-Carlo log K_X(x, x) of [MASK] replacement for any P_X whose marginals can be
    evaluated: K_X(x, x) = E_S[1 / P(X_keep = x_keep)] with S ~ Bernoulli(alpha)^L the masked
    positions (p(a|x)^2 / p(a) with p(a) = p(a|x) P(x_keep)). Unbiased for K, not log K.

    seqs: (n, L) int; log_marginal(seqs, keep) -> (n,) log P(X_keep = x_keep) with keep a
    (n, L) bool mask. -> (n,)
    """
    _check_rate(alpha)
    n, length = seqs.shape
    terms = np.empty((n_masks, n))
    for t in range(n_masks):
        keep = rng.random((n, length)) >= alpha
        terms[t] = -log_marginal(seqs, keep)
    return logsumexp(terms, axis=0) - np.log(n_masks)


def mask_log_kernel_diagonal_markov(chain, seqs: np.ndarray, alpha: float) -> np.ndarray:
    """Exact log K_X(x, x) of [MASK] replacement when P_X is a Markov chain, by summing over
    all 2^L masks in O(L^2): with kept positions k_1 < ... < k_r,
    P(x_keep) = mu_{k_1}(x_{k_1}) prod_t P^{k_{t+1} - k_t}(x_{k_t}, x_{k_{t+1}}), so the sum
    runs over the last kept position j:
        F[j] = (1 - alpha) [alpha^j / mu_j(x_j) + sum_{i<j} F[i] alpha^{j-i-1} / P^{j-i}(x_i, x_j)]
        K    = alpha^L + sum_j F[j] alpha^{L-1-j}.
    chain: a ``MarkovChain``; seqs: (n, L) int. -> (n,)
    """
    _check_rate(alpha)
    n, length = seqs.shape
    la, lb = np.log(alpha), np.log1p(-alpha)
    log_mu = np.log(chain.marginals(length))  # (L, V)
    with np.errstate(divide="ignore"):  # P^0 = I has zeros; gaps are >= 1
        log_pow = np.log(chain.transition_powers(length))  # (L + 1, V, V)
    log_f = np.empty((length, n))
    for j in range(length):
        acc = j * la - log_mu[j, seqs[:, j]]  # (n,) nothing kept before j
        for i in range(j):
            gap = log_pow[j - i][seqs[:, i], seqs[:, j]]
            acc = np.logaddexp(acc, log_f[i] + (j - i - 1) * la - gap)
        log_f[j] = lb + acc
    tail = log_f + (length - 1 - np.arange(length))[:, None] * la
    return np.logaddexp(length * la, logsumexp(tail, axis=0))


# ------------------------------------------------------------------ encoders and probes
def nystrom_encoder(
    aug: FiniteAugmentation, samples: np.ndarray, d: int
) -> tuple[np.ndarray, np.ndarray]:
    """The finite-sample encoder: the top-d eigenspace of the kernel estimated from m
    pretraining inputs, extended to every input by Nystrom.

    p(a) is replaced by its Monte-Carlo estimate p_hat(a) = mean_j p(a | x_j), giving
    K_hat(x, x') = sum_a p(a|x) p(a|x') / p_hat(a); the empirical operator
    (T f)(x) = mean_j K_hat(x, x_j) f(x_j) has the top eigenpair mu_0 = 1, constant. Repeated
    samples are merged: with the distinct sampled inputs u and their frequencies w_u, T
    restricted to them is W^1/2 K_hat(u, u') W^1/2 y = mu y (the same non-zero spectrum as
    the m x m matrix K_hat(x_i, x_j) / m), and the Nystrom extension
    psi_k(x) = K_hat(x, u) W^1/2 y_k / mu_k is normalised in the empirical L2 norm.

    samples: (m,) input indices. -> (psi (n_x, d), mu (d,)), the constant left out.
    """
    m = len(samples)
    unique, counts = np.unique(samples, return_counts=True)
    if not 1 <= d < len(unique):
        raise ValueError(f"d must be in [1, distinct samples - 1] = [1, {len(unique) - 1}]")
    weight = np.sqrt(counts / m)  # (u,) W^1/2
    sampled = aug.conditional[unique]  # (u, n_a)
    p_hat = sampled.T @ (counts / m)  # (n_a,)
    seen = np.flatnonzero(p_hat > 0)
    k_all = aug.conditional[:, seen] @ sp.diags(1 / p_hat[seen]) @ sampled[:, seen].T
    k_all = k_all.toarray()  # (n_x, u): K_hat(x, u)
    mu, vec = np.linalg.eigh(weight[:, None] * k_all[unique] * weight[None, :])
    top = np.argsort(mu)[::-1][1 : d + 1]  # mu_0 = 1 is the constant
    mu, vec = mu[top], vec[:, top]
    return k_all @ (weight[:, None] * vec) / mu, mu


def kernel_pca_encoder(
    aug: FiniteAugmentation, samples: np.ndarray, d: int, tol: float = 1e-12
) -> tuple[np.ndarray, float]:
    """The finite-sample encoder of the a-priori trace-gap bound (``bounds.trace_gap_sample
    _bound``): kernel PCA of the exact augmentation kernel on m pretraining inputs.

    In H_Gamma, with the orthonormal basis e_i = sqrt(lambda_i) psi_i (lambda_i > tol),
    K(., x) = sum_i e_i(x) e_i, the population operator T = E[K_X (x) K_X] is diag(lambda)
    (<f, T f>_H = ||f||^2_{P_X}) and the empirical one T_m = mean_j K_{x_j} (x) K_{x_j} has the
    matrix E^T W E (E = e_i at the distinct sampled inputs, W their frequencies). The encoder
    keeps the constant psi_0 = e_0 and takes the top-d eigenvectors v_k of T_m on the
    H-complement of the constant (coordinates i >= 1): phi_k = sum_i v_ik e_i. Its span
    V = span(1, phi) maximises Tr(P_V T_m) among (d+1)-dimensional spans containing 1.
    Unlike ``nystrom_encoder`` the kernel is exact (p(a) known): only P_X is sampled.

    samples: (m,) input indices. -> (phi (n_x, d), tau), tau = sum_{i=1..d} lambda_i -
    sum_k v_k^T diag(lambda) v_k, the trace gap of span(1, phi) (``trace_gap`` of phi)."""
    return kernel_pca_encoder_counts(aug, np.bincount(samples, minlength=aug.n_inputs), d, tol)


def kernel_pca_encoder_counts(
    aug: FiniteAugmentation, counts: np.ndarray, d: int, tol: float = 1e-12
) -> tuple[np.ndarray, float]:
    """``kernel_pca_encoder`` from the inputs' sample counts (n_x,) (e.g. a multinomial draw
    of m from P_X: m may then be 10^10 at no cost)."""
    counts = np.asarray(counts, dtype=np.float64)
    unique = np.flatnonzero(counts)
    counts = counts[unique]
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    keep = np.flatnonzero(lam > tol)[1:]  # i >= 1 with lambda_i > 0 (H's coordinates)
    if not 1 <= d <= len(keep):
        raise ValueError(f"d must be in [1, {len(keep)}]")
    basis = psi[:, keep] * np.sqrt(lam[keep])  # (n_x, r): e_i(x)
    rows = basis[unique] * np.sqrt(counts / counts.sum())[:, None]  # W^1/2 E
    mu, vec = np.linalg.eigh(rows.T @ rows)  # T_m on the complement of the constant
    top = vec[:, np.argsort(mu)[::-1][:d]]  # (r, d)
    tau = float(lam[keep[:d]].sum() - np.sum(lam[keep][:, None] * top**2))
    return basis @ top, max(tau, 0.0)


def ridge_probe(features: np.ndarray, y: np.ndarray, penalty: float) -> np.ndarray:
    """Linear probe b + w^T phi: argmin mean (b + F w - y)^2 + penalty ||w||^2 (bias free).
    features: (n, d), y: (n,) -> [b, w_1..w_d] (d + 1,)"""
    if penalty < 0:
        raise ValueError("penalty must be >= 0")
    mean_f, mean_y = features.mean(0), y.mean()
    fc, yc = features - mean_f, y - mean_y
    n, d = features.shape
    w = np.linalg.lstsq(fc.T @ fc / n + penalty * np.eye(d), fc.T @ yc / n, rcond=None)[0]
    return np.concatenate([[mean_y - mean_f @ w], w])


def constrained_probe(features: np.ndarray, y: np.ndarray, gram: np.ndarray, radius: float):
    """RKHS regression with a norm constraint (the paper's RKHS-regression probe):
    argmin mean (F w - y)^2 subject to w^T G w <= radius^2, where G is the H_Gamma Gram
    matrix of the feature functions (diag(1 / lambda) for eigenfunctions, the constant
    included as a feature). Solved through its Lagrangian (F^T F / n + mu G) w = F^T y / n,
    with mu >= 0 found by bisection. features: (n, k), gram: (k, k) -> w (k,)"""
    n = len(y)
    ftf, fty = features.T @ features / n, features.T @ y / n

    def solve(mu: float) -> np.ndarray:
        return np.linalg.lstsq(ftf + mu * gram, fty, rcond=None)[0]

    def norm(w: np.ndarray) -> float:
        return float(w @ gram @ w)

    w = solve(0.0)
    if norm(w) <= radius**2:
        return w
    lo, hi = 0.0, 1.0
    while norm(solve(hi)) > radius**2:
        lo, hi = hi, hi * 10
    for _ in range(100):  # ||w(mu)||_G decreases in mu
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if norm(solve(mid)) > radius**2 else (lo, mid)
    return solve(hi)


def predict(features: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """b + F w for the ``ridge_probe`` layout [b, w]. (n, d) -> (n,)"""
    return coef[0] + features @ coef[1:]
