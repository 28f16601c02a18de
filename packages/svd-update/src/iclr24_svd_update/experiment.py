"""Reproduction: update-time and precision of the proposed method against its baselines on
one stream of sparse updates (Section 5 of arXiv 2401.09703).

Protocol (official experiments repo, ``run_tests.py`` / ``experiments/*.json``): start from the
rank-k ``svds`` of the leading rows, append the rest in equal batches, time only the updates;
k = 64; GKL/RPI depth l = min(10, s), t = 3 power iterations. All methods see the same stream,
the same random draws and the same BLAS threads (``--threads``).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_info

from iclr24_common import (
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    RunContext,
    UsageError,
    preset_option,
    progress,
)

from .baselines import VecharynskiSVD, YamazakiSVD, ZhaSimonSVD
from .claims import PAIRS, make_checks, make_claims, make_premises
from .data import DATASETS, GRAPHS, RECSYS, load_dataset, make_sbm, make_user_item
from .figures import plot_curves
from .metrics import (
    hit_rate_mrr,
    hold_out,
    max_relative_sv_gap,
    orthogonality_error,
    relative_sv_error,
    scaled_residual,
)
from .svd_update import EvolvingSVD, UpdateConfig, initial_svd

PAPER = Paper(
    title="Fast Updating Truncated SVD for Representation Learning with Sparse Matrices",
    authors="Deng, Yang, Li, Chen, Jiang & Pu",
    arxiv="2401.09703",
    openreview="CX2RgsS29V",
    code="https://github.com/HaoranDeng/IncSVD",
)
USES_TORCH = False

BASELINES = {"zha-simon": ZhaSimonSVD, "vecharynski": VecharynskiSVD, "yamazaki": YamazakiSVD}


@dataclass(frozen=True)
class Preset:
    """One reproduction workload."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Random seeds (matrix, hold-out and RPI draws)."""
    dataset: str | None = None
    """A paper dataset read from ``<data-dir>/svd-update/<name>/`` (None: generated matrices)."""
    n_users: int = 40_000
    """Rows of the generated user x item matrix (issue: 60k x 20k; scaled to 40k x 12k so
    that the default preset takes ~5 min on 2 shared cores)."""
    n_items: int = 12_000
    """Columns of the generated matrix."""
    min_activity: int = 14
    """Minimum interactions per user (Pareto alpha=2, so ~2x this on average before dedup)."""
    k: int = 64
    """Rank of the truncated SVD (paper Section 5; official experiments json: k_dims [64])."""
    batch_sizes: tuple[int, ...] = (10, 100)
    """Rows per update s (issue: s = 10 and 100)."""
    n_batches: int = 100
    """Updates per stream (official n_batches includes 100)."""
    depth: int = 10
    """GKL / RPI depth l (official code: l = min(10, s))."""
    power_iters: int = 3
    """RPI power iterations t (official code: num_iter = 3)."""
    eval_users: int = 3000
    """Users with one held-out interaction for HR@10 / MRR (0: no ranking metric)."""
    sbm_nodes: int = 12_000
    """Nodes of the generated SBM graph for the row + column mode (0: skip)."""
    sbm_batch: int = 10
    """Nodes added per update in the network mode."""
    sbm_batches: int = 100
    """Updates in the network mode."""

    def __post_init__(self):
        if self.dataset is not None and self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {', '.join(DATASETS)}")
        for name in ("k", "n_batches", "sbm_batch", "sbm_batches", "depth", "power_iters"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if not self.batch_sizes or min(self.batch_sizes) < 1:
            raise ValueError("batch_sizes must be positive")


PRESETS = {
    "smoke": Preset(
        seeds=(0,),
        n_users=4000,
        n_items=1500,
        k=16,
        n_batches=8,
        eval_users=300,
        sbm_nodes=1500,
        sbm_batches=8,
    ),  # fmt: skip
    "default": Preset(),
    # the real matrix replaces the generated ones; the first LSI corpus unless --dataset says
    "paper": Preset(seeds=(0,), dataset=DATASETS[0], sbm_nodes=0),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    preset_option(p, "--dataset", field="dataset", choices=DATASETS,
                  help="one of the paper's datasets, read from --data-dir")  # fmt: skip
    preset_option(p, "--n-batches", field="n_batches", type=int, help="updates per stream")


def paper_protocol(preset: Preset, A: sp.csr_matrix, dataset: str) -> Preset:
    """The official protocol on a real matrix (experiments/*.json: m_percent = 0.5): the
    first half of the rows (nodes) is the initial matrix, the rest arrives in n_batches
    equal batches."""
    half = A.shape[0] - int(np.ceil(A.shape[0] * 0.5))
    if dataset in GRAPHS:
        return replace(preset, sbm_batch=max(1, half // preset.sbm_batches), eval_users=0)
    return replace(
        preset,
        batch_sizes=(max(1, half // preset.n_batches),),
        eval_users=preset.eval_users if dataset in RECSYS else 0,
    )


def _make(method: str, init, seed: int, preset: Preset):
    upd = UpdateConfig(
        method={"zha-simon": "qr", "vecharynski": "gkl", "yamazaki": "rpi"}.get(method, method),
        depth=preset.depth,
        power_iters=preset.power_iters,
    )
    if method in BASELINES:
        return BASELINES[method](init=init, config=upd, seed=seed)
    return EvolvingSVD(init=init, config=upd, seed=seed)


def _put(values: dict[str, float], name: str, value: float) -> None:
    values[name] = float(value)


def _stream(models: dict, batches, desc: str) -> dict[str, np.ndarray]:
    """Feed every batch to every model, timing each update alone."""
    times = {name: np.zeros(len(batches)) for name in models}
    for b, update in enumerate(progress(batches, desc=desc)):
        for name, model in models.items():
            t0 = time.perf_counter()
            update(model)
            times[name][b] = time.perf_counter() - t0
    return times


def rows_workload(
    A: sp.csr_matrix,
    preset: Preset,
    seed: int,
    values: dict[str, float],
    log,
    curves: dict | None = None,
) -> None:
    """Row appends: U grows, V is rotated. All six methods plus a fresh svds."""
    rng = np.random.default_rng(seed)
    if preset.eval_users:
        train, users, items = hold_out(A, preset.eval_users, rng)
    else:
        train, users, items = A.tocsr(), np.zeros(0, int), np.zeros(0, int)
    m = train.shape[0]
    m0 = m - preset.n_batches * max(preset.batch_sizes)
    if m0 <= preset.k:
        raise UsageError(
            f"matrix has {m} rows: too few for {preset.n_batches} batches of {max(preset.batch_sizes)}"
        )
    t0 = time.perf_counter()
    init = initial_svd(train[:m0], preset.k, seed)
    log.info(
        "seed %d: initial svds of %s (k=%d) in %.1f s",
        seed,
        (m0, A.shape[1]),
        preset.k,
        time.perf_counter() - t0,
    )
    methods = [x for pair in PAIRS for x in (f"ours-{pair[0]}", pair[1])]
    for s in preset.batch_sizes:
        m1 = m0 + preset.n_batches * s
        models = {name: _make(name.removeprefix("ours-"), init, seed, preset) for name in methods}
        batches = [
            (lambda mdl, E=train[m0 + b * s : m0 + (b + 1) * s]: mdl.add_rows(E))
            for b in range(preset.n_batches)
        ]
        times = _stream(models, batches, f"seed {seed} s={s}")
        A1 = train[:m1]
        t0 = time.perf_counter()
        U_ref, S_ref, V_ref = initial_svd(A1, preset.k, seed)
        t_svds = time.perf_counter() - t0
        p = f"rows/s{s}/"
        _put(values, p + "recompute/svds_seconds", t_svds)
        _put(values, p + "recompute/projected_seconds", t_svds * preset.n_batches)
        _put(values, p + "recompute/residual", scaled_residual(A1, U_ref, S_ref, V_ref))
        ev = users < m1
        if ev.any():
            hr, mrr = hit_rate_mrr(U_ref * S_ref, V_ref, A1, users[ev], items[ev])
            _put(values, p + "recompute/hr10", hr)
            _put(values, p + "recompute/mrr", mrr)
        for name, model in models.items():
            U, S, V = model.U, model.S, model.V
            q = p + name + "/"
            _put(values, q + "update_seconds", times[name].sum())
            if hasattr(model, "folds"):
                _put(values, q + "folds", model.folds)
            _put(values, q + "sv_rel_error_vs_svds", relative_sv_error(S, S_ref))
            _put(values, q + "residual", scaled_residual(A1, U, S, V))
            _put(values, q + "orthogonality", max(orthogonality_error(U), orthogonality_error(V)))
            if ev.any():
                hr, mrr = hit_rate_mrr(U * S, V, A1, users[ev], items[ev])
                _put(values, q + "hr10", hr)
                _put(values, q + "mrr", mrr)
            if curves is not None:
                curves.setdefault(f"rows, s = {s}", {})[name] = np.cumsum(times[name]).tolist()
        for ours, base in PAIRS:
            _put(
                values,
                f"{p}ours-{ours}/sv_gap_vs_{base}",
                max_relative_sv_gap(models[f"ours-{ours}"].S, models[base].S),
            )
            _put(
                values,
                f"{p}ours-{ours}/time_ratio_vs_{base}",
                times[f"ours-{ours}"].sum() / times[base].sum(),
            )
        log.info(
            "seed %d s=%d: %s",
            seed,
            s,
            ", ".join(f"{n} {times[n].sum():.2f}s" for n in methods) + f", svds {t_svds:.1f}s",
        )


def network_workload(
    G: sp.csr_matrix, preset: Preset, seed: int, values: dict[str, float], log
) -> None:
    """New nodes of a graph: rows A[new, old] then columns A[:, new] (official network mode)."""
    G = G.tocsr()
    N, s = G.shape[0], preset.sbm_batch
    n0 = N - preset.sbm_batches * s
    if n0 <= preset.k:
        raise UsageError(f"graph has {N} nodes: too few for {preset.sbm_batches} batches of {s}")
    init = initial_svd(G[:n0, :n0], preset.k, seed)
    models = {
        name: _make(name.removeprefix("ours-"), init, seed, preset)
        for name in ("ours-qr", "zha-simon")
    }
    Gc = G.tocsc()

    def node_batch(b):
        lo, hi = n0 + b * s, n0 + (b + 1) * s
        rows, cols = G[lo:hi, :lo], Gc[:hi, lo:hi]

        def update(model):
            model.add_rows(rows)
            model.add_columns(cols)

        return update

    times = _stream(
        models, [node_batch(b) for b in range(preset.sbm_batches)], f"seed {seed} network"
    )
    N1 = n0 + preset.sbm_batches * s
    A1 = G[:N1, :N1]
    _, S_ref, _ = initial_svd(A1, preset.k, seed)
    for name, model in models.items():
        _put(values, f"network/{name}/update_seconds", times[name].sum())
        _put(values, f"network/{name}/sv_rel_error_vs_svds", relative_sv_error(model.S, S_ref))
        _put(values, f"network/{name}/residual", scaled_residual(A1, model.U, model.S, model.V))
    _put(
        values,
        "network/ours-qr/time_ratio_vs_zha-simon",
        times["ours-qr"].sum() / times["zha-simon"].sum(),
    )
    _put(
        values,
        "network/ours-qr/sv_gap_vs_zha-simon",
        max_relative_sv_gap(models["ours-qr"].S, models["zha-simon"].S),
    )
    log.info(
        "seed %d network: ours-qr %.2fs, zha-simon %.2fs",
        seed,
        times["ours-qr"].sum(),
        times["zha-simon"].sum(),
    )


# ------------------------------------------------------------------------------ run
def rows_unit(preset: Preset, seed: int, real, log) -> tuple[dict[str, float], dict]:
    """The row streams of one seed (generated or real matrix): metrics and cumulative times."""
    # every draw comes from explicit np.random.Generator(seed): no global state
    A = real if real is not None else make_user_item(
        preset.n_users, preset.n_items, min_activity=preset.min_activity, seed=seed)  # fmt: skip
    log.info("seed %d: matrix %s with %d non-zeros", seed, A.shape, A.nnz)
    values: dict[str, float] = {}
    curves: dict = {}
    rows_workload(A, preset, seed, values, log, curves)
    return values, curves


def never_updated_unit(preset: Preset, seed: int, real, log) -> dict[str, float]:
    """The no-op arm of the precision claims: the initial SVD, never updated. Its singular
    values are compared with the same fresh ``svds`` as the updated ones (``stale``); for the
    ranking, the rows that arrived in the stream are folded in, ``u = a V S^-1`` with the
    initial V and S (``foldin``): what a system that never updates its SVD does with new
    users (the classical alternative to updating, Zha & Simon 1999)."""
    A = real if real is not None else make_user_item(
        preset.n_users, preset.n_items, min_activity=preset.min_activity, seed=seed)  # fmt: skip
    rng = np.random.default_rng(seed)  # the same hold-out draws as rows_workload
    if preset.eval_users:
        train, users, items = hold_out(A, preset.eval_users, rng)
    else:
        train, users, items = A.tocsr(), np.zeros(0, int), np.zeros(0, int)
    m0 = train.shape[0] - preset.n_batches * max(preset.batch_sizes)
    U0, S0, V0 = initial_svd(train[:m0], preset.k, seed)
    values: dict[str, float] = {}
    for s in preset.batch_sizes:
        m1 = m0 + preset.n_batches * s
        A1 = train[:m1]
        _, S_ref, _ = initial_svd(A1, preset.k, seed)  # the same call as rows_workload's
        p = f"rows/s{s}/stale/"
        _put(values, p + "sv_rel_error_vs_svds", relative_sv_error(S0, S_ref))
        ev = users < m1
        if ev.any():
            U = np.vstack([U0, (A1[m0:] @ V0) / S0])  # (m1, k): new rows folded in
            hr, mrr = hit_rate_mrr(U * S0, V0, A1, users[ev], items[ev])
            _put(values, f"rows/s{s}/foldin/hr10", hr)
            _put(values, f"rows/s{s}/foldin/mrr", mrr)
    log.info("seed %d: the never-updated control measured", seed)
    return values


def network_unit(preset: Preset, seed: int, real, log) -> dict[str, float]:
    """The node stream (rows then columns) of one seed, on the real graph or a generated SBM."""
    values: dict[str, float] = {}
    if real is not None:
        network_workload(real, replace(preset, sbm_nodes=real.shape[0]), seed, values, log)
    else:
        network_workload(make_sbm(preset.sbm_nodes, seed=seed), preset, seed, values, log)
    return values


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    real = load_dataset(preset.dataset, ctx.data_dir) if preset.dataset else None
    if real is not None:
        preset = paper_protocol(preset, real, preset.dataset)
        ctx.log.info("dataset %s: %s with %d non-zeros", preset.dataset, real.shape, real.nnz)
    blas = [f"{i.get('internal_api')}:{i.get('num_threads')}" for i in threadpool_info()]
    ctx.log.info("BLAS threads: %s", blas)
    metrics, curves = Metrics(), {}
    graph = preset.dataset in GRAPHS
    for seed in ctx.seeds:
        if not graph:
            values, seed_curves = ctx.cached(
                f"seed{seed}/rows", lambda s=seed: rows_unit(preset, s, real, ctx.log)
            )
            metrics.update(seed, values)
            curves = curves or seed_curves  # the first seed's cumulative times
            # the never-updated control (a unit of its own, added after the first runs)
            metrics.update(seed, ctx.cached(
                f"seed{seed}/never-updated",
                lambda s=seed: never_updated_unit(preset, s, real, ctx.log)))  # fmt: skip
        if graph or (real is None and preset.sbm_nodes):
            values = ctx.cached(
                f"seed{seed}/network", lambda s=seed: network_unit(preset, s, real, ctx.log)
            )
            metrics.update(seed, values)
        ctx.save_partial(metrics)
    if curves:
        ctx.save_figure(plot_curves(curves), "cumulative_time.png")
    extra = {
        "protocol": {k: getattr(preset, k) for k in ("batch_sizes", "n_batches", "sbm_batch",
                                                      "sbm_batches", "eval_users")},
        "blas": blas,
        "timing_note": f"update times only, {ctx.threads} BLAS threads for every method",
        "dataset": preset.dataset or "generated",
    }  # fmt: skip
    return Report(metrics=metrics, claims=make_claims(metrics, preset),
                  checks=make_checks(metrics, preset), extra=extra,
                  premises=make_premises(metrics, preset))  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())
