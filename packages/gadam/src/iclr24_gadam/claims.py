"""The paper's claims and the code's checks, computed from the measured metrics.

A claim's verdict (holds / fails / inconclusive) comes from a test on paired per-seed values
(``iclr24_common.verdicts``); a check is an invariant of the code that holds by construction.
"""

from __future__ import annotations

import numpy as np

from iclr24_common import Check, Claim, Metrics, Source, all_of, item_se, superiority, threshold

from .data import DATASETS, OGB, PYGOD
from .gadam import GADAMConfig

BASELINES = ["degree", "feat_inconsistency", "gae", "dominant", "anomalydae", "cola"]
DENSE = ("dominant", "anomalydae")  # O(N^2) adjacency reconstruction
# global-stage's no-op control: GADAM whose global stage trains on random pseudo-labels (the
# same local stage, the same number of pseudo-anomalies and pseudo-normal nodes, drawn at random)
CONTROL = "gadam_random"
CONTROL_NAME = "the global stage trained on random pseudo-labels (same local stage)"
METHODS = ["gadam", "gadam_local", CONTROL, *BASELINES]
PAPER_CLAIM = (
    "main results table: GADAM has the best AUC on all 9 datasets (per-dataset figures not "
    "found: searched the OpenReview page, the official repository and citing papers)"
)
# the commit at which the margins of our own choosing were fixed (they predate it; issue 48
# gave them their sources there, before the rerun)
FIXED_AT = "16e3ff9"
# beats-baselines: the paper states a ranking (GADAM has the best AUC on every dataset), so the
# margin (Preset.margin, 0.001) is the smallest lead a table shows: one unit of the third
# decimal at which AUC is reported. Until issue 51 it was 0.05, a margin of ours with no source
# in the paper (its per-dataset AUCs were not found), stricter than its statement: in the
# paper's regime (the paper-cpu run) that would have counted a lead of 0.02 as a failure of
# the paper. Fixed before the paper-cpu run and the default rerun.
MARGIN_FIXED_AT = "c4b22f4"
MARGIN_SOURCE = Source.ours(
    "the paper's statement is a ranking (the best AUC on all 9 datasets); 0.001 is one unit of "
    "the third decimal at which AUC is reported (here and in PyGOD's benchmark tables), the "
    "smallest lead a table shows; the paper's per-dataset AUCs were not found (OpenReview "
    "page, the official repository, citing papers)",
    commit=MARGIN_FIXED_AT,
)
# global-stage: the ablation gives no size; the gain must exceed 0.001 AUC, the third decimal
# at which AUC is reported (here and in PyGOD's benchmark tables): a smaller gain is not shown.
ABLATION_MARGIN = 0.001
ABLATION_SOURCE = Source.ours(
    "one unit of the third decimal at which AUC is reported (here and in PyGOD's benchmark "
    "tables): a smaller gain does not show in a table; the paper's ablation gives no size",
    commit=FIXED_AT,
)
# efficiency, time: DOMINANT's fit must take more than 2x GADAM's, judged per repeat (each fit
# in a fresh process at one thread, the two detectors alternating). Fit times on the shared
# 2-core machine move by tens of percent with its load, so a smaller factor is not a speed
# difference a user could count on; the repeats' spread is the SE, and a spread that cannot
# place the ratio above 2 leaves the claim inconclusive.
FASTER = 2.0
FASTER_SOURCE = Source.ours(
    "fit times on the shared 2-core machine move by tens of percent with its load: a factor "
    "under 2 is not a speed difference a user could count on; the paper states 'superiority "
    "in runtime' without a factor we could find",
    commit=FIXED_AT,
)
# efficiency, memory: DOMINANT's peak over the graph must exceed GADAM's by more than one dense
# N x N float32 matrix of the graph: the O(N^2) adjacency that makes DOMINANT costly is the
# point of the claim (5,000 nodes: 95 MB). Each peak is the fit's own, in a fresh process.
MB = 1024 * 1024

# ------------------------------------------------------------------------------ regimes
PAPER_DATA = (
    "the paper's graphs: Cora (2,708 nodes), CiteSeer (3,327), PubMed (19,717), ACM (16,484) "
    "and BlogCatalog (5,196) with anomalies injected through PyGOD's generator, ogbn-arxiv "
    "(169,343) and ogbn-products (2,449,029) likewise, Books and Reddit with organic anomalies "
    "(PasaLab/GADAM@5e77705 README; the paper's nine datasets)"
)
PAPER_EFFICIENCY = (
    "GPU runtime and GPU memory on 1 Tesla V100 32 GB (the paper's setup: 'All experiments are "
    "performed on 1 Tesla V100 GPU with 32GB memory') against GNN-based baselines on its "
    "datasets, up to ogbn-products' 2,449,029 nodes (PasaLab/GADAM@5e77705 README)"
)


