"""The paper's claims and the code's checks, computed from the measured metrics.

A claim's verdict (holds / fails / inconclusive) comes from a test on paired per-seed values
(``iclr24_common.verdicts``); a check is an invariant of the code that holds by construction.
"""

from __future__ import annotations

import numpy as np

from iclr24_common import Check, Claim, Metrics, all_of, superiority, threshold

BASELINES = ["degree", "feat_inconsistency", "gae", "dominant", "anomalydae", "cola"]
DENSE = ("dominant", "anomalydae")  # O(N^2) adjacency reconstruction
METHODS = ["gadam", "gadam_local", *BASELINES]
PAPER_CLAIM = (
    "main results table: GADAM has the best AUC on all 9 datasets (per-dataset figures not "
    "found: searched the OpenReview page, the official repository and citing papers)"
)
# beats-baselines: the AUC margin is Preset.margin (0.05), the package's criterion fixed before
# the first default run (the paper's per-dataset AUCs were not found, so it is not theirs).
# global-stage: the ablation gives no size; the gain must exceed 0.001 AUC, the third decimal
# at which AUC is reported (here and in PyGOD's benchmark tables): a smaller gain is not shown.
ABLATION_MARGIN = 0.001
# efficiency, time: DOMINANT's fit must take more than 2x GADAM's, judged per repeat (each fit
# in a fresh process at one thread, the two detectors alternating). Fit times on the shared
# 2-core machine move by tens of percent with its load, so a smaller factor is not a speed
# difference a user could count on; the repeats' spread is the SE, and a spread that cannot
# place the ratio above 2 leaves the claim inconclusive.
FASTER = 2.0
# efficiency, memory: DOMINANT's peak over the graph must exceed GADAM's by more than one dense
# N x N float32 matrix of the graph: the O(N^2) adjacency that makes DOMINANT costly is the
# point of the claim (5,000 nodes: 95 MB). Each peak is the fit's own, in a fresh process.
MB = 1024 * 1024


def make_claims(metrics: Metrics, preset, graphs: list[str]) -> list[Claim]:
    """Per graph: GADAM vs the strongest baseline, and the global stage vs LIM alone; then
    the efficiency claim where it was measured."""
    claims = []
    for g in graphs:
        have = [b for b in BASELINES if f"{g}/{b}/auc" in metrics]
        best = max(have, key=lambda b: metrics.mean(f"{g}/{b}/auc"))
        gap = metrics.gap(f"{g}/gadam/auc", f"{g}/{best}/auc")
        few = [
            b
            for b in have
            if len(metrics.values(f"{g}/{b}/auc")) < len(metrics.values(f"{g}/gadam/auc"))
        ]
        note = f" ({', '.join(few)} on one seed only)" if few else ""
        claims.append(
            Claim(
                id=f"beats-baselines-{g}",
                statement=f"GADAM's AUC exceeds the strongest baseline's by at least {preset.margin}",
                paper=PAPER_CLAIM,
                measured=f"GADAM {metrics.fmt(f'{g}/gadam/auc')} vs {best} "
                f"{metrics.fmt(f'{g}/{best}/auc')}: gap {gap}{note}",
                criterion=f"GADAM's test AUC vs the strongest baseline's ({best}, by mean AUC), "
                f"paired per seed; margin {preset.margin:g} (Preset.margin)",
                test=superiority(metrics.by_seed(f"{g}/gadam/auc"),
                                 metrics.by_seed(f"{g}/{best}/auc"), margin=preset.margin),
            )
        )  # fmt: skip
        add = metrics.gap(f"{g}/gadam/auc", f"{g}/gadam_local/auc")
        claims.append(
            Claim(
                id=f"global-stage-{g}",
                statement="the global stage (adaptive message passing) raises AUC over the local stage alone",
                paper="ablation study: the full model beats LIM alone",
                measured=f"full {metrics.fmt(f'{g}/gadam/auc')} vs local-only "
                f"{metrics.fmt(f'{g}/gadam_local/auc')}: gap {add}",
                criterion="the full model's AUC vs its local stage's alone (same fit), paired per "
                f"seed; margin {ABLATION_MARGIN:g} (AUC's reported third decimal)",
                test=superiority(metrics.by_seed(f"{g}/gadam/auc"),
                                 metrics.by_seed(f"{g}/gadam_local/auc"), margin=ABLATION_MARGIN),
            )
        )  # fmt: skip
    claims += _efficiency(metrics, preset, graphs)
    return claims


