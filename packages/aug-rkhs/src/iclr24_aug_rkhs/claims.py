"""The paper's claims and the code's checks, computed from the metrics.

The paper is a theory paper: its claims are statements about every augmentation and
encoder, measured here on an exact finite space and on real text. There is no competing
method to run; where a claim compares (the sweet spot), it compares mask rates under the
same encoder, probe and data, on paired per-seed values with a stated margin. What holds by
construction (lambda_0 = 1, the closed forms, kappa's growth in L and its fall with the
mask rate under a bigram P_X, and every bound: they are theorems, here in a form derived in
``bounds.py``, evaluated exactly) is a check; a bound is shown with its slack and labelled
vacuous past 100x.

Regimes: the trace gap's decay in m is a statement of a theorem, which holds on any finite
space (the paper's regime); the two sweet spots are the paper's observation on masked
language modelling of real text (wikipedia-simple, word-piece tokens), far from the exact
finite space and from a 2-layer character model: below the paper's regime. The decay is
measured only where the a-priori bound is informative at >= 3 sizes m, a precondition of
ours, not the paper's: the premise ``bound-informative``.
"""

from __future__ import annotations

import numpy as np

from iclr24_common import (
    Check,
    Claim,
    Metrics,
    Premise,
    Source,
    all_of,
    bound_check,
    none_of,
    superiority,
    threshold,
)

SEARCHED = (
    "searched: arXiv, ar5iv, Hugging Face papers (its markdown), ICLR and aggregator pages "
    "(only their opening sections are stored) and the public OpenReview reviews (they give the "
    "theorems' structure and kappa ~ 1e100 on wikipedia-simple, not the statements); no code"
)

NOTICEABLE = 1.05
"""A rate is "worse" than the best when its error is more than 5 % higher (the repository's
"comparable" = within 5 %; the paper states no number). Set at 75eac5c, when the v3 code
rescored the run on file: the end ratios (2.98 and 1.12) were known then."""
NOTICEABLE_SOURCE = Source.ours(
    "5 % worse than the best rate, the repository's 'comparable' level; the paper states no "
    "number. Not fixed before the data: set when the v3 code rescored the run on file, whose "
    "end ratios (2.98 and 1.12) were known", commit="75eac5c")  # fmt: skip
SWEET_FACTOR_SOURCE = Source.ours(
    "the weak rate loses at least half its accuracy against the best (error x2): the "
    "package's pre-set factor, fixed with its first implementation before any run; the "
    "paper gives none", commit="800d7a7")  # fmt: skip

RATE_TOL = 0.1
"""The trace gap's decay in m "at least at the bound's rate m^-1/2": a per-seed log-log slope
below -1/2 + 0.1 (0.1 in the exponent is a factor 10^0.1 = 1.26 per decade of m; fixed
before the sweep was run, after a probe at m <= 3200 had shown slopes near -1.3 at alpha =
0.8 and none at 0.2 and 0.5; the paper states no number)."""
RATE_SOURCE = Source.ours(
    "0.1 in the exponent (a factor 10^0.1 = 1.26 per decade of m) above the bound's -1/2; "
    "fixed before the sweep was run, after a probe at m <= 3200 (slopes near -1.3 at alpha "
    "0.8, none at 0.2 and 0.5); the paper states no number", commit="61bde66")  # fmt: skip

MLM_MARGIN = 0.01
"""One point of probe test error: about one seed's binomial standard error on the
``mlm-demo`` test set (1500 windows, error ~0.8: sqrt(0.8 * 0.2 / 1500) = 0.010)."""
MLM_SOURCE = Source.derived(
    "one seed's binomial SE of the probe's test error on the mlm-demo test set: "
    "sqrt(0.8 x 0.2 / 1500) = 0.010")  # fmt: skip

# What the paper's sweet spot needs: its NLP experiment (the corpus named by the public
# OpenReview discussion; the model, steps and tasks could not be read)
MLM_PAPER = ("masked language modelling of real text: wikipedia-simple with word-piece tokens "
             "(kappa ~ 1e100; OpenReview Ax2yRhCQr1, reviewer 4), a transformer encoder and NLP "
             "downstream tasks (the paper's sizes and tasks not retrieved)")  # fmt: skip


R2_MIN = 0.98
"""kappa's log-linearity in L: the linear fit of log kappa^2 in L explains >= 98 % of its
variance on every seed and rate (the package's criterion, registered per seed with the first
implementation at 800d7a7, before any run: ``r2 >= 0.98`` on the smallest R^2; loosened to
mean - 2 SE at 75eac5c after a seed fell below it, restored here per seed, issue 50)."""
R2_SOURCE = ("R^2 >= 0.98 on every seed and rate, ours: the package's linearity criterion, "
             "registered per seed with its first implementation (800d7a7) before any run; the "
             "paper states no number; the v3 loosening to mean - 2 SE, made after a seed "
             "failed, is undone")  # fmt: skip

MSWEEP_GAPFREE = "msweep_gapfree"
"""Metric group of the m sweep's gap-free case (the gapped case: ``msweep``)."""
GAP_TOL = 1e-9
"""An eigen-gap below this is zero (the block's eigenvalues agree to rounding, ~1e-15)."""