def detection_regime(preset, g: str) -> tuple[str, str]:
    """``paper`` on one of the paper's datasets at GADAM's official settings and the
    protocol's injection (Books and Reddit: their organic anomalies, which no cap on injected
    cliques touches); else ``below`` (the generated graphs, or cut settings)."""
    official = GADAMConfig.minibatch() if g in OGB else GADAMConfig()
    injected_as_paper = preset.max_cliques is None or g in PYGOD
    if g in DATASETS and preset.gadam == official and injected_as_paper:
        return "paper", ""
    setting = next((s for s in preset.graphs if s.name == g), None)
    if setting is None:
        ours = (f"ours {g} with GADAM at {preset.gadam.local_epochs} + "
                f"{preset.gadam.global_epochs} epochs" +
                (f", at most {preset.max_cliques} injected cliques"
                 if preset.max_cliques and g not in PYGOD else "") +
                (" (its organic anomalies, the file's labels)" if g in PYGOD else ""))  # fmt: skip
    else:
        n_ano = 2 * setting.num_cliques * setting.clique_size
        ours = (f"ours a generated stochastic-block citation-like graph of "
                f"{setting.num_nodes:,} nodes and {setting.vocab:,} words with {n_ano} injected "
                f"anomalies ({setting.num_cliques} cliques of {setting.clique_size} and as many "
                f"contextual), GADAM at {preset.gadam.hidden} hidden and "
                f"{preset.gadam.local_epochs} + {preset.gadam.global_epochs} epochs (official: "
                "64, 100 + 50)")  # fmt: skip
    return "below", f"{PAPER_DATA}; {ours}"


def _item_se(items: dict, g: str, method: str) -> float:
    """The SE of one method's AUC over the anomalies of a graph every seed shares (the
    item-level SE the paired tests use: iclr24_common.item_se over the (seeds, anomalies)
    items)."""
    return item_se(np.vstack(list(items[f"{g}/{method}/auc_items"].values())))