def _efficiency(metrics: Metrics, preset, graphs: list[str]) -> list[Claim]:
    """Fit time and peak memory, GADAM vs DOMINANT on the efficiency graph: per repeat, one fit
    of each in a fresh process at one thread (repeat k is judged as one value)."""
    if "efficiency/gadam/fit_seconds" not in metrics:
        return []
    setting = next(s for s in preset.graphs if s.name == preset.efficiency_graph)
    dense_mb = setting.num_nodes**2 * 4 / MB
    t = {m: metrics.by_seed(f"efficiency/{m}/fit_seconds") for m in ("gadam", "dominant")}
    mb = {m: metrics.by_seed(f"efficiency/{m}/peak_mb_over_graph") for m in ("gadam", "dominant")}
    reps = sorted(set(t["gadam"]) & set(t["dominant"]))
    ratio = {k: t["dominant"][k] / t["gadam"][k] for k in reps}
    memory = {k: mb["dominant"][k] - mb["gadam"][k] for k in reps}

    def spread(d: dict, unit: str, fmt: str = ".2f") -> str:
        v = np.array(list(d.values()))
        return f"median {np.median(v):{fmt}}{unit} (range {v.min():{fmt}}-{v.max():{fmt}}{unit})"

    measured = (
        f"{preset.efficiency_graph}, {len(reps)} repeats (fresh process per fit, 1 thread, "
        f"interleaved): fit GADAM {spread(t['gadam'], ' s')} vs DOMINANT "
        f"{spread(t['dominant'], ' s')}, time ratio {spread(ratio, '', '.3g')}; peak memory "
        f"over the graph GADAM {spread(mb['gadam'], ' MB', '.0f')} vs DOMINANT "
        f"{spread(mb['dominant'], ' MB', '.0f')}"
    )
    return [
        Claim(
            id="efficiency",
            statement="GADAM fits faster and with less memory than a GCN autoencoder detector",
            paper="efficiency comparison: lower runtime and GPU memory than GNN-based baselines",
            measured=measured,
            criterion=f"all of, per repeat on {preset.efficiency_graph} (each fit in a fresh "
            f"process at 1 thread, the detectors alternating): DOMINANT's fit time over "
            f"GADAM's (above {FASTER:g}); DOMINANT's peak resident memory over the graph minus "
            f"GADAM's (above {dense_mb:.3g} MB, one dense N x N float32 matrix)",
            test=all_of(
                threshold(ratio, threshold=FASTER), threshold(memory, threshold=dense_mb)
            ),  # fmt: skip
        )
    ]


def make_checks(metrics: Metrics, preset, graphs: list[str]) -> list[Check]:
    """Invariants of the code: budgets run as configured, CoLA's subgraphs have the official
    size with the target last, GADAM's score is its two stages' sum."""
    checks, budgets, short = [], [], []
    for g in graphs:
        for name in ("gae", "dominant", "anomalydae", "cola"):
            key = f"{g}/{name}/epochs"
            if key in metrics:
                want = metrics.mean(f"{g}/{name}/configured_epochs")
                budgets.append(f"{g}/{name} {metrics.mean(key):.0f}/{want:.0f}")
                short += [key] if metrics.mean(key) != want else []
    if budgets:
        checks.append(
            Check(
                id="baseline-budgets",
                statement="every trained baseline ran its configured epochs",
                measured="; ".join(budgets),
                criterion="epochs run == configured epochs, every graph and seed",
                holds=not short,
                why="each detector's training loop runs range(config.epochs) with no early stop",
            )
        )
    sizes = [g for g in graphs if f"{g}/cola/subgraph_size" in metrics]
    if sizes:
        ok = all(
            metrics.mean(f"{g}/cola/subgraph_size") == preset.cola.subgraph_size
            and metrics.mean(f"{g}/cola/target_last") == 1.0
            for g in sizes
        )
        checks.append(
            Check(
                id="cola-subgraphs",
                statement="CoLA's RWR subgraphs have the official size with the target last",
                measured=", ".join(
                    f"{g}: {metrics.mean(f'{g}/cola/subgraph_size'):.0f} nodes" for g in sizes
                ),
                criterion=f"size == {preset.cola.subgraph_size} and target last, every node",
                holds=ok,
                why="RWRSampler fills every context to subgraph_size - 1 nodes (retries, then "
                "cyclic repetition) and appends the target, as the official generate_rwr_subgraph",
            )
        )
    errs = [
        metrics.mean(f"{g}/gadam/decomposition_error")
        for g in graphs
        if f"{g}/gadam/decomposition_error" in metrics
    ]
    if errs:
        checks.append(
            Check(
                id="gadam-score-decomposition",
                statement="GADAM's score is the sum of its local and global scores",
                measured=f"max |score - local - global| {max(errs):.1e}",
                criterion="<= 1e-5",
                holds=bool(max(errs) <= 1e-5),
                why="GADAM.fit sets decision_score_ = -(global + local) from the same tensors as "
                "local_score_ and global_score_ (1e-5: float32 rounding)",
            )
        )
    return checks