def msweep_cases(preset) -> list[tuple[str, int]]:
    """The m sweep's cases, (metric group, encoder dimension d): the gapped one at ``d`` and,
    unless ``msweep_gapfree_d`` is 0 (or absent), the gap-free one."""
    gapfree = getattr(preset, "msweep_gapfree_d", 0)
    return [("msweep", preset.d)] + ([(MSWEEP_GAPFREE, gapfree)] if gapfree else [])


def _key(alpha: float) -> str:
    return f"a{alpha:g}"


def _per_rate(metrics: Metrics, group: str, name: str, alphas) -> np.ndarray:
    return np.array([metrics.mean(f"{group}/{_key(a)}/{name}") for a in alphas])


def _ratio(metrics: Metrics, a: str, b: str) -> dict[int, float]:
    """``a / b`` per seed (on the seeds both have)."""
    da, db = metrics.by_seed(a), metrics.by_seed(b)
    return {s: da[s] / db[s] for s in sorted(set(da) & set(db))}


def _worst(errors: np.ndarray, bounds: np.ndarray) -> tuple[int, int]:
    """(rate, seed) index where error / bound is largest: the bound holds everywhere iff it
    holds there, and its slack there is the smallest."""
    return np.unravel_index(int(np.argmax(errors / bounds)), errors.shape)


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    return [
        _kappa_log_linear(metrics, preset),
        _sweet_spot(metrics, preset),
        *([_trace_gap_rate(metrics, preset)] if preset.msweep_rates else []),
        *([_mlm_sweet_spot(metrics, preset)] if preset.mlm_rates else []),
    ]


def make_premises(metrics: Metrics, preset) -> list[Premise]:
    if not preset.msweep_rates:
        return []
    gapfree = [_no_eigengap(metrics, preset)] if len(msweep_cases(preset)) > 1 else []
    return [_bound_informative(metrics, preset), *gapfree]


def _no_eigengap(metrics: Metrics, preset) -> Premise:
    """The gap-free case has no eigen-gap: lambda_d - lambda_{d+1} = 0 at every rate."""
    group, d = msweep_cases(preset)[1]
    gaps = {a: metrics.by_seed(f"{group}/{_key(a)}/eigengap") for a in preset.msweep_rates}
    seeds = sorted(set.intersection(*(set(g) for g in gaps.values())))
    count = {s: float(sum(abs(gaps[a][s]) > GAP_TOL for a in gaps)) for s in seeds}
    gapped = metrics.by_seed(f"msweep/{_key(preset.msweep_rates[0])}/eigengap")
    return Premise(
        id="no-eigengap",
        statement=f"The m sweep's gap-free case (d = {d}) has no eigen-gap: lambda_d = "
        "lambda_{d+1} at every rate, so its top-d eigenspace is not unique and a classical "
        "(Davis-Kahan) subspace bound says nothing",
        paper="not a statement of the paper: the precondition of testing Theorem 2 in the "
        "case it is about (no eigen-gap assumed)",
        measured="lambda_d - lambda_{d+1} by rate: "
        + ", ".join(f"{a:g}: {max(abs(v) for v in g.values()):.1e}" for a, g in gaps.items())
        + (f" (the gapped case, d = {preset.d}: {np.mean(list(gapped.values())):.3g} at "
           f"{preset.msweep_rates[0]:g})" if gapped else ""),
        criterion=f"rates with |lambda_d - lambda_{{d+1}}| > {GAP_TOL:g}: none",
        test=none_of(count),
    )  # fmt: skip


def _fitted_m(metrics: Metrics, preset, alpha: float, group: str = "msweep") -> list[int]:
    """The sizes m of the sweep where the a-priori bound is below lambda_1 + .. + lambda_d
    (the largest trace gap possible): where it predicts a decay."""
    k = f"{group}/{_key(alpha)}"
    return [m for m in preset.msweep_m
            if metrics.mean(f"{k}/m{m}/bound") < metrics.mean(f"{k}/ceiling")]  # fmt: skip


def _bound_informative(metrics: Metrics, preset) -> Premise:
    rates, cases = preset.msweep_rates, msweep_cases(preset)
    slope = {(g, a): metrics.by_seed(f"{g}/{_key(a)}/slope") for g, _ in cases for a in rates}
    seeds = sorted(set.intersection(*(set(s) for s in slope.values())))
    # a slope is fitted only over >= 3 such m with a positive trace gap (else NaN)
    unfitted = {s: sum(bool(np.isnan(v[s])) for v in slope.values()) for s in seeds}
    parts = []
    for g, d in cases:
        fitted = {a: _fitted_m(metrics, preset, a, g) for a in rates}
        parts.append(
            f"d = {d}{' (gap-free)' if g != 'msweep' else ''}: "
            + ", ".join(f"{a:g}: {len(f)} of {len(preset.msweep_m)}" for a, f in fitted.items())
        )
    return Premise(
        id="bound-informative",
        statement="At every rate of the m sweep (each case: gapped and gap-free), the a-priori "
        "trace-gap bound is informative (below lambda_1 + .. + lambda_d, the largest trace gap "
        "possible) at >= 3 sizes m with a positive measured trace gap, so that the slope is "
        "fitted where the bound predicts a decay",
        paper="not a statement of the paper: the precondition of measuring Theorem 2's "
        "dependence on m (the sizes m and the rates are ours)",
        measured="informative m by rate, " + "; ".join(parts)
        + f"; (case, rate, seed) without a fitted slope: {sum(unfitted.values())} of "
        f"{len(slope) * len(seeds)}",
        criterion="(case, rate, seed) with fewer than 3 such m: none",
        test=none_of(unfitted),
    )  # fmt: skip


