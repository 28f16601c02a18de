"""The paper's claims and the code's checks, computed from the measured metrics.

Every claim is decided on paired per-seed values (``iclr24_common.verdicts``): timing claims
by a threshold on the per-seed time ratios (the methods of one seed ran on the same stream,
at the same threads, back to back), precision claims against a fresh ``svds`` with the
never-updated initial SVD as a control. That the sparse method gives the baseline's singular
values is not a result but an identity of the algorithm: a check.
"""

from __future__ import annotations

import numpy as np

from iclr24_common import Check, Claim, Metrics, all_of, non_inferiority, threshold

# (ours, the baseline it accelerates): Zha-Simon 1999, Vecharynski-Saad 2014, Yamazaki 2015.
PAIRS = (("qr", "zha-simon"), ("gkl", "vecharynski"), ("rpi", "yamazaki"))

RATIO_SMALL, RATIO_LARGE = 0.35, 0.5
"""Largest time ratio ours / baseline that counts as the speed-up at s <= 10 and at s > 10.
The package's levels, set with its first implementation (before any default run), for a
40k x 12k matrix: the paper says "an order of magnitude" (0.1) on its real matrices, and the
speed-up grows with the matrix (the baselines' cost is linear in m + n, README), so these
are weaker than the paper's wording; the README says so."""

SV_ERROR_MAX = 1e-3
"""Largest mean relative singular-value error against a fresh ``svds``: 0.1 %, the package's
level, set with its first implementation before any default run (the paper calls the
precision "comparable"; its per-dataset tables were not available offline, README)."""

HR_TOLERANCE = 0.01
"""HR@10 may be at most 1 % (relative) below the recomputed SVD's: the package's level, set
before any default run (the paper: "comparable" MRR / HR@10, Table 3)."""

RECOMPUTE_FACTOR = 10.0
"""Recomputing costs "far more": at least an order of magnitude (the paper's own unit of
speed-up, abstract)."""

STALE = "the initial SVD never updated"


def _seeds(metrics: Metrics, a: str, b: str, op) -> dict[int, float]:
    da, db = metrics.by_seed(a), metrics.by_seed(b)
    return {s: op(da[s], db[s]) for s in sorted(set(da) & set(db))}


