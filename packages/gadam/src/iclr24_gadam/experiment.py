"""The reproduction: GADAM (local-only and full) vs baselines on graphs with injected anomalies."""

from __future__ import annotations

import multiprocessing as mp
import resource
import time
from dataclasses import dataclass, field, replace

import torch

from iclr24_common import Claim, Metrics, Report, UsageError, progress, seed_everything

from .baselines import ColaDetector, DominantAE, degree_score, feature_inconsistency_score
from .data import OGB, CitationGraphSpec, citation_graph, inject_anomalies, load_dataset
from .gadam import GADAM, GADAMConfig
from .metrics import detection_metrics

PAPER = {
    "title": "Boosting Graph Anomaly Detection with Adaptive Message Passing",
    "arxiv": "openreview:CanomFZssu",
    "venue": "ICLR 2024",
    "code": "https://github.com/PasaLab/GADAM",
}
METHODS = ["gadam", "gadam_local", "degree", "feat_inconsistency", "cola", "dominant"]
BASELINES = ["degree", "feat_inconsistency", "cola", "dominant"]


@dataclass
class GraphSetting:
    """One generated graph and its injected anomalies."""

    name: str
    spec: CitationGraphSpec
    num_cliques: int
    clique_size: int = 15  # GADAM inject_ano.py, DOMINANT protocol
    dominant_all_seeds: bool = True
    """False: the dense O(N^2) DOMINANT baseline runs once on this graph (first seed), in
    the efficiency measurement, and its AUC there is from that one run."""


@dataclass
class Preset:
    graphs: list[GraphSetting]
    gadam: GADAMConfig = field(default_factory=GADAMConfig)
    dominant_epochs: int = 100  # PyGOD DOMINANT default
    cola_epochs: int = 100  # CoLA paper
    cola_rounds: int = 64
    efficiency_graph: str = "large"
    datasets: list[str] = field(default_factory=list)


PRESETS = {
    "smoke": Preset(
        graphs=[
            GraphSetting("cora-like", CitationGraphSpec(num_nodes=500, vocab=200), 2, 10),
            GraphSetting("large", CitationGraphSpec(num_nodes=1000, vocab=150), 3, 10, False),
        ],
        gadam=GADAMConfig(local_epochs=30, global_epochs=15),
        dominant_epochs=15,
        cola_epochs=15,
        cola_rounds=4,
    ),
    "default": Preset(
        graphs=[
            GraphSetting("cora-like", CitationGraphSpec(), 5),  # 150 anomalies as on Cora
            GraphSetting("large", CitationGraphSpec(num_nodes=10000, vocab=500), 20, 15, False),
        ],
    ),
    "paper": Preset(
        graphs=[],
        datasets=[
            "cora",
            "citeseer",
            "pubmed",
            "acm",
            "blogcatalog",
            "books",
            "reddit",
            "ogbn-arxiv",
        ],
    ),
}

# The paper reports GADAM's ROC-AUC as the best of all methods on all nine datasets. Its
# per-dataset figures could not be checked offline, so the claims quote the statement only.
PAPER_CLAIM = "main results table: GADAM has the best AUC on all 9 datasets"


def add_arguments(p):
    p.add_argument(
        "--faithful-quirks",
        choices=["on", "off"],
        default="on",
        help="on: the official code's score/centre checkpoints (default); off: consistent best-loss checkpoints",
    )
    p.add_argument(
        "--datasets",
        nargs="+",
        default=None,
        help="paper preset: datasets under --data-dir (cora citeseer pubmed acm blogcatalog books reddit)",
    )


def make_graph(setting: GraphSetting, seed: int):
    g = citation_graph(setting.spec, seed)
    g.x = g.x / g.x.sum(1, keepdim=True).clamp(min=1)  # row-normalised, as DGL's citation loaders
    return inject_anomalies(
        g, clique_size=setting.clique_size, num_cliques=setting.num_cliques, seed=seed
    )


def run_method(name: str, g, preset: Preset, seed: int, device, quirks: bool):
    """Scores of one method on one graph: (dict of score arrays by method name, fit seconds)."""
    t0 = time.perf_counter()
    if name == "gadam":
        det = GADAM(
            preset.gadam, contamination=0.05, device=device, seed=seed, official_quirks=quirks
        ).fit(g)
        return {
            "gadam": det.decision_score_,
            "gadam_local": det.local_score_,
        }, time.perf_counter() - t0
    if name == "degree":
        return {name: degree_score(g)}, time.perf_counter() - t0
    if name == "feat_inconsistency":
        return {name: feature_inconsistency_score(g)}, time.perf_counter() - t0
    if name == "cola":
        det = ColaDetector(
            epochs=preset.cola_epochs, rounds=preset.cola_rounds, device=device, seed=seed
        ).fit(g)
        return {name: det.decision_score_}, time.perf_counter() - t0
    if name == "dominant":
        return {
            name: DominantAE(epochs=preset.dominant_epochs, device=device).fit(g).decision_score_
        }, time.perf_counter() - t0
    raise ValueError(name)