def _decomposition(metrics: Metrics, preset) -> Check:
    alphas = preset.alphas
    errors = np.array([metrics.values(f"ideal/{_key(a)}/error") for a in alphas])  # (rates, seeds)
    bounds = _per_rate(metrics, "spectrum", "bound", alphas)
    approx = _per_rate(metrics, "spectrum", "approx_bound", alphas)
    est = _per_rate(metrics, "spectrum", "estimation_bound", alphas)
    i, j = _worst(errors, bounds[:, None] * np.ones_like(errors))
    best = int(np.argmin(bounds))
    check = bound_check(
        id="decomposition",
        statement="The error of the norm-constrained linear probe on the ideal encoder is at "
        "most an estimation term (RKHS regression on n labels, governed by kappa) plus an "
        "approximation term (<= eps ||f*||_H^2 / (1 - lambda_{d+1}) for the top-d eigenspace), "
        f"each with probability >= {1 - preset.delta:g} (Theorem 1's form); shown at the rate "
        f"and seed where error / bound is largest (alpha={alphas[i]:g})",
        paper="Theorem 1; no numeric instance in the paper (none found; "
        f"{SEARCHED}); the paper's constants were not retrievable, the estimation "
        "constants here are ours (bounds.py). Setting: ours (exact finite space)",
        measured=float(errors[i, j]),
        bound=float(bounds[i]),
        rederived=True,
        why="a theorem: bounds.py derives both terms from the isometry property and a "
        "Rademacher bound for the ball ||f||_H <= ||f*||_H (each constant proved in its "
        "docstring); the probe and the spectrum are exact on the finite space",
        what="probe error",
    )
    check.measured += (
        f"; error / bound <= {(errors / bounds[:, None]).max():.2g} over {len(alphas)} rates x "
        f"{errors.shape[1]} seeds; tightest bound {bounds[best]:.3g} at alpha={alphas[best]:g} "
        f"(approximation {approx[best]:.3g} + estimation {est[best]:.3g}; Var f* = 1, so the "
        f"bound is {'vacuous' if bounds.min() > 1 else 'informative'} at n={preset.n_labels})"
    )
    check.criterion = "probe error <= bound at every rate on every seed (the worst one shown)"
    check.holds = bool(np.all(errors <= bounds[:, None]))
    return check


def _finite_sample_bound(metrics: Metrics, preset) -> Check:
    alphas = preset.alphas
    seeds_of = lambda name: np.array([metrics.values(f"finite/{_key(a)}/{name}") for a in alphas])  # noqa: E731
    errors, bounds = seeds_of("constrained_error"), seeds_of("bound")  # (rates, seeds)
    approx, approx_err = seeds_of("approx_bound"), seeds_of("approx_error")
    tau = seeds_of("trace_gap")
    i, j = _worst(errors, bounds)
    best = int(np.argmin(bounds.mean(1)))
    check = bound_check(
        id="finite-sample-bound",
        statement="For the encoder estimated from m pretraining samples (top-d eigenspace of "
        "the estimated kernel), the constrained probe's error is at most an approximation "
        "term governed by the encoder's trace gap tau and eps, plus the estimation term, with "
        f"probability >= {1 - preset.delta:g} (Theorem 2's form); shown at the rate and seed "
        f"where error / bound is largest (alpha={alphas[i]:g})",
        paper="Theorem 2 (equation (20)); no numeric instance in the paper (none found; "
        f"{SEARCHED}); the paper's constants and its a-priori bound on tau in m were not "
        "retrievable: the trace-gap term here is ours (bounds.py) with tau measured exactly. "
        "Setting: ours (exact finite space)",
        measured=float(errors[i, j]),
        bound=float(bounds[i, j]),
        rederived=True,
        why="a theorem: bounds.py derives the trace-gap approximation term (the cube formula, "
        "proved in its docstring) and the same estimation term as Theorem 1; tau is computed "
        "exactly on the finite space",
        what="constrained-probe error",
    )
    check.measured += (
        "; trace gap tau by rate: "
        + ", ".join(f"{a:g}: {t:.2g}" for a, t in zip(alphas, tau.mean(1)))
        + f"; approximation term {approx.mean(1).min():.3g}..{approx.mean(1).max():.3g} against "
        f"the encoder's measured approximation error {approx_err.mean(1).min():.3g}.."
        f"{approx_err.mean(1).max():.3g}; tightest total bound {bounds.mean(1)[best]:.3g} at "
        f"alpha={alphas[best]:g} (approximation {approx.mean(1)[best]:.3g} + estimation "
        f"{bounds.mean(1)[best] - approx.mean(1)[best]:.3g}; Var f* = 1, so the bound is "
        f"{'vacuous' if bounds.min() > 1 else 'informative'} at n={preset.n_labels}); "
        f"constrained-probe error {errors.mean(1).min():.3g}..{errors.mean(1).max():.3g}, "
        f"error / bound <= {(errors / bounds).max():.2g}"
    )
    check.criterion = (
        "constrained-probe error <= bound at every rate on every seed (the worst shown)"
    )
    check.holds = bool(np.all(errors <= bounds))
    return check


