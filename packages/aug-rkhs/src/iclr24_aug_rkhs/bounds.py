"""The error decomposition of the linear probe: estimation term + approximation term.

The paper's Theorem 1 bounds the error of the norm-constrained linear probe (RKHS
regression, its estimator (9)) on an arbitrary encoder of the form (10) by an estimation
term (fitting the probe on n labels, governed by the augmentation complexity kappa of its
Definition 2 and the bound B on ||f*||_H) plus an approximation term governed by the
isometry constant epsilon and the encoder's "trace gap" tau (its Definition 3: the ratio
trace Tr(G^{-1} F) of the encoder against its maximum, the sum of the top eigenvalues). Its
Theorem 2 (equation (20)) specialises this to the encoder that extracts the top-d
eigenspace of the kernel estimated from finite pretraining samples. This much is known from
the public reviews of the paper (OpenReview Ax2yRhCQr1); the statements themselves, with
their constants, could not be read (README, "What the paper reports, and where we looked").
The terms below are derived here from the same assumptions, every constant stated; they are
*not* the paper's constants.

Setting (our reading of the paper's assumptions): f* in H_Gamma with ||f*||_H <= B and the
isometry (1 - eps) ||f*||_H^2 <= ||f*||^2_{P_X}; y = f*(x) + noise with |y| <= Y.
"""

from __future__ import annotations

import math


def approximation_bound(epsilon: float, rkhs_norm_sq: float, lambda_next: float) -> float:
    """||f* - P_d f*||^2 <= eps ||f*||_H^2 / (1 - lambda_{d+1}), P_d the projection on the
    top-d eigenspace; it follows from the isometry property: with
    u_i = <f*, psi_i>, a_i = u_i^2 / lambda_i, the isometry reads
    sum_i a_i (1 - lambda_i) <= eps sum_i a_i, and for i > d
    u_i^2 <= a_i <= a_i (1 - lambda_i) / (1 - lambda_{d+1})."""
    if lambda_next >= 1:
        return float("inf")
    return epsilon * rkhs_norm_sq / (1.0 - lambda_next)


def trace_gap_approximation_bound(
    epsilon: float, rkhs_norm_sq: float, lambda_next: float, trace_gap: float
) -> float:
    """The approximation term for an arbitrary encoder whose span V (constant included,
    dimension d + 1) has trace gap tau = sum_{i <= d} lambda_i - Tr(G_H^{-1} G_L2):

        min_{h in V, ||h||_H <= B} ||h - f*||^2 <= B^2 (tau^1/3 + eps^1/3)^3 / (1 - lambda_{d+1}),

    B = ||f*||_H; it equals ``approximation_bound`` at tau = 0 and needs no eigen-gap
    lambda_d - lambda_{d+1}. Derivation (ours): with f* = T^1/2 g (||g|| = B) and
    W = T^-1/2 V, the H-projection h = T^1/2 P_W g lies in V with ||h||_H <= B, and
    ||f* - h|| <= ||(I - P_W) g||. Expanding Tr(P_W T) = sum_i lambda_i ||P_W psi_i||^2 gives
    sum_{i <= d} (lambda_i - lambda_{d+1}) ||(I - P_W) psi_i||^2 <= tau. Split g at a level t in
    (lambda_{d+1}, 1): the part on lambda_i >= t contributes <= B sqrt(tau / (t - lambda_{d+1}))
    (Cauchy-Schwarz), the rest has norm^2 <= eps B^2 / (1 - t) (the isometry); minimising
    (sqrt(tau / x) + sqrt(eps / y))^2 over x + y = 1 - lambda_{d+1} gives the cube formula."""
    if trace_gap < -1e-9 or epsilon < -1e-12:
        raise ValueError("trace_gap and epsilon must be >= 0")
    if lambda_next >= 1:
        return float("inf")
    cube = max(trace_gap, 0.0) ** (1 / 3) + max(epsilon, 0.0) ** (1 / 3)
    return rkhs_norm_sq * cube**3 / (1.0 - lambda_next)


def estimation_bound(kappa: float, radius: float, y_max: float, n: int, delta: float) -> float:
    """With probability >= 1 - delta over n i.i.d. labels, the probe constrained to
    {f in span(psi_0..psi_d): ||f||_H <= R} has excess risk over the best f in that set of at
    most

        4 (kappa R + Y) kappa R / sqrt(n) + 2 (kappa R + Y)^2 sqrt(log(2 / delta) / (2 n)).

    Derivation (ours): |f(x)| <= ||f||_H sqrt(K(x, x)) <= kappa R, so the squared loss lies in
    [0, b], b = (kappa R + Y)^2, and is 2 (kappa R + Y)-Lipschitz in f(x); the Rademacher
    complexity of the ball is <= R kappa / sqrt(n) (Mohri et al., Foundations of ML, Thm
    6.12); uniform deviation (their Thm 3.3) with Talagrand's contraction (Lemma 5.7) for the
    fitted probe, Hoeffding for the best f, each with delta / 2."""
    if n < 1 or not 0 < delta < 1:
        raise ValueError("n must be >= 1 and delta in (0, 1)")
    scale = kappa * radius + y_max
    return 4 * scale * kappa * radius / math.sqrt(n) + 2 * scale**2 * math.sqrt(
        math.log(2 / delta) / (2 * n)
    )