def _n_values(n: int) -> str:
    return f"{n} seed{'s' * (n != 1)}" + (" (a single timing: judged as 1 value)" if n == 1 else "")


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    """The paper's claims; ``preset`` is the ``Preset`` that produced ``metrics``."""
    claims = []
    for s in preset.batch_sizes:
        p = f"rows/s{s}/"
        names = [f"{p}ours-{o}/time_ratio_vs_{b}" for o, b in PAIRS]
        if not all(n in metrics for n in names):
            continue
        bound = RATIO_SMALL if s <= 10 else RATIO_LARGE
        n = len(metrics.values(names[0]))
        claims.append(
            Claim(
                id=f"speedup-s{s}",
                statement=f"updating with s = {s} rows per batch is an order of magnitude faster than "
                "the projection baselines (ours/ZS, ours-GKL/Vecharynski, ours-RPI/Yamazaki)",
                paper="'an order of magnitude' faster (abstract; Tables 2-4, k = 64)",
                measured="time ratios "
                + ", ".join(f"{o}/{b} {metrics.fmt(m, 3)}" for (o, b), m in zip(PAIRS, names))
                + f" ({_n_values(n)})",
                criterion=f"per-seed update-time ratio ours / baseline (same stream, same "
                f"threads) for each of the 3 pairs, below {bound} (the package's pre-set level "
                "for this matrix size; weaker than the paper's order of magnitude, 0.1)",
                test=all_of(
                    *(
                        threshold(metrics.by_seed(m), threshold=bound, higher_is_better=False)
                        for m in names
                    )  # fmt: skip
                ),
            )
        )
    _precision_claims(metrics, preset, claims)
    for s in preset.batch_sizes:
        proj, ours = f"rows/s{s}/recompute/projected_seconds", f"rows/s{s}/ours-qr/update_seconds"
        if proj in metrics and ours in metrics:
            ratio = _seeds(metrics, proj, ours, lambda a, b: a / b)
            n = len(ratio)
            claims.append(
                Claim(
                    id=f"recompute-costlier-s{s}",
                    statement="recomputing the truncated SVD after every batch costs far more than updating it",
                    paper="the motivation of the paper (Section 1); recompute is not a table row",
                    measured=f"{preset.n_batches} x svds {metrics.mean(proj):.1f} s vs ours "
                    f"{metrics.mean(ours):.2f} s (per-seed ratios "
                    + ", ".join(f"x{r:.0f}" for r in ratio.values())
                    + f"; {_n_values(n)})",
                    criterion=f"per-seed ratio projected recompute time / ours-qr update time, "
                    f"above {RECOMPUTE_FACTOR:g} (an order of magnitude)",
                    test=threshold(ratio, threshold=RECOMPUTE_FACTOR),
                )
            )
    n = "network/ours-qr/time_ratio_vs_zha-simon"
    if n in metrics:
        claims.append(
            Claim(
                id="network-speedup",
                statement="adding nodes (rows then columns) to a graph's SVD is faster at equal "
                "precision (the equal precision: check same-as-baseline)",
                paper="Table 4 (Slashdot, Flickr, Epinions): order-of-magnitude speed-up over Zha-Simon",
                measured=f"ours/ZS time ratio {metrics.fmt(n, 3)} "
                f"({_n_values(len(metrics.values(n)))})",
                criterion=f"per-seed update-time ratio ours / Zha-Simon below {RATIO_SMALL} (the "
                "package's pre-set level; weaker than the paper's order of magnitude, 0.1)",
                test=threshold(metrics.by_seed(n), threshold=RATIO_SMALL, higher_is_better=False),
            )
        )
    return claims


def _precision_claims(metrics: Metrics, preset, claims: list[Claim]) -> None:
    cases = [(s, o, b) for s in preset.batch_sizes for o, b in PAIRS
             if f"rows/s{s}/ours-{o}/sv_rel_error_vs_svds" in metrics]  # fmt: skip
    if cases:
        name = lambda s, m: f"rows/s{s}/{m}/sv_rel_error_vs_svds"  # noqa: E731
        stale = lambda s: metrics.by_seed(name(s, "stale")) if name(s, "stale") in metrics else None  # noqa: E731
        worst = max(cases, key=lambda c: metrics.mean(name(c[0], f"ours-{c[1]}")))
        bworst = max((metrics.mean(name(s, b)) for s, _, b in cases if name(s, b) in metrics),
                     default=float("nan"))  # fmt: skip
        stale_txt = ", ".join(f"s={s} {metrics.mean(name(s, 'stale')):.2e}"
                              for s in preset.batch_sizes if stale(s) is not None)  # fmt: skip
        claims.append(
            Claim(
                id="close-to-svds",
                statement="after the whole stream the updated singular values match a fresh truncated SVD",
                paper="comparable precision to existing approaches (Tables 2-4)",
                measured=f"worst mean relative error {metrics.mean(name(worst[0], f'ours-{worst[1]}')):.2e} "
                f"(s{worst[0]} ours-{worst[1]}); baselines' worst {bworst:.2e}; {STALE}: "
                f"{stale_txt or 'not measured'}",
                criterion=f"per-seed mean_i |s_i - s_i^svds| / s_i^svds of every variant at every "
                f"s, below {SV_ERROR_MAX:g} (the package's pre-set level); control: {STALE}",
                test=all_of(
                    *(
                        threshold(
                            metrics.by_seed(name(s, f"ours-{o}")),
                            threshold=SV_ERROR_MAX,
                            higher_is_better=False,
                            control=stale(s),
                            control_name=STALE,
                        )
                        for s, o, _ in cases
                    )  # fmt: skip
                ),
            )
        )
    hr = [(s, o) for s in preset.batch_sizes for o, _ in PAIRS
          if f"rows/s{s}/recompute/hr10" in metrics and f"rows/s{s}/ours-{o}/hr10" in metrics]  # fmt: skip
    if hr:
        name = lambda s, m: f"rows/s{s}/{m}/hr10"  # noqa: E731
        parts, rows = [], []
        for s, o in hr:
            ref = metrics.by_seed(name(s, "recompute"))
            tol = HR_TOLERANCE * float(np.mean(list(ref.values())))
            st = metrics.by_seed(name(s, "stale")) if name(s, "stale") in metrics else None
            parts.append(non_inferiority(metrics.by_seed(name(s, f"ours-{o}")), ref, tolerance=tol,
                                         control=st, control_name=STALE))  # fmt: skip
            rows.append(f"s{s} ours-{o} {metrics.mean(name(s, f'ours-{o}')):.4f}")
        stale_txt = ", ".join(f"s={s} {metrics.mean(name(s, 'stale')):.4f}"
                              for s in preset.batch_sizes if name(s, "stale") in metrics)  # fmt: skip
        recs = ", ".join(f"s={s} {metrics.mean(name(s, 'recompute')):.4f}"
                         for s in preset.batch_sizes if name(s, "recompute") in metrics)  # fmt: skip
        claims.append(
            Claim(
                id="downstream-hr10",
                statement="embeddings from the updated SVD rank items as well as a recomputed SVD",
                paper="comparable MRR / HR@10 on recommendation (Table 3)",
                measured=f"HR@10 {'; '.join(rows)}; recomputed {recs}; {STALE} (new rows "
                f"ranked at random): {stale_txt or 'not measured'}",
                criterion=f"per-seed HR@10 of every variant at every s vs the recomputed SVD's "
                f"(tolerance {HR_TOLERANCE:.0%} of the recomputed HR@10, the package's pre-set "
                f"level); control: {STALE}",
                test=all_of(*parts),
            )
        )


