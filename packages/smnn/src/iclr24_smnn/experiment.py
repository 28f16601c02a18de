"""The reproduction of "Scalable Monotonic Neural Networks" (Kim & Lee, ICLR 2024).

SMNN against an unconstrained MLP, the paper's same-structure ablation, and (where
installed) the Lipschitz monotonic network of ``monotonicnetworks`` and monotone-constrained
gradient boosting, over several seeds, on:

* Friedman #1 at noise std {0, 10, 20}, scored against the noiseless test targets;
* the official 2-D scalability function (monotone in y);
* Auto MPG (vega_datasets ``cars``), k-fold cross-validation;
* training time per epoch against the number m of monotone inputs (of 40);
* (``paper`` preset) COMPAS, Blog Feedback, Loan Defaulter, Heart Disease from their CSVs.

Claims: the audited violation rate of SMNN is 0 everywhere (before and after training);
SMNN is as accurate as the MLP on Auto MPG and better under heavy noise on Friedman; the
time per epoch does not grow with m.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, replace

import numpy as np
import torch

from iclr24_common import Metrics, Report, RunContext, UsageError, progress, seed_everything

from . import data as D
from .audit import monotonicity_audit
from .baselines import LipschitzMonotonicNet, has_monotonicnetworks, monotone_gbm
from .claims import make_claims
from .smnn import MLP, SMNN, SameStructureNet, SMNNConfig, count_parameters, mlp_width_for
from .training import TrainConfig, train_model

PAPER = {
    "title": "Scalable Monotonic Neural Networks",
    "arxiv": "none (ICLR 2024, OpenReview)",
    "venue": "ICLR 2024",
    "authors": "Hyunho Kim, Jong-Seok Lee",
    "code": "https://github.com/retna319/SMNN",
}

# Official structures (exp, relu, conf) per task: generalization_performance_test/friedman_train.py,
# scalability_test/train.py, autompg/autompg_train.py, scalability_test_large_m/train.py.
FRIEDMAN_CFG = SMNNConfig((128, 128), (16, 16), (64, 64))
SYNTH_CFG = SMNNConfig((128, 128), (16, 16), (64, 64))
AUTOMPG_CFG = SMNNConfig((128, 64), (16, 16), (64, 32))
SCALABILITY_CFG = SMNNConfig((128, 64), (8, 8), (64, 32))
FRIEDMAN_MLP = (208, 208)  # official friedman_train.py MultiLayerPerceptron(hidden_size=(208, 208))


@dataclass(frozen=True)
class Preset:
    """Sizes of one preset of the reproduction."""

    friedman_noises: tuple[float, ...] = (0.0, 10.0, 20.0)
    """Noise std levels of Friedman #1 (the official set is 0, 2, 5, 10, 20)."""
    friedman_n: int = 1000
    """Rows of Friedman #1 (the official CSVs hold 1000)."""
    synth_n: int = 2000
    """Rows of the 2-D function."""
    autompg_folds: int = 5
    """Folds of the Auto MPG cross-validation."""
    epochs: int = 300
    """Training epochs on Friedman #1 (batch 128; best epoch picked on the validation split)."""
    synth_epochs: int = 150
    """Training epochs on the 2-D function (batch 128)."""
    autompg_epochs: int = 150
    """Training epochs per Auto MPG fold."""
    autompg_batch: int = 32
    """Auto MPG batch size (not given by the official script; ~250 training rows need small
    batches for SMNN's exp-parametrised weights to get enough Adam steps)."""
    scal_m: tuple[int, ...] = D.SCALABILITY_M
    """Numbers of monotone inputs (of 40) in the timing test (official 1, 2, 5, 10, 20)."""
    scal_n: int = 4000
    """Rows of the timing data (70 % used for training, as in the official test)."""
    scal_epochs: int = 6
    """Epochs timed per m (the first is dropped as warm-up; the median of the rest is kept)."""
    paper_datasets: bool = False
    """Also run COMPAS, Blog Feedback, Loan Defaulter and Heart Disease (needs their CSVs)."""