def probe_error_bound(
    *,
    epsilon: float,
    rkhs_norm_sq: float,
    lambda_next: float,
    kappa: float,
    y_max: float,
    n: int,
    delta: float,
) -> dict[str, float]:
    """The two terms and their sum for the constrained probe on the top-d eigenspace with
    radius R = ||f*||_H: ||f_hat - f*||^2 <= approximation + estimation (w.p. >= 1 - delta),
    because L(f) = ||f - f*||^2 + noise variance and P_d f* lies in the constraint set."""
    approx = approximation_bound(epsilon, rkhs_norm_sq, lambda_next)
    est = estimation_bound(kappa, math.sqrt(rkhs_norm_sq), y_max, n, delta)
    return {"approximation": approx, "estimation": est, "total": approx + est}


def finite_sample_error_bound(
    *,
    epsilon: float,
    rkhs_norm_sq: float,
    lambda_next: float,
    trace_gap: float,
    kappa: float,
    y_max: float,
    n: int,
    delta: float,
) -> dict[str, float]:
    """Theorem 2's form for an estimated encoder (our constants): the constrained probe of
    radius ||f*||_H on span(1, phi_1..phi_d) has, w.p. >= 1 - delta,
    ||f_hat - f*||^2 <= trace-gap approximation term + the same estimation term as Theorem 1
    (the class lies in the H-ball, so |h(x)| <= kappa ||f*||_H). Where the paper bounds tau
    a priori from the m pretraining samples, tau here is measured exactly (the operator is
    known on a finite space)."""
    approx = trace_gap_approximation_bound(epsilon, rkhs_norm_sq, lambda_next, trace_gap)
    est = estimation_bound(kappa, math.sqrt(rkhs_norm_sq), y_max, n, delta)
    return {"approximation": approx, "estimation": est, "total": approx + est}


def trace_gap_sample_bound(kappa_sq: float, m: int, d: int, delta: float) -> float:
    """The a-priori bound on the trace gap of the encoder learned from m pretraining inputs
    (``kernel_pca_encoder``: kernel PCA of the augmentation kernel on m i.i.d. draws of P_X):
    with probability >= 1 - delta,

        tau <= sqrt(2 d) kappa^2 (1 + sqrt(2 log(1 / delta))) / sqrt(m),

    the rate m^-1/2, with no eigen-gap lambda_d - lambda_{d+1} (the paper's Theorem 2 bounds
    the same quantity without a gap; its statement and constants could not be read, so this
    bound and its constants are ours). Derivation: on H_Gamma, T = E[K_X (x) K_X] and
    T_m = mean_j K_{x_j} (x) K_{x_j}; tau = Tr(P* T) - Tr(P T) with P* = P_0 + Q* (the top
    span) and P = P_0 + Q (the encoder's; P_0 on the constant, Q the top-d of T_m on its
    complement, so Tr(P T_m) >= Tr(P* T_m)). Hence
    tau <= Tr((Q* - Q)(T - T_m)) <= ||Q* - Q||_HS ||T - T_m||_HS <= sqrt(2 d) ||T - T_m||_HS.
    Each K_x (x) K_x has Hilbert-Schmidt norm K(x, x) <= kappa^2, so
    E ||T - T_m||_HS <= kappa^2 / sqrt(m), and replacing one draw moves ||T - T_m||_HS by at
    most 2 kappa^2 / m (McDiarmid): ||T - T_m||_HS <= kappa^2 (1 + sqrt(2 log(1/delta))) /
    sqrt(m) with probability >= 1 - delta."""
    if m < 1 or d < 1 or not 0 < delta < 1:
        raise ValueError("m and d must be >= 1 and delta in (0, 1)")
    return math.sqrt(2 * d) * kappa_sq * (1 + math.sqrt(2 * math.log(1 / delta))) / math.sqrt(m)


def approximation_bound_l2(epsilon: float, l2_norm_sq: float, lambda_next: float) -> float:
    """``approximation_bound`` written with the L2(P_X) norm of f* instead of its RKHS norm:
    the isometry (1 - eps) ||f*||_H^2 <= ||f*||^2 gives ||f*||_H^2 <= ||f*||^2 / (1 - eps), so
    ||f* - P_d f*||^2 <= eps / (1 - eps) ||f*||^2 / (1 - lambda_{d+1}). At the exact (smallest)
    eps, eps ||f*||_H^2 = ||f*||_H^2 - ||f*||^2 = eps / (1 - eps) ||f*||^2 and the two forms
    are the same number; for any larger eps (an assumed constant) this one is the looser, and
    it is infinite at eps = 1."""
    if epsilon >= 1 or lambda_next >= 1:
        return float("inf")
    return epsilon / (1.0 - epsilon) * l2_norm_sq / (1.0 - lambda_next)
