"""The error decomposition of the linear probe: estimation term + approximation term.

The paper's Theorem 1 bounds the error of the norm-constrained linear probe (RKHS
regression) on an arbitrary encoder by an estimation term (fitting the
probe on n labels, governed by the augmentation complexity kappa and the bound B on
||f*||_H) plus an approximation term (how well the encoder's span approximates f*,
governed by the isometry constant epsilon and the spectrum). Its Theorem 2 bounds
the approximation term of the finite-sample encoder. The exact statements, with the
paper's constants, could not be retrieved while this package was written (see the README,
"What the paper reports, and where we looked"): the terms below are derived here, from the
same assumptions, with every constant stated, and are *not* the paper's constants.

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