def _kappa_checks(metrics: Metrics, preset) -> list[Check]:
    """kappa^2 of [MASK] replacement on text under the corpus's bigram chain: its growth in L
    and its fall with the mask rate follow from the chain (checks, not claims)."""
    alphas, lengths = preset.text_alphas, preset.text_lengths
    slope = {a: metrics.by_seed(f"text/{_key(a)}/slope") for a in alphas}
    r2 = {a: metrics.by_seed(f"text/{_key(a)}/r2") for a in alphas}
    iid = {a: metrics.mean(f"text/{_key(a)}/iid_slope") for a in alphas}
    rows = "; ".join(
        f"alpha={a:g}: {metrics.mean(f'text/{_key(a)}/slope'):.3f} +/- "
        f"{metrics.se(f'text/{_key(a)}/slope'):.1g} (i.i.d. closed form {iid[a]:.3f}), R^2 "
        f"{metrics.mean(f'text/{_key(a)}/r2'):.4f} (smallest {min(r2[a].values()):.4f})"
        for a in alphas
    )
    pairs = list(zip(alphas, alphas[1:]))
    gaps = [metrics.gap(f"text/{_key(a)}/slope", f"text/{_key(b)}/slope") for a, b in pairs]
    # (lengths, rates, seeds): log10 kappa^2 on the same windows at every rate
    curve = np.array([[metrics.values(f"text/{_key(a)}/L{n}/log10_kappa_sq") for a in alphas]
                      for n in lengths])  # fmt: skip
    rise = float(np.diff(curve, axis=1).max())  # the largest step up as the rate rises
    setting = (
        f"Setting: {metrics.mean('text/vocab_size'):.0f}-character text of pydoc_data.topics "
        "(not wikipedia-simple), P_X its bigram chain, lengths "
        f"{min(lengths)}-{max(lengths)}"
    )
    paper = (
        "the paper's analysis of masking: kappa grows exponentially in the sequence length and "
        f"falls with the mask rate (the paper's own numbers and closed forms not retrieved; "
        f"{SEARCHED})"
    )
    return [
        Check(
            id="kappa-exponential-in-length",
            statement="The augmentation complexity of [MASK] replacement grows exponentially "
            "with the sequence length: log kappa^2 rises in L at a positive rate per token",
            paper=paper,
            measured=f"log10 kappa^2 per token (mean +/- SE over seeds): {rows}. " + setting,
            criterion="at every rate, on every seed: the slope of log10 kappa^2 in L above 0 "
            "(the R^2 of the linear fit shown)",
            holds=all(v > 0 for a in alphas for v in slope[a].values()),
            why="under a full-support bigram chain K_X(x, x) = E_S[1 / P(X_keep = x_keep)], "
            "and every kept position after the first multiplies 1 / P by a factor between "
            "1 / p_max > 1 and 1 / p_min (entries of the chain's powers), so log K_X(x, x) "
            "lies between L log(alpha + (1 - alpha) / p_max) and L log(alpha + (1 - alpha) / "
            "p_min) up to constants: two lines of positive slope in L, for every window",
        ),
        Check(
            id="kappa-falls-with-mask-rate",
            statement="Stronger masking does not raise the augmentation complexity: at every "
            "length, kappa^2 is non-increasing in the mask rate",
            paper=paper,
            measured=f"largest rise of log10 kappa^2 from one rate to the next, over "
            f"{len(lengths)} lengths x {curve.shape[2]} seeds: {rise:+.2g} (negative: it "
            "always falls); per-token slope(alpha_i) - slope(alpha_{i+1}): "
            + ", ".join(f"{a:g}->{b:g}: {g}" for (a, b), g in zip(pairs, gaps))
            + ". "
            + setting,
            criterion="on every seed and length, log10 kappa^2 (the same windows at every "
            "rate) does not rise from one rate to the next (1e-12)",
            holds=rise <= 1e-12,
            why="masking one more position can only raise P(X_keep = x_keep) (it marginalises "
            "a coordinate), so coupling the masks (position j masked iff U_j < alpha) makes "
            "K_X(x, x) = E_S[1 / P(X_keep = x_keep)] non-increasing in alpha for every window, "
            "and so their maximum",
        ),
    ]


def _kappa_log_linear(metrics: Metrics, preset) -> Claim:
    """log kappa^2 is a straight line in L (R^2 >= R2_MIN on every seed and rate): the
    measured half of "kappa grows exponentially in L" that the construction does not give
    (the check kappa-exponential-in-length proves two bounding lines, not one)."""
    alphas, lengths = preset.text_alphas, preset.text_lengths
    r2 = {a: metrics.by_seed(f"text/{_key(a)}/r2") for a in alphas}
    seeds = sorted(set.intersection(*(set(v) for v in r2.values())))
    below = {s: float(sum(r2[a][s] < R2_MIN for a in alphas)) for s in seeds}
    rows = ", ".join(f"{a:g}: {min(r2[a].values()):.4f}..{max(r2[a].values()):.4f}"
                     for a in alphas)  # fmt: skip
    return Claim(
        id="kappa-log-linear-in-length",
        statement="kappa of [MASK] replacement grows exponentially in the sequence length at "
        f"a constant rate: log kappa^2 is a straight line in L (R^2 of the linear fit >= "
        f"{R2_MIN:g} on every seed and rate)",
        paper="the paper's analysis of masking: kappa grows exponentially in the sequence "
        f"length (the paper's own numbers not retrieved; {SEARCHED})",
        measured=f"R^2 of log10 kappa^2 vs L (smallest..largest over seeds) by rate: {rows}; "
        f"(seed, rate) pairs below {R2_MIN:g}: {int(sum(below.values()))} of "
        f"{len(seeds) * len(alphas)}. Setting: {metrics.mean('text/vocab_size'):.0f}-character "
        f"text of pydoc_data.topics, P_X its bigram chain, L {min(lengths)}-{max(lengths)}",
        criterion=f"exact count of (seed, rate) pairs whose R^2 is below {R2_MIN:g} ("
        f"{R2_SOURCE})",
        test=none_of(below),
        regime="below",
        needs=f"{MLM_PAPER}; ours a 95-character bigram chain fitted to pydoc_data.topics, "
        f"windows of {min(lengths)}-{max(lengths)} characters",
        test_set="none",
    )  # fmt: skip


