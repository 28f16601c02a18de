"""The paper's claims and the code's checks, from the measured metrics.

Every claim is decided on paired per-seed values (``iclr24_common.verdicts``): timing claims
by a threshold at the paper's order of magnitude (0.1) on the per-seed time ratios (the
methods of one seed ran on the same stream, at the same threads, back to back, after an
untimed warm-up), in the paper's regime only on matrices of its size class; precision claims
by non-inferiority against the baseline (the residual) or the recomputed SVD (HR@10), with
the never-updated initial SVD as the no-op arm. That the sparse method gives the baseline's
singular values is an identity of the algorithm (a check), and that recomputing costs far
more than updating is the paper's motivation (a check).
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

RATIO = 0.1
"""Largest time ratio ours / baseline that counts as the paper's "order of magnitude"
faster (abstract), in every regime: below the paper's matrix sizes the claim is reported at
our scale (regime ``below``), never as a failure of the paper."""
RATIO_SOURCE = Source.paper(
    "an order of magnitude improvement in the efficiency ... while maintaining precision "
    "(an order of magnitude: a time ratio below 0.1)",
    "abstract; stated over the paper's datasets, which the official experiments list from "
    "MovieLens-1M (6k x 3.7k) and Goodbooks-10k (53k x 10k) to MovieLens-25M (162k x 59k), "
    "Fine Foods (256k x 74k) and Netflix (480k x 17.8k), and graphs of 75,879-82,168 nodes "
    "(HaoranDeng/IncSVDforICLR2024@a37b2ac)")  # fmt: skip

RESIDUAL_TOLERANCE = 235.12391268096187 / 234.87410247066396 - 1.0
"""0.00106: how far above a reference residual the authors' own demonstration puts the
method while presenting it as keeping the precision: the official IncSVD tutorial
(HaoranDeng/IncSVD@330b6e2, tutorial.ipynb, row update N = 1000, k = 64) prints the
Frobenius residual ||A - A_k|| of IncSVD 235.1239 against the exact svds' 234.8741 (ratio
1.00106). Fixed from that notebook before any run of this criterion."""
RESIDUAL_SOURCE = Source.derived(
    "the official IncSVD tutorial's residual ratio: ||A - A_k||_F 235.1239 (IncSVD) / 234.8741 "
    "(exact svds) = 1.00106 (HaoranDeng/IncSVD@330b6e2 tutorial.ipynb, row update N = 1000, "
    "k = 64), which the authors present as maintained precision: 0.00106 in residual-ratio "
    "units")  # fmt: skip

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
speed-up, abstract). The paper's motivation (Section 1), not a result: a check."""