def _measure_child(queue, setting, preset, method, seed, quirks):
    """Runs in a fresh process: fit one method, report fit time, peak RSS and its scores."""
    torch.set_num_threads(1)
    seed_everything(seed)
    g = make_graph(setting, seed)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if method == "none":
        queue.put({"seconds": 0.0, "rss_mb": base / 1024, "scores": None})
        return
    scores, secs = run_method(method, g, preset, seed, "cpu", quirks)
    queue.put(
        {
            "seconds": secs,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "scores": scores[method],
        }
    )


def measure_in_subprocess(setting, preset, method, seed, quirks=True) -> dict:
    """Fit time (1 thread) and peak resident memory of one fit, in a forked process so that
    the peak belongs to that fit alone (minus the "none" run: the data and the libraries)."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_measure_child, args=(q, setting, preset, method, seed, quirks))
    p.start()
    out = q.get(timeout=1800)
    p.join()
    return out


def _seed_metrics(m: Metrics, prefix: str, seed: int, scores: dict, g):
    for method, s in scores.items():
        m.update(
            seed,
            detection_metrics(g.label.numpy(), s, getattr(g, "anomaly_type", None)),
            prefix=f"{prefix}/{method}/",
        )


def run(ctx) -> Report:
    preset = PRESETS[ctx.preset]
    quirks = ctx.args.faithful_quirks == "on"
    if ctx.preset == "paper":
        return run_paper(ctx, preset, quirks)
    m = Metrics()
    for setting in preset.graphs:
        ctx.log.info(
            "graph %s: %d nodes, %d x %d clique + as many contextual anomalies",
            setting.name,
            setting.spec.num_nodes,
            setting.num_cliques,
            setting.clique_size,
        )
        for seed in progress(ctx.seeds, desc=setting.name):
            seed_everything(seed)
            g = make_graph(setting, seed)
            for method in ["gadam", "degree", "feat_inconsistency", "cola", "dominant"]:
                if method == "dominant" and not setting.dominant_all_seeds:
                    continue  # run once, in the efficiency measurement below
                scores, secs = run_method(method, g, preset, seed, ctx.torch_device, quirks)
                _seed_metrics(m, setting.name, seed, scores, g)
                m.add(f"{setting.name}/{method}/fit_seconds", seed, secs)
            ctx.log.info(
                "%s seed %d: gadam auc %.4f, local %.4f, cola %.4f",
                setting.name,
                seed,
                m.values(f"{setting.name}/gadam/auc")[-1],
                m.values(f"{setting.name}/gadam_local/auc")[-1],
                m.values(f"{setting.name}/cola/auc")[-1],
            )
            ctx.save_partial(m)
    # efficiency: GADAM vs the GCN autoencoder on the larger graph, each in its own process
    eff_setting = next(s for s in preset.graphs if s.name == preset.efficiency_graph)
    ctx.log.info(
        "efficiency on %s: fit time and peak memory in fresh processes (1 thread)", eff_setting.name
    )
    seed = ctx.seeds[0]
    base = measure_in_subprocess(eff_setting, preset, "none", seed)
    eff = {}
    for method in ["gadam", "dominant"]:
        r = measure_in_subprocess(eff_setting, preset, method, seed, quirks)
        eff[method] = r
        if method == "dominant" and not eff_setting.dominant_all_seeds:
            g = make_graph(eff_setting, seed)
            _seed_metrics(m, eff_setting.name, seed, {"dominant": r["scores"]}, g)
        m.add(f"efficiency/{method}/fit_seconds", seed, r["seconds"])
        m.add(f"efficiency/{method}/peak_mb_over_data", seed, r["rss_mb"] - base["rss_mb"])
    ctx.save_partial(m)
    figure(ctx, m, preset)
    return Report(
        m,
        claims(m, preset),
        extra={"efficiency_graph": eff_setting.name, "official_quirks": quirks},
    )


def claims(m: Metrics, preset: Preset) -> list[Claim]:
    out = []
    for s in preset.graphs:
        g = s.name
        auc = {k: m.mean(f"{g}/{k}/auc") for k in METHODS}
        best = max(BASELINES, key=lambda k: auc[k])
        gap = auc["gadam"] - auc[best]
        out.append(
            Claim(
                f"beats-baselines-{g}",
                "GADAM's AUC is the best among the detectors",
                PAPER_CLAIM,
                f"GADAM {m.fmt(f'{g}/gadam/auc')} vs best baseline {best} {auc[best]:.4f} (gap {gap:+.4f})",
                "mean AUC(GADAM) >= mean AUC(best baseline) + 0.05",
                bool(gap >= 0.05),
            )
        )
        add = auc["gadam"] - auc["gadam_local"]
        per_type = ", ".join(
            f"{t}: {m.mean(f'{g}/gadam/auc_{t}') - m.mean(f'{g}/gadam_local/auc_{t}'):+.4f}"
            for t in ("contextual", "structural")
        )
        out.append(
            Claim(
                f"global-stage-{g}",
                "the global stage (adaptive message passing) does not hurt and adds AUC",
                "ablation study: the full model beats LIM alone",
                f"full {auc['gadam']:.4f} vs local-only {auc['gadam_local']:.4f} (adds {add:+.4f}; {per_type})",
                "mean AUC(full) >= mean AUC(local only) - 0.01",
                bool(add >= -0.01),
            )
        )
    t_g, t_d = m.mean("efficiency/gadam/fit_seconds"), m.mean("efficiency/dominant/fit_seconds")
    r_g, r_d = (
        m.mean("efficiency/gadam/peak_mb_over_data"),
        m.mean("efficiency/dominant/peak_mb_over_data"),
    )
    out.append(
        Claim(
            "efficiency",
            "GADAM fits faster and with less memory than GCN-autoencoder detectors",
            "efficiency comparison: lower runtime and GPU memory than GNN-based baselines",
            f"{preset.efficiency_graph}: GADAM {t_g:.1f} s, {r_g:.0f} MB vs GCN-AE {t_d:.1f} s, {r_d:.0f} MB",
            "fit time and peak memory (over the data) both lower than the GCN autoencoder's",
            bool(t_g < t_d and r_g < r_d),
        )
    )
    return out


def figure(ctx, m: Metrics, preset: Preset):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        1, len(preset.graphs), figsize=(5 * len(preset.graphs), 3.5), squeeze=False
    )
    for ax, s in zip(axes[0], preset.graphs):
        means = [m.mean(f"{s.name}/{k}/auc") for k in METHODS]
        stds = [m.std(f"{s.name}/{k}/auc") for k in METHODS]
        ax.bar(range(len(METHODS)), means, yerr=stds, color=["C3", "C1"] + ["C0"] * 4)
        ax.set_xticks(range(len(METHODS)), METHODS, rotation=30, ha="right")
        ax.set_ylim(0.4, 1.0)
        ax.set_title(f"{s.name}: ROC-AUC (mean +/- std over seeds)")
    ctx.save_figure(fig, "auc.png")


def run_paper(ctx, preset: Preset, quirks: bool) -> Report:
    names = ctx.args.datasets or preset.datasets
    m = Metrics()
    loaded = {}
    for name in names:  # fail fast: every dataset must be there before anything trains
        loaded[name] = load_dataset(name, ctx.data_dir, download=ctx.download, seed=ctx.seeds[0])
    for name, g in loaded.items():
        for seed in progress(ctx.seeds, desc=name):
            seed_everything(seed)
            # ogbn-arxiv: the official mini-batch variant (run_mini.py settings)
            pre = replace(preset, gadam=GADAMConfig.minibatch()) if name in OGB else preset
            for method in ["gadam", "degree", "feat_inconsistency", "cola"]:
                scores, secs = run_method(method, g, pre, seed, ctx.torch_device, quirks)
                _seed_metrics(m, name, seed, scores, g)
            ctx.save_partial(m)
    claims_ = []
    for name in loaded:
        auc = {
            k: m.mean(f"{name}/{k}/auc")
            for k in ["gadam", "gadam_local", "degree", "feat_inconsistency", "cola"]
        }
        best = max(["degree", "feat_inconsistency", "cola"], key=auc.get)
        claims_.append(
            Claim(
                f"beats-baselines-{name}",
                "GADAM's AUC is the best among the detectors",
                PAPER_CLAIM,
                f"GADAM {auc['gadam']:.4f} vs {best} {auc[best]:.4f}",
                "mean AUC(GADAM) > best baseline",
                bool(auc["gadam"] > auc[best]),
            )
        )
    if not claims_:
        raise UsageError("no datasets given")
    return Report(m, claims_)


def summary_table(m: Metrics, graphs: list[str]) -> str:
    """Markdown table of AUC per method and graph (used for the README)."""
    rows = ["| method | " + " | ".join(graphs) + " |", "|---|" + "---|" * len(graphs)]
    for k in METHODS:
        cells = []
        for g in graphs:
            name = f"{g}/{k}/auc"
            cells.append(f"{m.mean(name):.4f} +/- {m.std(name):.4f}" if name in m else "-")
        rows.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