def _sweet_spot(metrics: Metrics, preset) -> Claim:
    alphas = preset.alphas
    errors = _per_rate(metrics, "finite", "error", alphas)
    ideal = _per_rate(metrics, "ideal_ridge", "error", alphas)
    best = alphas[int(np.argmin(errors))]
    low, lo_end, hi_end = preset.low_rate, alphas[0], alphas[-1]
    name = lambda a: f"finite/{_key(a)}/error"  # noqa: E731
    r_low, r_first, r_last = (_ratio(metrics, name(a), name(best)) for a in (low, lo_end, hi_end))
    interior = best not in (lo_end, hi_end)
    curve = ", ".join(f"{a:g}: {e:.3g}" for a, e in zip(alphas, errors))
    mean = lambda r: float(np.mean(list(r.values())))  # noqa: E731
    return Claim(
        id="sweet-spot",
        statement="There is a sweet spot in the augmentation strength: with the finite-sample "
        "encoder, too weak masking (huge kappa) and too strong masking (large isometry "
        f"constant) both hurt the downstream error (the weak rate {low:g} at least "
        f"{preset.sweet_factor:g}x the best rate's error, both ends of the sweep more than "
        f"{NOTICEABLE - 1:.0%} above it)",
        paper="the paper's NLP experiments: a sweet spot in the mask rate of masked language "
        f"modelling on NLP tasks (the paper's numbers not retrieved, {SEARCHED})",
        measured=f"best rate {best:g} (interior: {'yes' if interior else 'no'}); per-seed "
        f"error ratios to the best rate: at {low:g} {mean(r_low):.2f}, at {lo_end:g} "
        f"{mean(r_first):.2f}, at {hi_end:g} {mean(r_last):.3f}; finite-sample error by rate: "
        f"{curve}; ideal encoder (same probe) {ideal.min():.3g}..{ideal.max():.3g}. Setting: "
        f"ours (V={preset.vocab_size}, L={preset.length}, m={preset.n_pretrain}, d={preset.d}, "
        f"n={preset.n_labels})",
        criterion=f"per-seed error ratio (rate / best rate {best:g}, the best by mean error): at "
        f"{low:g} above {preset.sweet_factor:g}, and at both ends {lo_end:g} and {hi_end:g} "
        f"above {NOTICEABLE:g} (5 % worse: the best rate is interior; a best rate at an end has "
        "ratio 1 there and fails)",
        test=all_of(
            threshold(r_low, threshold=preset.sweet_factor, source=SWEET_FACTOR_SOURCE),
            threshold(r_first, threshold=NOTICEABLE, source=NOTICEABLE_SOURCE),
            threshold(r_last, threshold=NOTICEABLE, source=NOTICEABLE_SOURCE),
        ),
        regime="below",
        needs=f"{MLM_PAPER}; ours an exact finite space of V^L = {preset.vocab_size}^"
        f"{preset.length} inputs, the plug-in encoder from m = {preset.n_pretrain} samples, "
        f"d = {preset.d}, a ridge probe on n = {preset.n_labels} labels",
        test_set="none",
    )


