"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-gadam reproduce --help``).

GADAM (full and local-stage only) against the baselines on graphs with injected anomalies:
generated citation-like graphs by default, the paper's datasets with ``--preset paper``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import multiprocessing
import re
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import roc_auc_score

from iclr24_common import (
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    RunContext,
    preset_option,
    seed_everything,
    set_threads,
)

from .baselines import (
    DOMINANT,
    GAE,
    AnomalyDAE,
    AnomalyDAEConfig,
    DominantConfig,
    GAEConfig,
    degree_score,
    feature_inconsistency_score,
)
from .claims import BASELINES, CONTROL, DENSE, make_checks, make_claims
from .cola import CoLA, ColaConfig, RWRSampler
from .data import (
    DATASETS,
    OGB,
    CitationGraphSpec,
    check_datasets,
    citation_graph,
    data_checksums,
    download_pinned,
    inject_anomalies,
    load_dataset,
    normalize_features,
    verify_pinned,
)
from .figures import plot_auc
from .gadam import GADAM, GADAMConfig
from .metrics import auc_items, detection_metrics, flags_changed

PAPER = Paper(
    title="Boosting Graph Anomaly Detection with Adaptive Message Passing",
    authors="Chen, Zhu, Yuan & Huang",
    openreview="CanomFZssu",
    code="https://github.com/PasaLab/GADAM",
)
DOWNLOAD = (
    "Cora and CiteSeer (Planetoid raw files, kimiyoung/planetoid@af6abf4) and BlogCatalog.mat "
    "(PasaLab/GADAM@8c9616d), Books and Reddit (PyGOD's books.pt.zip, reddit.pt.zip, "
    "pygod-team/data@77976df), each checked against a pinned SHA-256; PubMed through "
    "torch_geometric's Planetoid and ogbn-arxiv through OGB's zip (not pinned)"
)


@dataclass(frozen=True)
class GraphSetting:
    """One generated citation-like graph and its injected anomalies."""

    name: str
    num_nodes: int = 2708
    """Nodes (Cora: 2708)."""
    vocab: int = 1433
    """Bag-of-words vocabulary (Cora: 1433)."""
    num_cliques: int = 5
    """Injected cliques; as many contextual anomalies as clique members (Cora: 5 x 15 + 75)."""
    clique_size: int = 15
    """Clique size (GADAM inject_ano.py, the DOMINANT protocol: 15)."""
    dense_all_seeds: bool = True
    """False: the O(N^2) dense detectors do not run on every seed of this graph: DOMINANT
    runs once (first seed, in the efficiency measurement), AnomalyDAE not at all."""

    @property
    def spec(self) -> CitationGraphSpec:
        return CitationGraphSpec(num_nodes=self.num_nodes, vocab=self.vocab)


CORA_LIKE = GraphSetting("cora-like")  # 150 anomalies as on Cora
# about twice Cora, 6% anomalies (Cora 5.5%): 10 cliques of 15 + 150 contextual
LARGE = GraphSetting("large", num_nodes=5_000, vocab=500, num_cliques=10, dense_all_seeds=False)


