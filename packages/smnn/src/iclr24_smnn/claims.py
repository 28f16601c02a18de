"""The paper's claims and the code's checks, computed from the measured metrics (never typed in)."""

from __future__ import annotations

from iclr24_common import Check, Claim, Metrics


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    """The paper's claims; ``preset`` is the ``Preset`` that produced ``metrics``."""
    claims = []
    s, m = metrics.mean("autompg/smnn/test_mse"), metrics.mean("autompg/mlp/test_mse")
    claims.append(
        Claim(
            id="autompg-accuracy",
            statement="On Auto MPG, SMNN's accuracy is comparable to an unconstrained network.",
            paper="Table 3: Auto MPG MSE, SMNN 7.44 +/- 1.20 (LMN 7.58 +/- 1.20)",
            measured=f"SMNN MSE {metrics.fmt('autompg/smnn/test_mse')} vs MLP "
            f"{metrics.fmt('autompg/mlp/test_mse')} (ratio {s / m:.3f}; "
            f"{preset.autompg_folds}-fold CV)",
            criterion="SMNN test MSE <= 1.3 x MLP test MSE, mean over seeds",
            holds=bool(s <= 1.3 * m),
        )
    )
    noisiest = max(preset.friedman_noises)
    key = f"friedman_noise{noisiest:g}"
    s, m = metrics.mean(f"{key}/smnn/test_mse"), metrics.mean(f"{key}/mlp/test_mse")
    claims.append(
        Claim(
            id="friedman-noise-robust",
            statement="Under heavy label noise the monotone prior makes SMNN generalise better "
            "than an MLP.",
            paper="Figure 3 (Friedman #1 at increasing noise): SMNN's denoised-test error grows "
            "less than the MLP's (no numbers found)",
            measured=f"noise {noisiest:g}: SMNN {metrics.fmt(f'{key}/smnn/test_mse')} vs MLP "
            f"{metrics.fmt(f'{key}/mlp/test_mse')} (ratio {s / m:.3f}; same-structure ablation "
            f"{metrics.fmt(f'{key}/same/test_mse')})",
            criterion=f"SMNN denoised test MSE <= 0.7 x MLP's at noise {noisiest:g}, mean over seeds",
            holds=bool(s <= 0.7 * m),
        )
    )
    return claims


def make_checks(metrics: Metrics, preset, tasks: list[str]) -> list[Check]:
    """Invariants: the structural monotonicity guarantee, and the flat cost of SMNN in m
    (which holds by construction here: the input width is fixed at 40)."""
    rates = [
        v
        for t in tasks
        for suffix in ("violation_rate", "violation_rate_init")
        for v in metrics.values(f"{t}/smnn/{suffix}")
    ]
    mlp = ", ".join(
        f"{t} {metrics.mean(f'{t}/mlp/violation_rate'):.3g}"
        for t in tasks
        if f"{t}/mlp/violation_rate" in metrics
    )
    checks = [
        Check(
            id="monotonicity-guarantee",
            statement="SMNN is monotone in the declared inputs for any weights, before and "
            "after training",
            paper="Theorem 1: monotone for any weights (exp weights, non-decreasing activations)",
            measured=f"max SMNN violation rate {max(rates):.3g} over {len(rates)} audits; "
            f"MLP mean rate: {mlp}",
            criterion="every SMNN audit (pairwise raises + autograd signs, float64, tol 1e-6) "
            "finds 0 violations",
            holds=max(rates) == 0.0,
        )
    ]
    ms = sorted(preset.scal_m)
    if len(ms) >= 2:
        lo = metrics.mean(f"scalability/smnn/epoch_seconds_m{ms[0]}")
        hi = metrics.mean(f"scalability/smnn/epoch_seconds_m{ms[-1]}")
        checks.append(
            Check(
                id="flat-cost-in-m",
                statement="with the input width fixed, SMNN's time per epoch does not grow with "
                "the number of monotone inputs (by construction: the inputs only move between "
                "the exp and the ReLU/confluence paths)",
                measured=f"SMNN {lo * 1e3:.1f} ms/epoch at m={ms[0]} -> {hi * 1e3:.1f} ms at "
                f"m={ms[-1]} (ratio {hi / lo:.2f})",
                criterion=f"time/epoch at m={ms[-1]} <= 1.5 x time at m={ms[0]}",
                holds=bool(hi <= 1.5 * lo),
            )
        )
    return checks