def _trace_gap_rate(metrics: Metrics, preset) -> Claim:
    rates, top, cases = preset.msweep_rates, -0.5 + RATE_TOL, msweep_cases(preset)
    tests, text = [], []
    for group, d in cases:
        slope = {a: metrics.by_seed(f"{group}/{_key(a)}/slope") for a in rates}
        tests += [threshold(slope[a], threshold=top, higher_is_better=False, source=RATE_SOURCE)
                  for a in rates]  # fmt: skip
        parts = []
        for a in rates:
            k, fit = f"{group}/{_key(a)}", _fitted_m(metrics, preset, a, group)
            span = f"m {fit[0]:.2g}..{fit[-1]:.2g}" if fit else "no m"
            gap = (f", eigen-gap {metrics.mean(f'{k}/eigengap'):.2g}"
                   if f"{k}/eigengap" in metrics else "")  # fmt: skip
            parts.append(f"alpha={a:g} (kappa^2 {metrics.mean(f'{k}/kappa_sq'):.3g}{gap}, bound "
                         f"non-vacuous at {span}): slope {metrics.fmt(f'{k}/slope', 3)} (over "
                         f"every m: {metrics.fmt(f'{k}/slope_all', 3)})")  # fmt: skip
        name = (f"gapped, d = {d} (lambda_1 isolated)" if group == "msweep"
                else f"gap-free, d = {d} (lambda_d = lambda_{{d+1}}: premise no-eigengap)")  # fmt: skip
        text.append(f"{name}: " + "; ".join(parts))
    gapfree = len(cases) > 1
    return Claim(
        id="trace-gap-decays-in-m",
        statement="The trace gap of the encoder learned from m pretraining inputs decays in m "
        f"about as fast as its a-priori bound, m^-1/2, or faster (a log-log slope below "
        f"-1/2 + {RATE_TOL:g}; Theorem 2's dependence on m, in the bound derived in "
        "bounds.trace_gap_sample_bound)"
        + (", with an eigen-gap and without one (the case Theorem 2 is about: the top-d "
           "eigenspace is not unique)" if gapfree else ""),
        paper="Theorem 2: the encoder estimated from finite pretraining samples approximates "
        "the top-d eigenspace, with no eigen-gap needed (its statement and constants not "
        f"retrieved, {SEARCHED})",
        measured="per-seed slope of log tau vs log m (kernel PCA of the exact kernel, one "
        "multinomial draw per m, m = "
        f"{min(preset.msweep_m):.2g}..{max(preset.msweep_m):.2g}), fitted where the bound is "
        "non-vacuous. " + ". ".join(text) + f". Setting: ours (V={preset.vocab_size}, "
        f"L={preset.length})",
        criterion=f"in each case ({', '.join(f'd = {d}' for _, d in cases)}) and at every "
        "rate: the per-seed slope, fitted over the m where the bound is below lambda_1 + .. + "
        "lambda_d (where it predicts a decay; at least 3 such m: premise bound-informative), "
        f"below -1/2 + {RATE_TOL:g} = {top:g}",
        test=all_of(*tests),
        regime="paper",
        test_set="none",
        rests_on=("bound-informative",) + (("no-eigengap",) if gapfree else ()),
    )  # fmt: skip


def _trace_gap_sample_bound(metrics: Metrics, preset) -> Check:
    ms, cases = preset.msweep_m, msweep_cases(preset)
    rates = [(g, d, a) for g, d in cases for a in preset.msweep_rates]  # every (case, rate)
    tau = np.array(
        [[metrics.values(f"{g}/{_key(a)}/m{m}/trace_gap") for m in ms] for g, _, a in rates]
    )  # (case x rate, m, seeds) fmt: skip
    bound = np.array([[metrics.mean(f"{g}/{_key(a)}/m{m}/bound") for m in ms]
                      for g, _, a in rates])  # fmt: skip
    ratio = tau / bound[:, :, None]
    i, j, s = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    check = bound_check(
        id="trace-gap-sample-bound",
        statement="The trace gap of the kernel-PCA encoder learned from m pretraining inputs is "
        "at most sqrt(2d) kappa^2 (1 + sqrt(2 log(1/delta))) / sqrt(m) (with probability "
        f">= 1 - delta, delta = {preset.msweep_delta:g} shared by all {ratio.size} (case, rate, m, "
        f"seed) cells); shown where tau / bound is largest (d = {rates[i][1]}, "
        f"alpha={rates[i][2]:g}, m={ms[j]:.2g})",
        paper="Theorem 2's a-priori dependence on m; its statement and constants not retrieved "
        f"({SEARCHED}): this bound is derived here (bounds.py)",
        measured=float(tau[i, j, s]),
        bound=float(bound[i, j]),
        rederived=True,
        why="bounds.trace_gap_sample_bound: tau <= sqrt(2d) ||T - T_m||_HS (the encoder "
        "maximises the empirical ratio trace) and McDiarmid for ||T - T_m||_HS (proof in its "
        "docstring); it can fail only with probability <= delta over the draws",
        what="trace gap",
    )
    check.measured += "; largest tau / bound by (d, rate): " + ", ".join(
        f"({d}, {a:g}): {r:.2g}" for (_, d, a), r in zip(rates, ratio.max(axis=(1, 2)))
    )
    check.criterion = "trace gap <= bound in every case (gapped, gap-free), rate, m and seed"
    check.holds = bool(np.all(ratio <= 1))
    return check