PRESETS = {
    "smoke": Preset(
        friedman_noises=(20.0,),
        friedman_n=500,
        synth_n=600,
        autompg_folds=2,
        epochs=30,
        synth_epochs=20,
        autompg_epochs=20,
        scal_m=(1, 20),
        scal_n=1000,
        scal_epochs=3,
    ),
    "default": Preset(),
    "paper": Preset(
        friedman_noises=(0.0, 2.0, 5.0, 10.0, 20.0),
        synth_n=10000,
        epochs=1000,
        synth_epochs=500,
        autompg_epochs=1000,
        scal_n=20000,
        scal_epochs=11,
        paper_datasets=True,
    ),
}
MODELS = ("smnn", "mlp", "same", "lmn", "gbm")
LMN_LIPSCHITZ = 2.0  # on standardised targets and [0, 1] inputs; a hyperparameter of the peer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--faithful-selection",
        action="store_true",
        help="pick the best epoch on the TEST split, as the official scripts report it "
        "(optimistic; off by default: a validation split is used)",
    )
    p.add_argument(
        "--no-peers",
        action="store_true",
        help="skip the peer baselines (monotonicnetworks' LMN, monotone gradient boosting)",
    )
    p.add_argument("--epochs", type=int, default=None, help="override the preset's training epochs")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1: the networks are small)",
    )


# --------------------------------------------------------------------------------------


def _t(a) -> torch.Tensor:
    return torch.as_tensor(np.asarray(a), dtype=torch.float32)


def _build(name: str, d: int, mono: dict, cfg: SMNNConfig, mlp_hidden=None):
    if name == "smnn":
        return SMNN(d, mono, cfg)
    if name == "same":
        return SameStructureNet(d, mono, cfg)
    if name == "mlp":
        if mlp_hidden is None:  # as many parameters as the SMNN, two hidden layers
            w = mlp_width_for(count_parameters(SMNN(d, mono, cfg)), d, 2)
            mlp_hidden = (w, w)
        return MLP(d, mlp_hidden)
    if name == "lmn":
        return LipschitzMonotonicNet(d, mono, width=64, depth=3, lipschitz=LMN_LIPSCHITZ)
    raise ValueError(name)


def fit_and_score(
    name,
    split: D.Split,
    mono,
    cfg,
    tcfg: TrainConfig,
    seed: int,
    *,
    faithful=False,
    mlp_hidden=None,
    classification=False,
    keep: dict | None = None,
) -> dict[str, float]:
    """Train one model on ``split``; return its test score, audit and timing (and, with
    ``keep``, store ``keep[name] = (model, target mean, target std)``)."""
    seed_everything(seed)
    d = split.X_train.shape[1]
    t0 = time.perf_counter()
    out: dict[str, float] = {}
    sel_X, sel_y = (split.X_test, split.y_test) if faithful else (split.X_val, split.y_val)
    if name == "gbm":
        model = monotone_gbm(d, mono, classification=classification, random_state=seed)
        model.fit(
            np.vstack([split.X_train, split.X_val]), np.concatenate([split.y_train, split.y_val])
        )
        pred = (
            model.predict_proba(split.X_test)[:, 1]
            if classification
            else model.predict(split.X_test)
        )
        audited = model
    else:
        model = _build(name, d, mono, cfg, mlp_hidden)
        if name == "smnn":
            out["violation_rate_init"] = monotonicity_audit(
                model, split.X_test, mono
            ).violation_rate
        if classification:
            mu, sd = 0.0, 1.0
        else:
            mu, sd = float(split.y_train.mean()), float(split.y_train.std()) or 1.0
        res = train_model(
            model,
            _t(split.X_train),
            _t((split.y_train - mu) / sd),
            tcfg,
            _t(sel_X),
            _t((sel_y - mu) / sd),
            seed=seed,
        )
        out["best_epoch"] = res.best_epoch
        if keep is not None:
            keep[name] = (model, mu, sd)
        with torch.no_grad():
            z = model(_t(split.X_test)).double().numpy()
        pred = 1 / (1 + np.exp(-z)) if classification else z * sd + mu
        audited = model
    if classification:
        out["test_accuracy"] = float(((pred > 0.5) == (split.y_test > 0.5)).mean())
    else:
        out["test_mse"] = float(np.mean((pred - split.y_test) ** 2))
    out["violation_rate"] = monotonicity_audit(audited, split.X_test, mono).violation_rate
    out["train_seconds"] = time.perf_counter() - t0
    return out


def _minmax(train: np.ndarray, *others: np.ndarray):
    lo, hi = train.min(0), train.max(0)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    return [(a - lo) / span for a in (train, *others)]