def make_checks(metrics: Metrics, preset) -> list[Check]:
    """Invariants of the code: the sparse method reproduces its baseline's singular values,
    and every updated factor stays orthonormal."""
    checks = []
    gaps = [n for n in metrics.names() if "/sv_gap_vs_" in n]
    if gaps:
        worst, where = max((max(metrics.values(n)), n) for n in gaps)
        checks.append(
            Check(
                id="same-as-baseline",
                statement="the sparse method loses no precision: same singular values as the "
                "baseline it accelerates (rows at every s, and the network mode)",
                paper="identical accuracy columns for ours vs baselines (Tables 2-4)",
                measured=f"max relative singular-value gap {worst:.2e} "
                f"({' '.join(where.split('/')[:-1])}, worst seed)",
                criterion="max_i |s_i - s_i^base| / s_i^base <= 1e-8 on every seed, every pair",
                holds=bool(worst <= 1e-8),
                why="an identity of the algorithm: Lemma 1 (b1.b2 - c1.c2 is the inner product "
                "of the densified columns) and the extended decomposition (U = U' K) make each "
                "update the baseline's Rayleigh-Ritz step in exact arithmetic, on the same "
                "stream and random draws; only rounding differs",
            )
        )
    names = [n for n in metrics.names() if n.endswith("/orthogonality")]
    if names:
        worst, where = max((max(metrics.values(n)), n) for n in names)
        checks.append(
            Check(
                id="orthonormal-factors",
                statement="U and V stay orthonormal through the whole stream, for every method",
                measured=f"max |Q^T Q - I| {worst:.1e} ({where.split('/')[1]} "
                f"{where.split('/')[2]}, worst seed)",
                criterion="<= 1e-8 on every seed, worst method",
                holds=bool(worst <= 1e-8),
                why="every update multiplies by orthogonal factors (the small SVD's F, G) and "
                "appends a basis orthonormalised twice (CGS2 or Householder QR); K is folded "
                "back when ill-conditioned",
            )
        )
    return checks