@dataclass(frozen=True)
class Preset:
    """One preset's scale; each default cites where it comes from."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    """Random seeds (graph, injection, training)."""
    graphs: tuple[GraphSetting, ...] = (CORA_LIKE, LARGE)
    """Generated graphs (the default preset)."""
    datasets: tuple[str, ...] = ()
    """The paper's datasets, read from ``<data-dir>/gadam`` (the paper preset)."""
    gadam: GADAMConfig = GADAMConfig()
    """GADAM's hyper-parameters (official run.py defaults)."""
    gae: GAEConfig = GAEConfig()
    """GAE (PyGOD defaults)."""
    dominant: DominantConfig = DominantConfig()
    """DOMINANT (PyGOD defaults)."""
    anomalydae: AnomalyDAEConfig = AnomalyDAEConfig()
    """AnomalyDAE (PyGOD defaults, the official 100 epochs)."""
    cola: ColaConfig = ColaConfig()
    """CoLA (official run.py defaults for Cora; the paper preset takes each dataset's)."""
    dense_max_nodes: int = 20_000
    """Paper preset: graphs above this size skip the dense O(N^2) detectors (ogbn-arxiv)."""
    max_cliques: int | None = None
    """Paper preset: at most this many injected cliques per graph (None: the protocol's
    count, Cora/CiteSeer 5, PubMed 20, ogbn-arxiv 200; a size cap for miniature graphs)."""
    efficiency_graph: str | None = "large"
    """The graph on which fit time and peak memory are measured (None: not measured)."""
    efficiency_repeats: int = 3
    """Fits of each detector (GADAM, DOMINANT) in the efficiency measurement, each in a fresh
    process at one thread, the two detectors alternating (ours: the repeats' spread is the
    timing claim's SE; DOMINANT's 5,000-node fit takes about a minute at one thread)."""
    margin: float = 0.001
    """AUC margin the beats-baselines claim asks of GADAM over the strongest baseline: the
    paper states a ranking (the best AUC on every dataset); 0.001 is the third decimal at
    which AUC is reported, the smallest lead a table shows (0.05 before issue 51: a margin of
    ours, stricter than the paper's statement)."""
    workers: int | None = None
    """Processes for the units on the local executor (None: one per thread; ``--workers``
    overrides)."""

    def __post_init__(self):
        unknown = sorted(set(self.datasets) - set(DATASETS))
        if unknown:
            raise ValueError(f"unknown datasets {unknown}: choose from {', '.join(DATASETS)}")
        object.__setattr__(self, "datasets", tuple(self.datasets))
        for name in ("gadam", "gae", "dominant", "anomalydae", "cola"):
            cfg = getattr(self, name)
            budget = [
                getattr(cfg, f)
                for f in ("epochs", "local_epochs", "global_epochs", "test_rounds", "batch_size")
                if hasattr(cfg, f)
            ]
            if any(b is not None and b < 1 for b in budget):
                raise ValueError(f"{name}: epochs, rounds and batch sizes must be >= 1")
        if self.margin < 0:
            raise ValueError("margin must be >= 0")
        if self.max_cliques is not None and self.max_cliques < 1:
            raise ValueError("max_cliques must be >= 1 (or None)")
        if self.efficiency_repeats < 1:
            raise ValueError("efficiency_repeats must be >= 1")
        names = [g.name for g in self.graphs]
        if self.efficiency_graph is not None and self.efficiency_graph not in names:
            raise ValueError(f"efficiency_graph must be one of {names} or None")


PRESETS = {
    "smoke": Preset(
        seeds=(0,),
        graphs=(
            GraphSetting("cora-like", num_nodes=500, vocab=200, num_cliques=2, clique_size=10),
            GraphSetting(
                "large",
                num_nodes=1000,
                vocab=150,
                num_cliques=3,
                clique_size=10,
                dense_all_seeds=False,
            ),
        ),  # fmt: skip
        gadam=GADAMConfig(local_epochs=30, global_epochs=15),
        gae=GAEConfig(epochs=10),
        dominant=DominantConfig(epochs=10),
        anomalydae=AnomalyDAEConfig(epochs=10),
        cola=ColaConfig(epochs=5, test_rounds=8),
        efficiency_repeats=2,
    ),
    # 3 seeds: the paired SE of the claims; 5 seeds (the paper preset's) take ~15 min on 2 cores,
    # mostly the baselines' dense 1433-wide reconstructions and CoLA's 256 scoring rounds
    "default": Preset(seeds=(0, 1, 2)),
    "paper": Preset(graphs=(), datasets=DATASETS, efficiency_graph=None),
    # the paper's experiment on the paper's files that a CPU runs in about an hour (issue 51):
    # Cora, CiteSeer (kimiyoung/planetoid@af6abf4) and the raw BlogCatalog.mat
    # (PasaLab/GADAM@8c9616d), anomalies injected per seed by the protocol, and Books with its
    # organic anomalies (PyGOD's books.pt.zip, pygod-team/data@77976df; the same anomalies on
    # every seed), GADAM at the official run.py settings, seeds from the official 717
    # (run.py --seed) on
    "paper-cpu": Preset(
        seeds=(717, 718, 719),
        graphs=(),
        datasets=("cora", "citeseer", "blogcatalog", "books"),
        efficiency_graph=None,
    ),  # fmt: skip
}


