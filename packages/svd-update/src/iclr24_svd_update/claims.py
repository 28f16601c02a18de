"""The paper's claims, their premises and the code's checks, from the measured metrics.

Every claim is decided on paired per-seed values (``iclr24_common.verdicts``): timing claims
by a threshold on the per-seed time ratios (the methods of one seed ran on the same stream,
at the same threads, back to back), precision claims against a fresh ``svds`` with the
never-updated initial SVD as the no-op arm. That the sparse method gives the baseline's
singular values is not a result but an identity of the algorithm (a check), and that
recomputing costs far more than updating is the paper's motivation, a premise of the speed-up
claims.

The timing claims are below the paper's regime: its order of magnitude is stated on its real
matrices, the largest of them 76k-480k rows, and the baselines' cost, linear in m + n, grows
with the matrix where ours does not; ours is a generated 40k x 12k matrix.
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
    non_inferiority,
    threshold,
)

# (ours, the baseline it accelerates): Zha-Simon 1999, Vecharynski-Saad 2014, Yamazaki 2015.
PAIRS = (("qr", "zha-simon"), ("gkl", "vecharynski"), ("rpi", "yamazaki"))

RATIO_SMALL, RATIO_LARGE = 0.35, 0.5
"""Largest time ratio ours / baseline that counts as the speed-up at s <= 10 and at s > 10
(about 3x and 2x faster). The package's levels, set with its first implementation (f5fa51f,
before any default run), for a 40k x 12k matrix: the paper says "an order of magnitude"
(a ratio below 0.1) on its real matrices, and the speed-up grows with the matrix (the
baselines' cost is linear in m + n, README), so these are weaker than the paper's wording and
the claims' statements say so."""
RATIO_SOURCE = Source.ours(
    "the package's level for a 40k x 12k matrix, set with its first implementation before any "
    "run; weaker than the paper's order of magnitude (0.1), which it states on larger matrices",
    commit="f5fa51f")  # fmt: skip

SV_ERROR_MAX = 1e-3
"""Largest mean relative singular-value error against a fresh ``svds``: 0.1 %, the package's
level, set with its first implementation (f5fa51f) before any default run; the paper gives
no number (it calls the precision "comparable"; its per-dataset tables were not available
offline, README)."""
SV_ERROR_SOURCE = Source.ours(
    "0.1 %: the package's own level, set with its first implementation before any run, with no "
    "number from the paper behind it (the paper: 'comparable precision'; its tables were not "
    "available)", commit="f5fa51f")  # fmt: skip

HR_TOLERANCE = 0.01
"""HR@10 may be at most 1 % (relative) below the recomputed SVD's: the package's level, set
with its first implementation (f5fa51f) before any default run (the paper: "comparable"
MRR / HR@10, Table 3, no number)."""
HR_SOURCE = Source.ours(
    "1 % of the recomputed SVD's HR@10: the package's own level, set with its first "
    "implementation before any run (the paper: 'comparable' HR@10, Table 3, no number)",
    commit="f5fa51f")  # fmt: skip

RECOMPUTE_FACTOR = 10.0
"""Recomputing costs "far more": at least an order of magnitude (the paper's own unit of
speed-up, abstract), set with the first implementation (f5fa51f). A premise of the speed-up
claims (the paper's motivation, not a result): a stream on which recomputing is cheap is not
one where updating, faster or not, is the point."""
RECOMPUTE_SOURCE = Source.ours(
    "'far more' read as at least an order of magnitude, the paper's own unit of speed-up "
    "(abstract); set with the first implementation, before any run", commit="f5fa51f")  # fmt: skip

# What the paper's order of magnitude needs (official experiments, HaoranDeng/IncSVDforICLR2024
# @a37b2ac: experiments/*.json, datasets/graph/*/attr.txt), and ours. The per-update cost of
# the baselines is O((m + n) k (k + s)), ours does not grow with m + n (README), so the ratio
# falls as the matrix grows; the paper's per-dataset speed-ups were not available offline.
ROWS_NEEDS = (
    "an order of magnitude (ratio < 0.1), stated over the paper's matrices; the official "
    "experiments list recommendation matrices up to MovieLens-25M (162k x 59k rated), Fine "
    "Foods (256k x 74k) and Netflix (480k x 17.8k), k 64, half the rows initial, the rest in "
    "10-10000 batches (HaoranDeng/IncSVDforICLR2024@a37b2ac experiments/*.json); the ratio "
    "falls as m + n grows (an earlier single-seed trial of ours at 60k x 20k: 0.06-0.09); the "
    "per-dataset tables were not available offline, so whether the paper reaches 10x on its "
    "smaller matrices (the LSI corpora, 1.0k-1.5k documents) is not known; ours a generated "
    "40k x 12k matrix (m + n 52k), 0.75M non-zeros, 100 batches of 10 or 100 rows"
)
NETWORK_NEEDS = (
    "an order of magnitude (ratio < 0.1) on Slashdot (82,168 nodes, 870k edges), Epinions "
    "(75,879 nodes, 1.0M edges), Flickr (80,513 nodes, 11.8M edges), half the nodes initial, "
    "100-10000 batches (paper Table 4; HaoranDeng/IncSVDforICLR2024@a37b2ac "
    "datasets/graph/*/attr.txt, experiments/z.json); ours an SBM graph of 12k nodes, 100 "
    "batches of 10"
)

STALE = "the initial SVD never updated"
FOLDIN = "the initial SVD never updated, new rows folded in"


def _seeds(metrics: Metrics, a: str, b: str, op) -> dict[int, float]:
    da, db = metrics.by_seed(a), metrics.by_seed(b)
    return {s: op(da[s], db[s]) for s in sorted(set(da) & set(db))}


def _n_values(n: int) -> str:
    return f"{n} seed{'s' * (n != 1)}" + (" (a single timing: judged as 1 value)" if n == 1 else "")


def _times_faster(bound: float) -> str:
    return f"about {1 / bound:.0f}x faster (time ratio below {bound:g})"


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
                statement=f"updating with s = {s} rows per batch is {_times_faster(bound)} "
                "than each projection baseline (ours/ZS, ours-GKL/Vecharynski, "
                "ours-RPI/Yamazaki); the paper's 'order of magnitude' (below 0.1) is not "
                "what is tested here",
                paper="'an order of magnitude' faster (abstract; Tables 2-4, k = 64)",
                measured="time ratios "
                + ", ".join(f"{o}/{b} {metrics.fmt(m, 3)}" for (o, b), m in zip(PAIRS, names))
                + f" ({_n_values(n)})",
                criterion=f"per-seed update-time ratio ours / baseline (same stream, same "
                f"threads) for each of the 3 pairs, below {bound}",
                test=all_of(
                    *(
                        threshold(
                            metrics.by_seed(m),
                            threshold=bound,
                            higher_is_better=False,
                            source=RATIO_SOURCE,
                        )
                        for m in names
                    )  # fmt: skip
                ),
                regime="below",
                needs=ROWS_NEEDS,
                test_set="none",
                rests_on=(f"recompute-costlier-s{s}",) if _recompute(metrics, s) else (),
            )
        )
    _precision_claims(metrics, preset, claims)
    n = "network/ours-qr/time_ratio_vs_zha-simon"
    if n in metrics:
        claims.append(
            Claim(
                id="network-speedup",
                statement="adding nodes (rows then columns) to a graph's SVD is "
                f"{_times_faster(RATIO_SMALL)} than Zha-Simon, at equal precision (the equal "
                "precision: check same-as-baseline); the paper's 'order of magnitude' (below "
                "0.1) is not what is tested here",
                paper="Table 4 (Slashdot, Flickr, Epinions): order-of-magnitude speed-up over Zha-Simon",
                measured=f"ours/ZS time ratio {metrics.fmt(n, 3)} "
                f"({_n_values(len(metrics.values(n)))})",
                criterion=f"per-seed update-time ratio ours / Zha-Simon below {RATIO_SMALL}",
                test=threshold(
                    metrics.by_seed(n),
                    threshold=RATIO_SMALL,
                    higher_is_better=False,
                    source=RATIO_SOURCE,
                ),
                regime="below",
                needs=NETWORK_NEEDS,
                test_set="none",
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
        stale_moved = (f"the never-updated singular values are {stale_txt} (mean relative) "
                       "from the fresh svds'; the updated ones at worst "
                       f"{metrics.mean(name(worst[0], f'ours-{worst[1]}')):.1e}"
                       if stale_txt else "")  # fmt: skip
        claims.append(
            Claim(
                id="close-to-svds",
                statement="after the whole stream the updated singular values match a fresh "
                f"truncated SVD's (mean relative error below {SV_ERROR_MAX:g}, our level)",
                paper="comparable precision to existing approaches (Tables 2-4)",
                measured=f"worst mean relative error {metrics.mean(name(worst[0], f'ours-{worst[1]}')):.2e} "
                f"(s{worst[0]} ours-{worst[1]}); baselines' worst {bworst:.2e}; {STALE}: "
                f"{stale_txt or 'not measured'}",
                criterion=f"per-seed mean_i |s_i - s_i^svds| / s_i^svds of every variant at every "
                f"s, below {SV_ERROR_MAX:g}; control: {STALE}",
                test=all_of(
                    *(
                        threshold(
                            metrics.by_seed(name(s, f"ours-{o}")),
                            threshold=SV_ERROR_MAX,
                            higher_is_better=False,
                            control=stale(s),
                            control_name=STALE,
                            source=SV_ERROR_SOURCE,
                        )
                        for s, o, _ in cases
                    )  # fmt: skip
                ),
                regime="paper",
                test_set="none",
                moved=stale_moved,
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
            parts.append(non_inferiority(metrics.by_seed(name(s, f"ours-{o}")), ref, tolerance=tol,
                                         control=metrics.by_seed(name(s, "foldin")),
                                         control_name=FOLDIN, source=HR_SOURCE))  # fmt: skip
            rows.append(f"s{s} ours-{o} {metrics.mean(name(s, f'ours-{o}')):.4f}")
        fold_txt = ", ".join(f"s={s} {metrics.mean(name(s, 'foldin')):.4f}"
                             for s in preset.batch_sizes if name(s, "foldin") in metrics)  # fmt: skip
        recs = ", ".join(f"s={s} {metrics.mean(name(s, 'recompute')):.4f}"
                         for s in preset.batch_sizes if name(s, "recompute") in metrics)  # fmt: skip
        sv = {s: f"rows/s{s}/stale/sv_rel_error_vs_svds" for s in preset.batch_sizes}
        moved = ", ".join(f"s={s} {metrics.mean(n):.2e}" for s, n in sv.items() if n in metrics)
        if moved:
            moved = (f"the never-updated singular values are {moved} (mean relative) from the "
                     "fresh svds', which the update reaches")  # fmt: skip
        claims.append(
            Claim(
                id="downstream-hr10",
                statement="embeddings from the updated SVD rank items as well as a recomputed "
                f"SVD (HR@10 at most {HR_TOLERANCE:.0%} below it, our level)",
                paper="comparable MRR / HR@10 on recommendation (Table 3)",
                measured=f"HR@10 {'; '.join(rows)}; recomputed {recs}; {FOLDIN}: {fold_txt}",
                criterion=f"per-seed HR@10 of every variant at every s vs the recomputed SVD's "
                f"(tolerance {HR_TOLERANCE:.0%} of the recomputed HR@10); control: {FOLDIN}, "
                "through the same test",
                test=all_of(*parts),
                regime="paper",
                test_set="per-seed",
                moved=moved,
            )
        )


def _recompute(metrics: Metrics, s: int) -> tuple[str, str] | None:
    proj, ours = f"rows/s{s}/recompute/projected_seconds", f"rows/s{s}/ours-qr/update_seconds"
    return (proj, ours) if proj in metrics and ours in metrics else None


def make_premises(metrics: Metrics, preset) -> list[Premise]:
    """What the speed-up claims rest on and the paper does not state as a result: on this
    stream, recomputing the truncated SVD after every batch costs far more than updating it
    (the paper's motivation, Section 1)."""
    premises = []
    for s in preset.batch_sizes:
        if not (names := _recompute(metrics, s)):
            continue
        proj, ours = names
        ratio = _seeds(metrics, proj, ours, lambda a, b: a / b)
        premises.append(
            Premise(
                id=f"recompute-costlier-s{s}",
                statement=f"with s = {s} rows per batch, recomputing the truncated SVD after "
                "every batch costs at least an order of magnitude more than updating it",
                paper="the motivation of the paper (Section 1); recompute is not a table row",
                measured=f"{preset.n_batches} x svds {metrics.mean(proj):.1f} s vs ours "
                f"{metrics.mean(ours):.2f} s (per-seed ratios "
                + ", ".join(f"x{r:.0f}" for r in ratio.values())
                + f"; {_n_values(len(ratio))})",
                criterion="per-seed ratio projected recompute time / ours-qr update time, "
                f"above {RECOMPUTE_FACTOR:g}",
                test=threshold(ratio, threshold=RECOMPUTE_FACTOR, source=RECOMPUTE_SOURCE),
            )
        )
    return premises


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