def _mlm_sweet_spot(metrics: Metrics, preset) -> Claim:
    rates = preset.mlm_rates
    name = lambda a: f"mlm/{_key(a)}/probe_error"  # noqa: E731
    errors = np.array([metrics.mean(name(a)) for a in rates])
    best = rates[int(np.argmin(errors))]
    low, high = metrics.gap(name(rates[0]), name(best)), metrics.gap(name(rates[-1]), name(best))
    interior = best not in (rates[0], rates[-1])
    curve = ", ".join(f"{a:g}: {e:.3f}" for a, e in zip(rates, errors))
    refs = (f"untrained encoder {metrics.mean('mlm/untrained/probe_error'):.3f}, character "
            f"histogram {metrics.mean('mlm/char_histogram/probe_error'):.3f}, chance "
            f"{metrics.mean('mlm/chance_error'):.3f}")  # fmt: skip
    untrained = metrics.by_seed("mlm/untrained/probe_error")
    at_best = metrics.by_seed(name(best))
    # an untrained encoder in place of the best rate's: if it also beats both ends, the
    # criterion cannot tell pretraining at the best rate from no pretraining
    ends = [
        superiority(
            at_best,
            metrics.by_seed(name(r)),
            margin=MLM_MARGIN,
            higher_is_better=False,
            control=untrained,
            control_name="untrained encoder",
            source=MLM_SOURCE,
        )  # fmt: skip
        for r in (rates[0], rates[-1])
    ]
    return Claim(
        id="mlm-sweet-spot",
        statement="Masked-LM pretraining has a sweet spot in the mask rate: a linear probe on "
        "the pretrained encoder does best at an interior rate, worse with too little masking "
        f"and with too much (both end rates' probe error more than {MLM_MARGIN:g} above the "
        "best rate's)",
        paper="the paper's NLP experiments (a sweet spot in the mask rate; its table not "
        f"retrieved, {SEARCHED})",
        measured=f"probe test error by rate: {curve}; best {best:g} (interior: "
        f"{'yes' if interior else 'no'}); error({rates[0]:g}) - error(best) {low}, "
        f"error({rates[-1]:g}) - error(best) {high}; references: {refs}. Setting: ours "
        f"(a {preset.mlm_layers}-layer, {preset.mlm_hidden}-wide BERT-style encoder, "
        f"{preset.mlm_steps} steps x {preset.mlm_batch} windows of {preset.mlm_length} "
        f"characters; target: which of {preset.mlm_classes} contiguous parts of the corpus a "
        "window comes from)",
        criterion=f"probe test error at the best rate ({best:g}, by mean) vs at the lowest "
        f"({rates[0]:g}) and at the highest ({rates[-1]:g}) rate, both (margin one point of "
        "error, about one seed's binomial SE on 1500 test windows; a best rate at an end "
        "ties itself and fails); control: the untrained encoder in place of the best rate's",
        test=all_of(*ends),
        regime="below",
        needs=f"{MLM_PAPER}; ours {preset.mlm_length}-character windows of our corpus, a "
        f"{preset.mlm_layers}-layer, {preset.mlm_hidden}-wide encoder, {preset.mlm_steps} steps "
        f"x {preset.mlm_batch} windows, our {preset.mlm_classes}-part target",
        test_set="per-seed",
        moved=f"the best rate's encoder vs the untrained one: probe error "
        f"{metrics.gap(name(best), 'mlm/untrained/probe_error')}",
    )


def make_checks(metrics: Metrics, preset) -> list[Check]:
    alphas = preset.alphas
    worst = lambda name: float(np.max(np.abs(_per_rate(metrics, "spectrum", name, alphas))))  # noqa: E731
    lam0 = float(np.max(np.abs(_per_rate(metrics, "spectrum", "lambda0", alphas) - 1)))
    spread = worst("psi0_spread")
    asym = float(np.max(_per_rate(metrics, "spectrum", "kernel_asymmetry", alphas)
                        / _per_rate(metrics, "spectrum", "kappa_sq", alphas)))  # fmt: skip
    min_eig = float(np.min(_per_rate(metrics, "spectrum", "kernel_min_eig", alphas)))
    trace = _per_rate(metrics, "spectrum", "trace", alphas)
    closed = _per_rate(metrics, "spectrum", "trace_closed_form", alphas)
    trace_err = float(np.max(np.abs(trace / closed - 1)))
    approx = _per_rate(metrics, "spectrum", "approx_error", alphas)
    approx_bound = _per_rate(metrics, "spectrum", "approx_bound", alphas)
    closed_forms = {k: metrics.mean(f"closed/{k}") for k in
                    ("mask_kappa_sq", "mask_trace", "replacement_kappa_sq", "markov_dp")}  # fmt: skip
    mc_mean, mc_se = metrics.values("text/mc/ratio_mean"), metrics.values("text/mc/ratio_se")
    mc_z = max(abs(m - 1) / s for m, s in zip(mc_mean, mc_se))
    return [
        _decomposition(metrics, preset),
        _finite_sample_bound(metrics, preset),
        *_kappa_checks(metrics, preset),
        Check(
            id="lambda0-constant",
            statement="The top eigenpair of Gamma* Gamma is lambda_0 = 1 with psi_0 constant",
            measured=f"max |lambda_0 - 1| = {lam0:.1e}, max spread of psi_0 = {spread:.1e}",
            criterion="both <= 1e-8 at every rate",
            holds=lam0 <= 1e-8 and spread <= 1e-8,
            why="Gamma* Gamma 1 = 1 for any p(a|x) (a conditional expectation of a constant) "
            "and no eigenvalue exceeds 1 (Gamma is a contraction); exact eigensolver",
        ),
        Check(
            id="kernel-symmetric-psd",
            statement="The augmentation kernel K_X is symmetric positive semi-definite",
            measured=f"max |K - K^T| / kappa^2 = {asym:.1e}, smallest eigenvalue / max|K| = {min_eig:.1e}",
            criterion="asymmetry <= 1e-12 and eigenvalues >= -1e-10",
            holds=asym <= 1e-12 and min_eig >= -1e-10,
            why="K_X = P D^-1 P^T with P = p(a|x) and D = diag p(a) > 0: a Gram matrix",
        ),
        Check(
            id="gamma-star-gamma-is-kernel-operator",
            statement="Gamma* Gamma equals the integral operator of K_X on L2(P_X)",
            measured=f"max |Gamma* Gamma f - T_K f| = {worst('operator_gap'):.1e} on a random f",
            criterion="<= 1e-9 at every rate",
            holds=worst("operator_gap") <= 1e-9,
            why="(Gamma* Gamma f)(x) = sum_a p(a|x) sum_x' p(x'|a) f(x') = "
            "sum_x' K_X(x, x') p(x') f(x') by Bayes' rule",
        ),
        Check(
            id="mask-trace-closed-form",
            statement="sum_i lambda_i = (alpha + V (1 - alpha))^L for [MASK] replacement on any "
            "full-support P_X",
            measured=f"max relative error {trace_err:.1e} (Markov mixture P_X, every rate); "
            f"uniform P_X {closed_forms['mask_trace']:.1e}",
            criterion="<= 1e-9",
            holds=max(trace_err, closed_forms["mask_trace"]) <= 1e-9,
            why="the trace is sum_x p(x) K_X(x, x), and summing over masks position by "
            "position gives (alpha + V (1 - alpha))^L for any full-support P_X",
        ),
        Check(
            id="kappa-closed-forms",
            statement="kappa^2 closed forms (mask: prod_j (alpha + (1-alpha)/min p_j); random "
            "replacement: (1 + (V-1)(1-alpha)^2)^L) and the Markov-chain sum over masks match "
            "brute-force enumeration",
            measured=", ".join(
                f"{k} {v:.1e}" for k, v in closed_forms.items() if k != "mask_trace"
            ),
            criterion="relative errors <= 1e-9",
            holds=max(v for k, v in closed_forms.items() if k != "mask_trace") <= 1e-9,
            why="each closed form is a product over positions of the per-position sums that "
            "the brute-force enumeration adds up (exact arithmetic up to rounding)",
        ),
        _approximation_bound(metrics, alphas, approx, approx_bound),
        _trace_gap_bound(metrics, alphas),
        *([_trace_gap_sample_bound(metrics, preset)] if preset.msweep_rates else []),
        Check(
            id="monte-carlo-kappa-unbiased",
            statement="The Monte-Carlo estimate of K_X(x, x) over random masks agrees with the "
            "exact sum over all masks",
            measured=f"mean MC / exact over {preset.mc_windows} text windows of length "
            f"{preset.mc_length}: "
            + ", ".join(f"{m:.3f} +/- {s:.2g}" for m, s in zip(mc_mean, mc_se)),
            criterion="within 4 SE of 1 on every seed",
            holds=mc_z <= 4,
            why="the Monte-Carlo estimator averages the exact per-mask term over masks drawn "
            "from the mask distribution itself, so it is unbiased; 4 SE leaves a chance "
            "failure of ~6e-5 per seed",
        ),
    ]