def _on_off(text: str) -> bool:
    if text not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"choose on or off, got {text!r}")
    return text == "on"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--faithful-quirks", field="gadam.official_quirks", type=_on_off,
                  metavar="on|off", help="on: the official code's score/centre checkpoints; "
                  "off: consistent best-loss checkpoints")  # fmt: skip
    preset_option(parser, "--datasets", field="datasets", nargs="+", metavar="NAME",
                  help=f"paper preset: datasets under <data-dir>/gadam ({' '.join(DATASETS)})")  # fmt: skip


# ------------------------------------------------------------------------------ measurements
def make_graph(setting: GraphSetting, seed: int):
    """The generated graph of one seed: features normalised, then anomalies injected."""
    g = normalize_features(citation_graph(setting.spec, seed))
    return inject_anomalies(
        g, clique_size=setting.clique_size, num_cliques=setting.num_cliques, seed=seed
    )


def run_method(name: str, g, preset: Preset, seed: int, device) -> dict:
    """Scores of one method on one graph (higher = more anomalous), by method name; a
    trained detector's budget (epochs run) under ``<name>/epochs``."""
    if name == "gadam":
        det = GADAM(preset.gadam, contamination=0.05, device=device, seed=seed).fit(g)
        changed = flags_changed(det.decision_score_, det.local_score_, det.contamination)
        return {"gadam": det.decision_score_, "gadam_local": det.local_score_,
                "gadam/epochs": len(det.local_losses_) + len(det.global_losses_),
                "gadam/decomposition_error": float(abs(
                    det.decision_score_ - det.local_score_ - det.global_score_).max()),
                "gadam/flags_changed": changed}  # fmt: skip
    if name == CONTROL:  # the no-op control: the same local stage, random pseudo-labels
        det = GADAM(replace(preset.gadam, pseudo_labels="random"), contamination=0.05,
                    device=device, seed=seed).fit(g)  # fmt: skip
        return {CONTROL: det.decision_score_,
                f"{CONTROL}/local_auc": float(roc_auc_score(g.label.numpy(), det.local_score_))}  # fmt: skip
    if name == "degree":
        return {name: degree_score(g)}
    if name == "feat_inconsistency":
        return {name: feature_inconsistency_score(g)}
    detector = {"gae": GAE, "dominant": DOMINANT, "anomalydae": AnomalyDAE, "cola": CoLA}[name]
    det = detector(getattr(preset, name), device=device, seed=seed).fit(g)
    out = {name: det.decision_score_, f"{name}/epochs": len(det.losses_),
           f"{name}/configured_epochs": det.config.epochs}  # fmt: skip
    if name == "cola":
        out["cola/steps"] = det.steps_
    return out


def score_metrics(prefix: str, scores: dict, g, items: bool = False) -> dict[str, float]:
    """Detection metrics of every score array; scalars (budgets, checks) pass through.
    ``items``: also each AUC's per-anomaly items (``auc_items``, an array), for a graph whose
    labels every seed shares."""
    out = {}
    label, atype = g.label.numpy(), getattr(g, "anomaly_type", None)
    for key, s in scores.items():
        if np.ndim(s) == 0:
            out[f"{prefix}/{key}"] = float(s)
            continue
        for k, v in detection_metrics(label, s, atype).items():
            out[f"{prefix}/{key}/{k}"] = v
        if items:
            out[f"{prefix}/{key}/auc_items"] = auc_items(label, s)
    return out


def add_unit(metrics: Metrics, items: dict, seed: int, values: dict) -> None:
    """A unit's scalars into ``metrics``, its per-item arrays into ``items[name][seed]``."""
    for k, v in values.items():
        if np.ndim(v):
            items.setdefault(k, {})[seed] = np.asarray(v, dtype=float)
        else:
            metrics.add(k, seed, v)


def sampler_check(prefix: str, g, cfg: ColaConfig) -> dict[str, float]:
    """CoLA's subgraphs of this graph: their size and whether the target is last (a check)."""
    sub = RWRSampler(g.edge_index, g.num_nodes, cfg.subgraph_size)(torch.Generator().manual_seed(0))
    return {f"{prefix}/cola/subgraph_size": float(sub.shape[1]),
            f"{prefix}/cola/target_last": float((sub[:, -1] == torch.arange(len(sub))).all())}  # fmt: skip