def autompg_cv(name, seed, folds, tcfg, faithful=False) -> dict[str, float]:
    """k-fold Auto MPG: inputs min-max scaled on the training folds (official preprocessing
    scales to [0, 1]); 20 % of the training folds select the epoch. Mean over folds."""
    X, y = D.autompg_frame()
    rng = np.random.default_rng(seed)
    per_fold = []
    for k, (tr, te) in enumerate(D.kfold_indices(len(X), folds, rng)):
        tr = rng.permutation(tr)
        n_val = len(tr) // 5
        va, tr = tr[:n_val], tr[n_val:]
        Xtr, Xva, Xte = _minmax(X[tr], X[va], X[te])
        split = D.Split(Xtr, y[tr], Xva, y[va], Xte, y[te])
        per_fold.append(
            fit_and_score(
                name,
                split,
                D.AUTOMPG_MONOTONE,
                AUTOMPG_CFG,
                tcfg,
                seed * 100 + k,
                faithful=faithful,
            )
        )
    return {key: float(np.mean([f[key] for f in per_fold])) for key in per_fold[0]}


def epoch_time(name: str, m: int, X: np.ndarray, y: np.ndarray, epochs: int, seed: int) -> float:
    """Median seconds per training epoch (first epoch dropped) with m monotone inputs."""
    seed_everything(seed)
    mono = D.scalability_monotone(m)
    model = _build(name, X.shape[1], mono, SCALABILITY_CFG)
    n_train = int(0.7 * len(X))  # official: random_split 70 / 30
    res = train_model(
        model,
        _t(X[:n_train]),
        _t((y[:n_train] - y.mean()) / y.std()),
        TrainConfig(epochs=epochs, batch_size=128),
        seed=seed,
    )
    times = res.epoch_seconds[1:] or res.epoch_seconds
    return float(np.median(times))


# --------------------------------------------------------------------------------------


def run(ctx: RunContext) -> Report:
    args = ctx.args
    preset = PRESETS[ctx.preset]
    if args.epochs is not None:
        if args.epochs < 1:
            raise UsageError(f"--epochs must be >= 1, got {args.epochs}")
        preset = replace(
            preset, epochs=args.epochs, synth_epochs=args.epochs, autompg_epochs=args.epochs
        )
    if args.threads < 1:
        raise UsageError(f"--threads must be >= 1, got {args.threads}")
    if preset.paper_datasets:
        D.require_paper_data(ctx.data_dir)  # stop before training anything
    torch.set_num_threads(args.threads)
    models = [m for m in MODELS if not (args.no_peers and m in ("lmn", "gbm"))]
    if "lmn" in models and not has_monotonicnetworks():
        ctx.log.info(
            "monotonicnetworks is not installed (pip install iclr24-smnn[peers]): LMN skipped"
        )
        models.remove("lmn")
    faithful = bool(args.faithful_selection)
    tcfg = TrainConfig(epochs=preset.epochs)
    synth_cfg = TrainConfig(epochs=preset.synth_epochs)
    mpg_cfg = TrainConfig(epochs=preset.autompg_epochs, batch_size=preset.autompg_batch)
    ctx.log.info(
        "models %s, %d epochs, selection on %s split, %d torch thread(s)",
        models,
        preset.epochs,
        "TEST (faithful)" if faithful else "validation",
        args.threads,
    )
    metrics = Metrics()
    contour_models: dict = {}
    timing: dict[str, dict[int, list[float]]] = {}

    for seed in ctx.seeds:
        jobs = [("friedman", nz, mdl) for nz in preset.friedman_noises for mdl in models]
        jobs += [("synthetic2d", None, mdl) for mdl in models]
        jobs += [("autompg", None, mdl) for mdl in models]
        if preset.paper_datasets:
            jobs += [(name, None, mdl) for name in D.PAPER_DATASETS for mdl in models]
        ctx.log.info("seed %d: %d training jobs", seed, len(jobs))
        bar = progress(total=len(jobs), desc=f"seed {seed}")
        for task, noise, mdl in jobs:
            if task == "friedman":
                key = f"friedman_noise{noise:g}"
                split = D.friedman(noise, preset.friedman_n, seed)
                res = fit_and_score(
                    mdl,
                    split,
                    D.FRIEDMAN_MONOTONE,
                    FRIEDMAN_CFG,
                    tcfg,
                    seed,
                    faithful=faithful,
                    mlp_hidden=FRIEDMAN_MLP,
                )
            elif task == "synthetic2d":
                key = task
                split = D.synthetic_2d(preset.synth_n, seed)
                res = fit_and_score(
                    mdl,
                    split,
                    D.SYNTHETIC2D_MONOTONE,
                    SYNTH_CFG,
                    synth_cfg,
                    seed,
                    faithful=faithful,
                    keep=contour_models if seed == ctx.seeds[0] else None,
                )
            elif task == "autompg":
                key = task
                res = autompg_cv(mdl, seed, preset.autompg_folds, mpg_cfg, faithful)
            else:
                key = task
                res = _paper_dataset(ctx, task, mdl, tcfg, seed, faithful)
            metrics.update(seed, res, prefix=f"{key}/{mdl}/")
            bar.update(1)
        bar.close()

        ctx.log.info("seed %d: timing epochs for m in %s", seed, list(preset.scal_m))
        Xs, ys = D.scalability_data(preset.scal_n, seed)
        for mdl in [m for m in ("smnn", "lmn") if m in models]:
            for m in preset.scal_m:
                sec = epoch_time(mdl, m, Xs, ys, preset.scal_epochs, seed)
                metrics.add(f"scalability/{mdl}/epoch_seconds_m{m}", seed, sec)
                timing.setdefault(mdl, {}).setdefault(m, []).append(sec)
        ctx.save_partial(metrics)
        ctx.log.info("seed %d done", seed)

    _scalability_figure(ctx, timing)
    _contour_figure(ctx, contour_models)
    claims = make_claims(metrics, preset, models)
    return Report(
        metrics=metrics,
        claims=claims,
        extra={
            "selection": "test (faithful)" if faithful else "validation",
            "models": models,
            "epochs": preset.epochs,
            "param_counts": {
                "friedman": {
                    n: count_parameters(
                        _build(n, 5, D.FRIEDMAN_MONOTONE, FRIEDMAN_CFG, FRIEDMAN_MLP)
                    )
                    for n in models
                    if n != "gbm"
                },
            },
        },
    )