# The paper's regime, decided from the matrix size. The paper states its order of magnitude
# over its matrices; the official experiments (HaoranDeng/IncSVDforICLR2024@a37b2ac,
# experiments/*.json, datasets/graph/*/attr.txt) list recommendation matrices from
# MovieLens-1M (6k x 3.7k) and Goodbooks-10k (53k users x 10k books, the dataset's README)
# up to MovieLens-25M (162k x 59k), Fine Foods (256k x 74k) and Netflix (480k x 17.8k), and
# graphs of 75,879 (Epinions) to 82,168 (Slashdot) nodes. The baselines' cost per update
# grows with m + n and ours does not, so the ratio falls as the matrix grows: we count a
# row-update matrix in the paper's regime from m + n >= 60,000 (the size class of
# Goodbooks, 63k, and above; the per-dataset tables were not available, so whether the paper
# reaches 10x on its small matrices is not known) and a graph from 75,879 nodes (the
# smallest of its graphs).
PAPER_ROWS_SIZE = 60_000
PAPER_GRAPH_NODES = 75_879
ROWS_NEEDS = (
    "a matrix of the paper's size class, m + n >= 60k (official experiments: Goodbooks 53k x "
    "10k, MovieLens-25M 162k x 59k, Fine Foods 256k x 74k, Netflix 480k x 17.8k; k 64, half "
    "the rows initial, the rest in 10-10000 batches; HaoranDeng/IncSVDforICLR2024@a37b2ac "
    "experiments/*.json): the baselines' cost grows with m + n, ours does not (the paper-cpu "
    "preset runs a generated 60k x 20k matrix in the regime); ours"
)
NETWORK_NEEDS = (
    "a graph of the paper's size, >= 75,879 nodes (Slashdot 82,168, Epinions 75,879, Flickr "
    "80,513; paper Table 4, HaoranDeng/IncSVDforICLR2024@a37b2ac datasets/graph/*/attr.txt; "
    "the paper-cpu preset runs the real Slashdot graph); ours"
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


def _rows_size(metrics: Metrics) -> tuple[int, int] | None:
    if "rows/matrix/m" not in metrics:
        return None
    return int(min(metrics.values("rows/matrix/m"))), int(min(metrics.values("rows/matrix/n")))


def _regime(size: int, paper_size: int, needs: str, ours: str) -> dict:
    if size >= paper_size:
        return {"regime": "paper"}
    return {"regime": "below", "needs": f"{needs} {ours}"}


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    """The paper's claims; ``preset`` is the ``Preset`` that produced ``metrics``."""
    claims = []
    size = _rows_size(metrics)
    layout = ("half the rows initial (official m_percent 0.5), the first "
              f"{preset.n_batches} batches timed" if getattr(preset, "initial_fraction", 0)
              else f"{preset.n_batches} batches at the end of the matrix")  # fmt: skip
    for s in preset.batch_sizes:
        p = f"rows/s{s}/"
        names = [f"{p}ours-{o}/time_ratio_vs_{b}" for o, b in PAIRS]
        if not all(n in metrics for n in names):
            continue
        n = len(metrics.values(names[0]))
        m_, n_ = size or (0, 0)
        where = f"a {m_ / 1e3:g}k x {n_ / 1e3:g}k matrix (m + n {(m_ + n_) / 1e3:g}k), {layout}"
        claims.append(
            Claim(
                id=f"speedup-s{s}",
                statement=f"updating with s = {s} rows per batch is an order of magnitude "
                f"faster (per-seed time ratio below {RATIO:g}) than each projection baseline "
                f"(ours/ZS, ours-GKL/Vecharynski, ours-RPI/Yamazaki), on {where}",
                paper="'an order of magnitude' faster (abstract; Tables 2-4, k = 64)",
                measured="time ratios "
                + ", ".join(f"{o}/{b} {metrics.fmt(m, 3)}" for (o, b), m in zip(PAIRS, names))
                + f" ({_n_values(n)})",
                criterion="per-seed update-time ratio ours / baseline (same stream, same "
                f"threads, after an untimed warm-up) for each of the 3 pairs, below {RATIO:g}",
                test=all_of(
                    *(
                        threshold(
                            metrics.by_seed(m),
                            threshold=RATIO,
                            higher_is_better=False,
                            source=RATIO_SOURCE,
                        )
                        for m in names
                    )
                ),  # fmt: skip
                test_set="none",
                **_regime(m_ + n_, PAPER_ROWS_SIZE, ROWS_NEEDS, where),
            )
        )
    _precision_claims(metrics, preset, claims)
    n = "network/ours-qr/time_ratio_vs_zha-simon"
    if n in metrics:
        nodes = int(min(metrics.values("network/matrix/nodes"))) if "network/matrix/nodes" in \
            metrics else 0  # fmt: skip
        graph = getattr(preset, "network_dataset", None) or "a generated SBM graph"
        where = (f"{graph} ({nodes:,} nodes), batches of {preset.sbm_batch} nodes, "
                 f"{preset.sbm_batches} timed")  # fmt: skip
        claims.append(
            Claim(
                id="network-speedup",
                statement="adding nodes (rows then columns) to a graph's SVD is an order of "
                f"magnitude faster (per-seed time ratio below {RATIO:g}) than Zha-Simon, on "
                f"{where} (the equal precision: check same-as-baseline)",
                paper="Table 4 (Slashdot, Flickr, Epinions): order-of-magnitude speed-up over Zha-Simon",
                measured=f"ours/ZS time ratio {metrics.fmt(n, 3)} "
                f"({_n_values(len(metrics.values(n)))})",
                criterion=f"per-seed update-time ratio ours / Zha-Simon (after an untimed "
                f"warm-up) below {RATIO:g}",
                test=threshold(
                    metrics.by_seed(n), threshold=RATIO, higher_is_better=False, source=RATIO_SOURCE
                ),  # fmt: skip
                test_set="none",
                **_regime(nodes, PAPER_GRAPH_NODES, NETWORK_NEEDS, where),
            )
        )
    return claims


def _precision_claims(metrics: Metrics, preset, claims: list[Claim]) -> None:
    name = lambda s, m: f"rows/s{s}/{m}/residual_ratio_vs_svds"  # noqa: E731
    cases = [(s, o, b) for s in preset.batch_sizes for o, b in PAIRS
             if name(s, f"ours-{o}") in metrics and name(s, b) in metrics]  # fmt: skip
    if cases:
        stale = lambda s: metrics.by_seed(name(s, "stale")) if name(s, "stale") in metrics else None  # noqa: E731
        worst = max(cases, key=lambda c: metrics.mean(name(c[0], f"ours-{c[1]}")))
        bworst = max(metrics.mean(name(s, b)) for s, _, b in cases)

        def ctl(m: str) -> str:
            return ", ".join(f"s={s} {metrics.mean(name(s, m)):.5f}"
                             for s in preset.batch_sizes if name(s, m) in metrics)  # fmt: skip

        moved = (f"the never-updated SVD's residual is {ctl('stale')} x the fresh svds' "
                 f"(new rows folded in instead: {ctl('foldin') or 'not measured'}); the "
                 f"updated ones at worst {metrics.mean(name(worst[0], f'ours-{worst[1]}')):.5f}"
                 if ctl("stale") else "")  # fmt: skip
        claims.append(
            Claim(
                id="precision-as-baselines",
                statement="after the whole stream the sparse method's truncated SVD is as "
                "close to the data as its baseline's: Frobenius residual ||A - U S V^T|| at "
                f"most {RESIDUAL_TOLERANCE:.5f} (in units of the fresh svds' residual) above "
                "the baseline's, for every pair at every s (the official tutorial's margin); "
                "the never-updated SVD, the same test, must fail it",
                paper="'while maintaining precision' (abstract); comparable precision to the "
                "baselines (Tables 2-4); official tutorial: residual 235.12 vs exact 234.87",
                measured=f"residual / svds' residual: ours at worst "
                f"{metrics.mean(name(worst[0], f'ours-{worst[1]}')):.5f} (s{worst[0]} "
                f"ours-{worst[1]}), baselines' worst {bworst:.5f}; {STALE}: "
                f"{ctl('stale') or 'not measured'}; {FOLDIN}: {ctl('foldin') or 'not measured'}",
                criterion="per-seed residual ratio ||A - U S V^T||_F / ||A - A_k^svds||_F of each "
                "sparse variant vs its baseline's (paired, lower is better) at every s; "
                f"control: {STALE} (new rows unrepresented), through the same test",
                test=all_of(
                    *(
                        non_inferiority(
                            metrics.by_seed(name(s, f"ours-{o}")),
                            metrics.by_seed(name(s, b)),
                            tolerance=RESIDUAL_TOLERANCE,
                            higher_is_better=False,
                            control=stale(s),
                            control_name=STALE,
                            source=RESIDUAL_SOURCE,
                        )
                        for s, o, b in cases
                    )
                ),  # fmt: skip
                regime="paper",
                test_set="none",
                moved=moved,
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
        ranked = ", ".join(f"s={s} {metrics.mean(f'rows/s{s}/ranked_users'):.0f}"
                           for s in preset.batch_sizes if f"rows/s{s}/ranked_users" in metrics)  # fmt: skip
        moved = ", ".join(f"s={s} {metrics.mean(name(s, f'ours-{o}')) - metrics.mean(name(s, 'foldin')):+.4f}"
                          for s, o in hr[:1] + [h for h in hr if h[1] == "qr"][1:]
                          if name(s, "foldin") in metrics)  # fmt: skip
        claims.append(
            Claim(
                id="downstream-hr10",
                statement="embeddings from the updated SVD rank items for the users that "
                "arrived in the stream as well as a recomputed SVD (HR@10 at most "
                f"{HR_TOLERANCE:.0%} below it, our level); the new rows folded into the "
                f"never-updated SVD, the same test, must fail it; {_stream_kind(preset)}",
                paper="comparable MRR / HR@10 on recommendation (Table 3)",
                measured=f"HR@10 {'; '.join(rows)}; recomputed {recs}; {FOLDIN}: {fold_txt}"
                + (f"; ranked users (all arrived in the stream) {ranked}" if ranked else ""),
                criterion=f"per-seed HR@10 of the users that arrived in the stream, every "
                f"variant at every s vs the recomputed SVD's (tolerance {HR_TOLERANCE:.0%} of "
                f"the recomputed HR@10); control: {FOLDIN}, through the same test",
                test=all_of(*parts),
                regime="paper",
                test_set="per-seed",
                moved=(f"HR@10 of ours-qr minus the fold-in's: {moved}" if moved else ""),
            )
        )


def _stream_kind(preset) -> str:
    if getattr(preset, "dataset", None):
        return f"the stream: {preset.dataset}'s rows in their file order"
    if getattr(preset, "drift", False):
        return ("a drifting stream: the streamed users come from latent clusters the initial "
                "rows lack (on a stationary one the fold-in ranks as well and the criterion "
                "cannot tell updating from not updating)")  # fmt: skip
    return ("a stationary stream: the fold-in may rank as well, and then the criterion cannot "
            "tell updating from not updating")  # fmt: skip


def make_premises(metrics: Metrics, preset) -> list[Premise]:
    """No premises: recomputing is costlier than updating is the paper's motivation, a
    check (``make_checks``), not a precondition a verdict rests on."""
    return []


def make_checks(metrics: Metrics, preset) -> list[Check]:
    """Invariants of the code: the sparse method reproduces its baseline's singular values,
    every updated factor stays orthonormal; and the paper's motivation, that recomputing
    after every batch costs far more than updating (reported, not a result)."""
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
    for s in preset.batch_sizes:
        proj, ours = f"rows/s{s}/recompute/projected_seconds", f"rows/s{s}/ours-qr/update_seconds"
        if proj not in metrics or ours not in metrics:
            continue
        ratio = _seeds(metrics, proj, ours, lambda a, b: a / b)
        checks.append(
            Check(
                id=f"recompute-costlier-s{s}",
                statement=f"with s = {s} rows per batch, recomputing the truncated SVD after "
                f"every batch costs at least {RECOMPUTE_FACTOR:g}x more than updating it (the "
                "paper's motivation, Section 1; not a result)",
                paper="the motivation of the paper (Section 1); recompute is not a table row",
                measured=f"{preset.n_batches} x svds {metrics.mean(proj):.1f} s vs ours "
                f"{metrics.mean(ours):.2f} s (per-seed ratios "
                + ", ".join(f"x{r:.0f}" for r in ratio.values())
                + ")",
                criterion=f"every seed's projected recompute time / ours-qr update time >= "
                f"{RECOMPUTE_FACTOR:g}",
                holds=bool(min(ratio.values()) >= RECOMPUTE_FACTOR),
                why="the cost model: a fresh svds reads all nnz(A) in every Lanczos iteration "
                "of a rank-k solve, an update reads only the s new rows plus O((s + k) k^2) "
                "small dense work; reported to show the stream is one where updating is the "
                "point",
            )
        )
    return checks