def method_unit(name: str, g, preset: Preset, seed: int, device, method: str,
                items: bool = False) -> dict:  # fmt: skip
    """One method on one graph and seed (a unit): detection metrics and fit seconds
    (``items``: and the AUCs' per-anomaly items, for a graph every seed shares)."""
    seed_everything(seed)
    t0 = time.perf_counter()
    scores = run_method(method, g, preset, seed, device)
    values = {f"{name}/{method}/fit_seconds": time.perf_counter() - t0}
    values.update(score_metrics(name, scores, g, items))
    if method == "cola":
        values.update(sampler_check(name, g, preset.cola))
    return values


def generated_unit(setting: GraphSetting, preset: Preset, seed: int, device: str,
                   method: str) -> dict:  # fmt: skip
    """A unit on a generated graph: the graph is built here from its seed (it pickles as a
    setting, not as tensors, and every unit of a seed builds the same graph)."""
    return method_unit(setting.name, make_graph(setting, seed), preset, seed, device, method)


def shared_labels(g) -> bool:
    """Whether the graph's anomaly labels came with its file (every seed scores the same
    anomalies), not injected per seed (injection sets ``anomaly_type``)."""
    return getattr(g, "anomaly_type", None) is None


def paper_unit(name: str, root: str, preset: Preset, seed: int, device: str,
               method: str) -> dict:  # fmt: skip
    """A unit on a paper dataset, read from ``root`` (anomalies injected with ``seed`` where
    the file has none)."""
    g = load_dataset(name, root, seed=seed, max_cliques=preset.max_cliques)
    pre, _ = for_dataset(preset, name, g.num_nodes)
    return method_unit(name, g, pre, seed, device, method, items=shared_labels(g))


# the order units are handed to the executor: the slowest first (CoLA's 256 scoring rounds,
# the dense autoencoders), so that two workers end together
COST_ORDER = ("cola", "anomalydae", "dominant", "gae", "gadam", CONTROL, "feat_inconsistency",
              "degree")  # fmt: skip


def log_aucs(log, name: str, metrics: Metrics, seeds) -> None:
    for seed in seeds:
        have = [m for m in ("gadam", CONTROL, *BASELINES) if f"{name}/{m}/auc" in metrics
                and seed in metrics.by_seed(f"{name}/{m}/auc")]  # fmt: skip
        log.info("%s seed %d: %s", name, seed, ", ".join(
            f"{m} {metrics.by_seed(f'{name}/{m}/auc')[seed]:.4f}" for m in have))  # fmt: skip


