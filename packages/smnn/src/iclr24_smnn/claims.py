"""The claims of the reproduction, computed from the measured metrics (never typed in)."""

from __future__ import annotations

from iclr24_common import Claim, Metrics

from . import data as D


def make_claims(metrics: Metrics, preset, models) -> list[Claim]:
    """The four claims; ``preset`` is an :class:`~iclr24_smnn.experiment.Preset`."""
    claims = []
    tasks = [f"friedman_noise{nz:g}" for nz in preset.friedman_noises] + ["synthetic2d", "autompg"]
    if preset.paper_datasets:
        tasks += list(D.PAPER_DATASETS)
    smnn_rates = []
    for t in tasks:
        smnn_rates += metrics.values(f"{t}/smnn/violation_rate") + metrics.values(
            f"{t}/smnn/violation_rate_init"
        )
    mlp_part = ", ".join(
        f"{t} {metrics.mean(f'{t}/mlp/violation_rate'):.3g}"
        for t in tasks
        if f"{t}/mlp/violation_rate" in metrics
    )
    worst = max(smnn_rates)
    claims.append(
        Claim(
            id="monotonicity-guarantee",
            statement="SMNN is monotone in the declared inputs by construction, before and after training.",
            paper="method section: monotone for any weights (exp weights, non-decreasing activations)",
            measured=f"max SMNN violation rate {worst:.3g} over {len(smnn_rates)} audits "
            f"({len(tasks)} datasets, init + trained); MLP mean rate: {mlp_part}",
            criterion="every SMNN audit (pairwise raises + autograd signs, float64, tol 1e-6) finds 0 violations",
            holds=worst == 0.0,
        )
    )
    s, m = metrics.mean("autompg/smnn/test_mse"), metrics.mean("autompg/mlp/test_mse")
    claims.append(
        Claim(
            id="autompg-accuracy",
            statement="On Auto MPG, SMNN's accuracy is comparable to an unconstrained network.",
            paper="real-data results table: SMNN's Auto MPG MSE is in line with the state-of-the-art monotonic networks",
            measured=f"SMNN MSE {metrics.fmt('autompg/smnn/test_mse')} vs MLP {metrics.fmt('autompg/mlp/test_mse')}"
            f" (ratio {s / m:.3f}; {preset.autompg_folds}-fold CV)",
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
            statement="Under heavy label noise the monotone prior makes SMNN generalise better than an MLP.",
            paper="experiments, Friedman #1 at increasing noise: SMNN's denoised-test error grows less than the MLP's",
            measured=f"noise {noisiest:g}: SMNN {metrics.fmt(f'{key}/smnn/test_mse')} vs MLP "
            f"{metrics.fmt(f'{key}/mlp/test_mse')} (ratio {s / m:.3f}; same-structure ablation "
            f"{metrics.fmt(f'{key}/same/test_mse')})",
            criterion=f"SMNN denoised test MSE <= 0.7 x MLP's at noise {noisiest:g}, mean over seeds",
            holds=bool(s <= 0.7 * m),
        )
    )
    ms = sorted(preset.scal_m)
    t_lo = metrics.mean(f"scalability/smnn/epoch_seconds_m{ms[0]}")
    t_hi = metrics.mean(f"scalability/smnn/epoch_seconds_m{ms[-1]}")
    lmn = ""
    if f"scalability/lmn/epoch_seconds_m{ms[-1]}" in metrics:
        l_lo = metrics.mean(f"scalability/lmn/epoch_seconds_m{ms[0]}")
        l_hi = metrics.mean(f"scalability/lmn/epoch_seconds_m{ms[-1]}")
        lmn = f"; LMN {l_lo * 1e3:.1f} -> {l_hi * 1e3:.1f} ms"
    claims.append(
        Claim(
            id="scalability",
            statement="Training time per epoch does not grow with the number of monotone inputs.",
            paper="experiments, scalability test (m = 1..20 of 40 inputs): SMNN's training time stays flat",
            measured=f"SMNN {t_lo * 1e3:.1f} ms/epoch at m={ms[0]} -> {t_hi * 1e3:.1f} ms at m={ms[-1]} "
            f"(ratio {t_hi / t_lo:.2f}){lmn}",
            criterion=f"time/epoch at m={ms[-1]} <= 1.5 x time at m={ms[0]} (well under linear growth, "
            f"which would be {ms[-1] / ms[0]:g}x)",
            holds=bool(t_hi <= 1.5 * t_lo),
        )
    )
    return claims