def _paper_dataset(ctx, name, mdl, tcfg, seed, faithful):
    spec = D.PAPER_DATASETS[name]
    Xtr, ytr, Xte, yte = D.load_paper_dataset(ctx.data_dir, name)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(Xtr))
    n_val = len(perm) // 5
    split = D.Split(
        Xtr[perm[n_val:]], ytr[perm[n_val:]], Xtr[perm[:n_val]], ytr[perm[:n_val]], Xte, yte
    )
    cfg = SMNNConfig(spec.exp_units, spec.relu_units, spec.conf_units)
    res = fit_and_score(
        mdl,
        split,
        spec.monotone,
        cfg,
        tcfg,
        seed,
        faithful=faithful,
        classification=spec.task == "classification",
    )
    if "test_mse" in res:
        res["test_rmse"] = float(np.sqrt(res["test_mse"]))
    return res


def _contour_figure(ctx: RunContext, models: dict) -> None:
    """The 2-D function and the fits of SMNN and the MLP (first seed), as the official
    ``contour_2d``: SMNN's level lines can only rise along y."""
    panels = [
        (n, lbl)
        for n, lbl in (("smnn", "SMNN"), ("mlp", "MLP"), ("same", "same structure"))
        if n in models
    ]
    if not panels:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    g = np.linspace(0, 1, 100)
    gx, gy = np.meshgrid(g, g)
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    surfaces = [("true function", D.synthetic_2d_function(grid[:, 0], grid[:, 1]))]
    for name, label in panels:
        model, mu, sd = models[name]
        with torch.no_grad():
            surfaces.append((label, model(_t(grid)).double().numpy() * sd + mu))
    fig, axes = plt.subplots(1, len(surfaces), figsize=(3.2 * len(surfaces), 3.2), sharey=True)
    lo = min(z.min() for _, z in surfaces)
    hi = max(z.max() for _, z in surfaces)
    levels = np.linspace(lo, hi, 13)  # one colour scale for all panels
    for ax, (title, z) in zip(axes, surfaces):
        cs = ax.contourf(g, g, z.reshape(100, 100), levels=levels, cmap="RdBu_r")
        ax.contour(cs, colors="k", linewidths=0.4)
        ax.set_title(title)
        ax.set_xlabel("x (free)")
    axes[0].set_ylabel("y (monotone)")
    ctx.save_figure(fig, "contour_2d.png")


def _scalability_figure(ctx: RunContext, timing) -> None:
    if not timing:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for mdl, label in (("smnn", "SMNN"), ("lmn", "LMN (monotonicnetworks)")):
        if mdl in timing:
            ms = sorted(timing[mdl])
            means = [np.mean(timing[mdl][m]) * 1e3 for m in ms]
            ax.plot(ms, means, marker="o", label=label)
    ax.set_xlabel("number of monotone inputs m (of 40)")
    ax.set_ylabel("ms per training epoch")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.set_title("Training time vs monotone inputs")
    ctx.save_figure(fig, "scalability.png")