def _approximation_bound(metrics: Metrics, alphas, approx, approx_bound) -> Check:
    i = int(np.argmax(approx / approx_bound))
    check = bound_check(
        id="approximation-bound",
        statement="The top-d eigenspace approximates the target within "
        "eps ||f*||_H^2 / (1 - lambda_{d+1}) (a consequence of the isometry, computed exactly); "
        f"shown at the rate where error / bound is largest (alpha={alphas[i]:g})",
        measured=float(approx[i]),
        bound=float(approx_bound[i]),
        rederived=True,
        why="bounds.approximation_bound: derived from the isometry property (proof in its "
        "docstring); the spectrum and the projection are exact",
        what="approximation error",
    )
    check.measured += "; error / bound by rate: " + ", ".join(
        f"{a:g}: {e / b:.2f}" for a, e, b in zip(alphas, approx, approx_bound)
    )
    check.criterion = "approximation error <= bound (1 + 1e-12) at every rate"
    check.holds = bool(np.all(approx <= approx_bound * (1 + 1e-12)))
    return check


def _trace_gap_bound(metrics: Metrics, alphas) -> Check:
    seeds_of = lambda name: np.array([metrics.values(f"finite/{_key(a)}/{name}") for a in alphas])  # noqa: E731
    err, bound, tau = seeds_of("approx_error"), seeds_of("approx_bound"), seeds_of("trace_gap")
    i, j = _worst(err, bound)
    check = bound_check(
        id="trace-gap-approximation-bound",
        statement="The finite-sample encoder approximates the target within "
        "||f*||_H^2 (tau^1/3 + eps^1/3)^3 / (1 - lambda_{d+1}) (its trace gap tau >= 0; exact, "
        "a consequence of the isometry); shown at the rate and seed where error / bound is "
        f"largest (alpha={alphas[i]:g})",
        measured=float(err[i, j]),
        bound=float(bound[i, j]),
        rederived=True,
        why="bounds.trace_gap_approximation_bound: derived here from the isometry property "
        "(the cube formula, proof in its docstring); tau >= 0 because the ratio trace of a "
        "(d+1)-dimensional span is at most lambda_0 + ... + lambda_d (Ky Fan)",
        what="approximation error",
    )
    check.measured += (
        "; error / bound by rate (worst seed): "
        + ", ".join(f"{a:g}: {r:.2f}" for a, r in zip(alphas, (err / bound).max(1)))
        + f"; smallest tau {tau.min():.2g}"
    )
    check.criterion = (
        "approximation error <= bound (1 + 1e-12) at every rate on every seed, and tau >= -1e-9"
    )
    check.holds = bool(np.all(err <= bound * (1 + 1e-12)) and tau.min() >= -1e-9)
    return check