def _status_mb(key: str) -> float:
    return int(re.search(rf"{key}:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024


def measure_fit(method: str, g, preset: Preset, seed: int) -> dict:
    """Fit seconds and peak resident memory of one fit over the resident size before it.
    Linux resets the peak (VmHWM) on ``clear_refs`` 5, so the peak after the fit is the fit's
    own; elsewhere the process's peak since it started (``getrusage`` ru_maxrss: exact in a
    fresh process whose fit is its largest allocation)."""
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
        before, source = _status_mb("VmRSS"), "VmHWM after clear_refs"
    except OSError:
        before, source = _maxrss_mb(), "ru_maxrss"
    t0 = time.perf_counter()
    scores = run_method(method, g, preset, seed, "cpu")[method]
    secs = time.perf_counter() - t0
    peak = _status_mb("VmHWM") if source.startswith("VmHWM") else _maxrss_mb()
    return {"seconds": secs, "peak_mb": peak - before, "scores": scores, "source": source}


def _maxrss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def _fit_in_child(method: str, setting: GraphSetting, preset: Preset, seed: int) -> dict:
    """One fit in a fresh process at one thread: the graph is built there, then the fit's
    time and peak memory over the graph are measured (:func:`measure_fit`)."""
    set_threads(1)
    g = make_graph(setting, seed)
    seed_everything(seed)
    return measure_fit(method, g, preset, seed)


def _fresh_processes():
    """Processes forked from a server that only imported this module (so each starts with no
    memory of earlier work, and without paying the imports again); spawn where there is none."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    mp = multiprocessing.get_context("forkserver")
    mp.set_forkserver_preload([__name__ if __name__ != "__main__" else "iclr24_gadam.experiment"])
    return mp


def start_fresh_processes() -> None:
    """Start the fork server now: it imports in the background while the graphs train."""
    mp = _fresh_processes()
    if mp.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def fit_in_fresh_process(method: str, setting: GraphSetting, preset: Preset, seed: int) -> dict:
    with ProcessPoolExecutor(1, mp_context=_fresh_processes()) as pool:
        return pool.submit(_fit_in_child, method, setting, preset, seed).result()


EFFICIENCY = ("gadam", "dominant")


def efficiency_unit(setting: GraphSetting, preset: Preset, seed: int, log) -> dict[str, list]:
    """GADAM vs the dense autoencoder on one graph, ``efficiency_repeats`` fits of each, every
    fit in a fresh process at one thread, one at a time, the detector that goes first
    alternating between repeats: per repeat, fit seconds and peak memory over the graph. The
    dense autoencoder's scores (first repeat) for its AUC where it runs only here."""
    out: dict[str, list] = {f"{m}/{k}": [] for m in EFFICIENCY for k in ("seconds", "peak_mb")}
    for k in range(preset.efficiency_repeats):
        for method in EFFICIENCY if k % 2 == 0 else EFFICIENCY[::-1]:
            r = fit_in_fresh_process(method, setting, preset, seed)
            out[f"{method}/seconds"].append(r["seconds"])
            out[f"{method}/peak_mb"].append(r["peak_mb"])
            out.setdefault(f"{method}/scores", r["scores"])
            out["memory_source"] = r["source"]
        log.info("efficiency repeat %d: %s", k, ", ".join(
            f"{m} {out[f'{m}/seconds'][-1]:.2f} s, {out[f'{m}/peak_mb'][-1]:.0f} MB"
            for m in EFFICIENCY))  # fmt: skip
    return out


# ------------------------------------------------------------------------------ run
def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    if preset.datasets:
        return run_paper(ctx, preset)
    metrics, memory_source = Metrics(), None
    if preset.efficiency_graph:
        start_fresh_processes()
    jobs = []
    for setting in preset.graphs:
        ctx.log.info("graph %s: %d nodes, %d x %d clique + as many contextual anomalies",
                     setting.name, setting.num_nodes, setting.num_cliques, setting.clique_size)  # fmt: skip
        methods = ["gadam", CONTROL, *BASELINES]
        if not setting.dense_all_seeds:  # DOMINANT once, in the efficiency measurement below
            methods = [m for m in methods if m not in DENSE]
        jobs += [(setting, seed, m) for seed in ctx.seeds for m in methods]
    # every (graph, seed, method) fit is an independent unit: each builds its graph from the
    # seed and seeds itself, so the pool (or Ray) gives the serial run's numbers
    key = lambda j: f"{j[0].name}/seed{j[1]}/{j[2]}"  # noqa: E731
    units = ctx.cached_parallel({
        key(j): functools.partial(generated_unit, j[0], preset, j[1], ctx.device, j[2])
        for j in sorted(jobs, key=lambda j: (COST_ORDER.index(j[2]), -j[0].num_nodes))
    }, desc="fits")  # fmt: skip
    for j in jobs:  # the metrics in the order graph, seed, method
        metrics.update(j[1], units[key(j)])
    for setting in preset.graphs:
        log_aucs(ctx.log, setting.name, metrics, ctx.seeds)
    ctx.save_partial(metrics)
    if preset.efficiency_graph:
        setting = next(g for g in preset.graphs if g.name == preset.efficiency_graph)
        seed = ctx.seeds[0]
        ctx.log.info("efficiency on %s: fit time and peak memory, %d repeats, each fit in a "
                     "fresh process at 1 thread", setting.name, preset.efficiency_repeats)  # fmt: skip
        # a timing that is a claim: serial, in the driver, after the pool has finished (its
        # fits run one at a time, each in a fresh process at one thread, nothing beside them)
        eff = ctx.cached(f"efficiency/seed{seed}/fresh-processes",
                         lambda: efficiency_unit(setting, preset, seed, ctx.log))  # fmt: skip
        for m in EFFICIENCY:  # repeat k under key k (every repeat fits seed ``seed``'s graph)
            for k, (t, mb) in enumerate(zip(eff[f"{m}/seconds"], eff[f"{m}/peak_mb"])):
                metrics.add(f"efficiency/{m}/fit_seconds", k, t)
                metrics.add(f"efficiency/{m}/peak_mb_over_graph", k, mb)
        if not setting.dense_all_seeds:
            g = make_graph(setting, seed)
            metrics.update(
                seed, score_metrics(setting.name, {"dominant": eff["dominant/scores"]}, g)
            )
        memory_source = eff["memory_source"]
    graphs = [g.name for g in preset.graphs]
    ctx.save_figure(plot_auc(metrics, graphs), "auc.png")
    return Report(
        metrics,
        make_claims(metrics, preset, graphs),
        make_checks(metrics, preset, graphs),
        extra={
            "efficiency_graph": preset.efficiency_graph,
            "efficiency_memory": memory_source if preset.efficiency_graph else None,
        },
    )


def for_dataset(preset: Preset, name: str, n: int) -> tuple[Preset, list[str]]:
    """The preset and methods for one paper dataset: ogbn-arxiv gets the official
    mini-batch GADAM (run_mini.py), CoLA its run.py settings for that dataset (fields the
    user changed win), and graphs above dense_max_nodes skip the dense detectors."""
    changed = {f.name: getattr(preset.cola, f.name) for f in fields(ColaConfig)
               if getattr(preset.cola, f.name) != getattr(ColaConfig(), f.name)}  # fmt: skip
    preset = replace(preset, cola=ColaConfig.for_dataset(name, **changed))
    if name in OGB:
        preset = replace(preset, gadam=GADAMConfig.minibatch())
    methods = ["gadam", *(b for b in BASELINES if b not in DENSE or n <= preset.dense_max_nodes)]
    return preset, methods


def run_paper(ctx: RunContext, preset: Preset) -> Report:
    root = ctx.data_dir / "gadam"
    names = list(preset.datasets)
    if ctx.download:  # the pinned files first, each checked before it is moved into place
        download_pinned(names, root, ctx.log)
    check_datasets(names, root, ctx.download)  # every file, before anything trains
    verify_pinned(names, root)  # a different copy of a pinned file stops here (exit 2)
    sizes = {}
    for name in names:  # once in the driver: PyG / OGB fetch what --download lets them, the
        # Planetoid files are processed once (the units only read), and each graph's size
        # picks its methods
        g = load_dataset(name, root, download=ctx.download, seed=ctx.seeds[0],
                         max_cliques=preset.max_cliques)  # fmt: skip
        sizes[name] = g.num_nodes
        ctx.log.info("%s: %d nodes, %d edges, %d features, %d anomalies (%s)", name,
                     g.num_nodes, g.edge_index.shape[1], g.x.shape[1], int(g.label.sum()),
                     "shipped with the file" if shared_labels(g) else "injected per seed")  # fmt: skip
    checksums = data_checksums(names, root)
    jobs = [(n, seed, m) for n in names for seed in ctx.seeds
            for m in [*for_dataset(preset, n, sizes[n])[1], CONTROL]]  # fmt: skip
    key = lambda j: f"{j[0]}/seed{j[1]}/{j[2]}"  # noqa: E731
    units = ctx.cached_parallel({
        key(j): functools.partial(paper_unit, j[0], str(root), preset, j[1], ctx.device, j[2])
        for j in sorted(jobs, key=lambda j: (COST_ORDER.index(j[2]), -sizes[j[0]]))
    }, desc="fits")  # fmt: skip
    metrics, items = Metrics(), {}
    for j in jobs:  # the metrics in the order dataset, seed, method
        add_unit(metrics, items, j[1], units[key(j)])
    for n in names:
        log_aucs(ctx.log, n, metrics, ctx.seeds)
    ctx.save_figure(plot_auc(metrics, names), "auc.png")
    return Report(metrics, make_claims(metrics, preset, names, items),
                  make_checks(metrics, preset, names),
                  extra={"data_files": checksums})  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())