def make_claims(
    metrics: Metrics, preset, graphs: list[str], items: dict | None = None
) -> list[Claim]:
    """Per graph: GADAM vs the strongest baseline, and the global stage vs LIM alone; then
    the efficiency claim where it was measured. ``items``: the AUCs' per-anomaly items
    (name -> seed -> array) of the graphs whose labels every seed shares."""
    claims, items = [], items or {}
    for g in graphs:
        # a graph whose labels came with its file: every seed scores the same anomalies, so
        # the AUC's SE includes its items (the units kept them); injected per seed: none
        shared = f"{g}/gadam/auc_items" in items

        def its(*methods, g=g, shared=shared):
            return tuple(items[f"{g}/{m}/auc_items"] for m in methods) if shared else None

        have = [b for b in BASELINES if f"{g}/{b}/auc" in metrics]
        best = max(have, key=lambda b: metrics.mean(f"{g}/{b}/auc"))
        gap = metrics.gap(f"{g}/gadam/auc", f"{g}/{best}/auc")
        few = [
            b
            for b in have
            if len(metrics.values(f"{g}/{b}/auc")) < len(metrics.values(f"{g}/gadam/auc"))
        ]
        note = f" ({', '.join(few)} on one seed only)" if few else ""
        if shared:  # the file's anomalies (organic on Books and Reddit), the same on every seed
            n_items = len(next(iter(items[f"{g}/gadam/auc_items"].values())))
            kind = "organic" if g in PYGOD else "the file's"
            note += (f"; {n_items} {kind} anomalies, the same on every seed (item-level SE of "
                     f"the AUC: GADAM {_item_se(items, g, 'gadam'):.2g}, {best} "
                     f"{_item_se(items, g, best):.2g})")  # fmt: skip
            paired = ("paired per seed, SE over the seeds and the anomalies (the file's "
                      f"{'organic ' if g in PYGOD else ''}anomalies, the same on every seed: "
                      "item-level SE)")  # fmt: skip
        else:
            paired = "paired per seed (anomalies injected per seed)"
        regime, needs = detection_regime(preset, g)
        claims.append(
            Claim(
                id=f"beats-baselines-{g}",
                statement=f"GADAM's AUC exceeds the strongest baseline's (by more than "
                f"{preset.margin:g}, a lead that shows at AUC's third decimal)",
                paper=PAPER_CLAIM,
                measured=f"GADAM {metrics.fmt(f'{g}/gadam/auc')} vs {best} "
                f"{metrics.fmt(f'{g}/{best}/auc')}: gap {gap}{note}",
                criterion=f"GADAM's test AUC vs the strongest baseline's ({best}, by mean AUC), "
                f"{paired}; margin {preset.margin:g} (Preset.margin)",
                test=superiority(metrics.by_seed(f"{g}/gadam/auc"),
                                 metrics.by_seed(f"{g}/{best}/auc"), margin=preset.margin,
                                 source=MARGIN_SOURCE, items=its("gadam", best)),
                regime=regime, needs=needs, test_set="shared" if shared else "per-seed",
            )
        )  # fmt: skip
        add = metrics.gap(f"{g}/gadam/auc", f"{g}/gadam_local/auc")
        flags = metrics.mean(f"{g}/gadam/flags_changed")
        ctl = f"{g}/{CONTROL}/auc"
        control = metrics.by_seed(ctl) if ctl in metrics else None
        ctl_note = (f"; {CONTROL_NAME}: {metrics.fmt(ctl)}, gap over local-only "
                    f"{metrics.gap(ctl, f'{g}/gadam_local/auc')}" if control else "")  # fmt: skip
        claims.append(
            Claim(
                id=f"global-stage-{g}",
                statement="the global stage (adaptive message passing) raises AUC over the local "
                f"stage alone by more than {ABLATION_MARGIN:g}",
                paper="ablation study: the full model beats LIM alone",
                measured=f"full {metrics.fmt(f'{g}/gadam/auc')} vs local-only "
                f"{metrics.fmt(f'{g}/gadam_local/auc')}: gap {add}{ctl_note}",
                criterion=f"the full model's AUC vs its local stage's alone (same fit), {paired}; "
                f"margin {ABLATION_MARGIN:g} (AUC's reported third decimal); the no-op "
                f"control ({CONTROL_NAME}) through the same test",
                test=superiority(metrics.by_seed(f"{g}/gadam/auc"),
                                 metrics.by_seed(f"{g}/gadam_local/auc"), margin=ABLATION_MARGIN,
                                 source=ABLATION_SOURCE, control=control,
                                 control_name=CONTROL_NAME,
                                 items=its("gadam", "gadam_local",
                                           *([CONTROL] if control else []))),
                regime=regime, needs=needs, test_set="shared" if shared else "per-seed",
                moved=f"{flags:.1%} of the nodes the full model flags (its top 5 %) lie below "
                "the local stage's own 5 % cut",
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
    dense_source = Source.derived(
        f"one dense N x N float32 matrix of the efficiency graph: {setting.num_nodes:,}^2 x 4 B "
        f"= {dense_mb:.1f} MB, the O(N^2) adjacency that makes DOMINANT costly"
    )
    return [
        Claim(
            id="efficiency",
            statement=f"GADAM fits more than {FASTER:g} times as fast as the dense GCN "
            "autoencoder DOMINANT and with more than one dense N x N float32 matrix less peak "
            "memory",
            paper="efficiency comparison: lower runtime and GPU memory than GNN-based baselines",
            measured=measured,
            criterion=f"all of, per repeat on {preset.efficiency_graph} (each fit in a fresh "
            f"process at 1 thread, the detectors alternating): DOMINANT's fit time over "
            f"GADAM's (above {FASTER:g}); DOMINANT's peak resident memory over the graph minus "
            f"GADAM's (above {dense_mb:.3g} MB, one dense N x N float32 matrix)",
            test=all_of(
                threshold(ratio, threshold=FASTER, source=FASTER_SOURCE),
                threshold(memory, threshold=dense_mb, source=dense_source),
            ),  # fmt: skip
            regime="below",
            needs=f"{PAPER_EFFICIENCY}; ours CPU time and resident memory at 1 thread on a "
            f"generated {setting.num_nodes:,}-node graph, GADAM vs DOMINANT, {len(reps)} "
            "repeats",
            test_set="none",
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
    same = [g for g in graphs if f"{g}/{CONTROL}/local_auc" in metrics]
    if same:
        worst = max(abs(metrics.by_seed(f"{g}/{CONTROL}/local_auc")[s]
                        - metrics.by_seed(f"{g}/gadam_local/auc")[s])
                    for g in same for s in metrics.by_seed(f"{g}/{CONTROL}/local_auc"))  # fmt: skip
        checks.append(
            Check(
                id="control-same-local-stage",
                statement="the global-stage control shares GADAM's local stage (only its "
                "pseudo-labels differ)",
                measured=f"max |local-stage AUC of the control - GADAM's| {worst:.1e} over "
                f"{', '.join(same)}",
                criterion="== 0 on every graph and seed",
                holds=worst == 0.0,
                why="the control is GADAM with the same config and seed but pseudo_labels="
                "'random': its local stage runs the same code on the same generator before the "
                "pseudo-labels are drawn",
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
