"""The reproduction of "Scalable Monotonic Neural Networks" (Kim & Lee, ICLR 2024).

SMNN against an unconstrained MLP, the paper's same-structure ablation, the Lipschitz
monotonic network of ``monotonicnetworks`` and monotone-constrained gradient boosting, over
several seeds, on:

* Friedman #1 at noise std {0, 10, 20}, scored against the noiseless test targets;
* the official 2-D scalability function (monotone in y);
* Auto MPG (vega_datasets ``cars``), k-fold cross-validation;
* training time per epoch against the number m of monotone inputs (of 40);
* (``paper`` preset) COMPAS, Blog Feedback, Loan Defaulter, Heart Disease from their CSVs.

Every (seed, task, model) fit is one unit (``ctx.cached``), so ``--resume`` continues an
interrupted run and a resumed finished run reproduces ``results.json`` exactly.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np
import torch

from iclr24_common import (
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    RunContext,
    preset_option,
    progress,
    seed_everything,
)

from . import data as D
from .audit import monotonicity_audit
from .baselines import (
    MLP,
    LipschitzMonotonicNet,
    SameStructureNet,
    has_monotonicnetworks,
    mlp_width_for,
    monotone_gbm,
)
from .claims import make_checks, make_claims
from .figures import contour_figure, scalability_figure
from .smnn import SMNN, SMNNConfig, count_parameters
from .train import TrainConfig, train_model

PAPER = Paper(
    title="Scalable Monotonic Neural Networks",
    authors="Kim & Lee",
    openreview="DjIsNDEOYX",
    code="https://github.com/retna319/SMNN",
)

# Official structures (exp, relu, conf) per task: generalization_performance_test/friedman_train.py,
# scalability_test/train.py, autompg/autompg_train.py, scalability_test_large_m/train.py.
FRIEDMAN_CFG = SMNNConfig((128, 128), (16, 16), (64, 64))
SYNTH_CFG = SMNNConfig((128, 128), (16, 16), (64, 64))
AUTOMPG_CFG = SMNNConfig((128, 64), (16, 16), (64, 32))
SCALABILITY_CFG = SMNNConfig((128, 64), (8, 8), (64, 32))
FRIEDMAN_MLP = (208, 208)  # official friedman_train.py MultiLayerPerceptron(hidden_size=(208, 208))
LMN_LIPSCHITZ = 2.0  # on standardised targets and [0, 1] inputs; a hyperparameter of the peer
MODELS = ("smnn", "mlp", "same", "lmn", "gbm")
PEERS = ("lmn", "gbm")


@dataclass(frozen=True)
class Preset:
    """Sizes of one preset of the reproduction."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Random seeds (data, split, initialisation)."""
    friedman_noises: tuple[float, ...] = (0.0, 10.0, 20.0)
    """Noise std levels of Friedman #1 (the official set is 0, 2, 5, 10, 20)."""
    friedman_n: int = 1000
    """Rows of Friedman #1 (the official CSVs hold 1000)."""
    synth_n: int = 2000
    """Rows of the 2-D function."""
    autompg_folds: int = 5
    """Folds of the Auto MPG cross-validation."""
    epochs: int = 300
    """Training epochs on Friedman #1 (batch 128; best epoch picked on the selection split)."""
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
    selection: Literal["validation", "test"] = "validation"
    """Split that picks the best epoch: validation, or test as the official scripts do
    (optimistic)."""
    peers: bool = True
    """Also run the peers: monotonicnetworks' LMN (where installed) and monotone boosting."""
    paper_datasets: bool = False
    """Also run COMPAS, Blog Feedback, Loan Defaulter and Heart Disease (needs their CSVs)."""

    def __post_init__(self):
        for name in ("friedman_n", "synth_n", "epochs", "synth_epochs", "autompg_epochs",
                     "autompg_batch", "scal_n"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.autompg_folds < 2:
            raise ValueError("autompg_folds must be >= 2")
        if self.scal_epochs < 2:
            raise ValueError("scal_epochs must be >= 2 (the first epoch is a warm-up)")
        if not self.scal_m or not all(1 <= m <= D.SCALABILITY_FEATURES // 2 for m in self.scal_m):
            raise ValueError(f"scal_m must be in 1..{D.SCALABILITY_FEATURES // 2}")
        if not self.friedman_noises or min(self.friedman_noises) < 0:
            raise ValueError("friedman_noises must be >= 0")
        if self.selection not in ("validation", "test"):
            raise ValueError("selection must be validation or test")


PRESETS = {
    "smoke": Preset(
        seeds=(0,),
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
        seeds=(0, 1, 2, 3, 4),
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


def add_arguments(p: argparse.ArgumentParser) -> None:
    preset_option(p, "--selection", field="selection", choices=("validation", "test"),
                  help="split that picks the best epoch (test: as the official scripts, "
                       "optimistic)")  # fmt: skip
    preset_option(
        p, "--epochs", field="epochs", type=int, metavar="N", help="training epochs on Friedman #1"
    )


# ------------------------------------------------------------------------------ fitting
def _t(a) -> torch.Tensor:
    return torch.as_tensor(np.asarray(a), dtype=torch.float32)


def build(name: str, d: int, mono: dict, cfg: SMNNConfig, mlp_hidden=None) -> torch.nn.Module:
    """One of the neural models, on ``d`` inputs with the monotone features ``mono``."""
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
    name: str,
    split: D.Split,
    mono: dict,
    cfg: SMNNConfig,
    tcfg: TrainConfig,
    seed: int,
    *,
    selection: str = "validation",
    mlp_hidden=None,
    classification: bool = False,
) -> tuple[dict[str, float], object]:
    """Train one model on ``split``; return its test score, audit and timing, and the fitted
    model (a torch module on the split's inputs, or the boosting estimator)."""
    seed_everything(seed)
    d = split.X_train.shape[1]
    t0 = time.perf_counter()
    out: dict[str, float] = {}
    sel_X, sel_y = (
        (split.X_test, split.y_test) if selection == "test" else (split.X_val, split.y_val)
    )
    if name == "gbm":
        model = monotone_gbm(d, mono, classification=classification, random_state=seed)
        model.fit(np.vstack([split.X_train, split.X_val]),
                  np.concatenate([split.y_train, split.y_val]))  # fmt: skip
        pred = (model.predict_proba(split.X_test)[:, 1] if classification
                else model.predict(split.X_test))  # fmt: skip
        fitted = model
    else:
        model = build(name, d, mono, cfg, mlp_hidden)
        if name == "smnn":
            out["violation_rate_init"] = monotonicity_audit(
                model, split.X_test, mono
            ).violation_rate
        mu, sd = (0.0, 1.0) if classification else (float(split.y_train.mean()),
                                                      float(split.y_train.std()) or 1.0)  # fmt: skip
        res = train_model(model, _t(split.X_train), _t((split.y_train - mu) / sd), tcfg,
                          _t(sel_X), _t((sel_y - mu) / sd), seed=seed)  # fmt: skip
        out["best_epoch"] = res.best_epoch
        with torch.no_grad():
            z = model(_t(split.X_test)).double().numpy()
        pred = 1 / (1 + np.exp(-z)) if classification else z * sd + mu
        fitted = _Rescaled(model, mu, sd)
    if classification:
        out["test_accuracy"] = float(((pred > 0.5) == (split.y_test > 0.5)).mean())
    else:
        out["test_mse"] = float(np.mean((pred - split.y_test) ** 2))
    out["violation_rate"] = monotonicity_audit(fitted, split.X_test, mono).violation_rate
    out["train_seconds"] = time.perf_counter() - t0
    return out, fitted


class _Rescaled(torch.nn.Module):
    """A network trained on standardised targets, back in the targets' units."""

    def __init__(self, net: torch.nn.Module, mean: float, std: float):
        super().__init__()
        self.net, self.mean, self.std = net, mean, std

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x) * self.std + self.mean


# ------------------------------------------------------------------------------ measurements
def train_config(preset: Preset, task: str) -> TrainConfig:
    """The training budget of a task (official scripts: Adam, lr 0.005, batch 128)."""
    if task == "synthetic2d":
        return TrainConfig(epochs=preset.synth_epochs)
    if task == "autompg":
        return TrainConfig(epochs=preset.autompg_epochs, batch_size=preset.autompg_batch)
    return TrainConfig(epochs=preset.epochs)


def measure_friedman(preset: Preset, noise: float, model: str, seed: int) -> dict[str, float]:
    """Friedman #1 at one noise level: denoised test MSE, audit, time."""
    split = D.friedman(noise, preset.friedman_n, seed)
    res, _ = fit_and_score(model, split, D.FRIEDMAN_MONOTONE, FRIEDMAN_CFG,
                           train_config(preset, "friedman"), seed, selection=preset.selection,
                           mlp_hidden=FRIEDMAN_MLP)  # fmt: skip
    return res


CONTOUR_GRID = 60  # points per axis of the contour figure


def measure_synthetic2d(
    preset: Preset, model: str, seed: int
) -> tuple[dict[str, float], np.ndarray]:
    """The 2-D function: test MSE, audit, time, and the fit on a grid (for the figure)."""
    split = D.synthetic_2d(preset.synth_n, seed)
    res, fitted = fit_and_score(model, split, D.SYNTHETIC2D_MONOTONE, SYNTH_CFG,
                                train_config(preset, "synthetic2d"), seed,
                                selection=preset.selection)  # fmt: skip
    g = np.linspace(0, 1, CONTOUR_GRID)
    grid = np.column_stack([a.ravel() for a in np.meshgrid(g, g)])  # (G*G, 2): x varies fastest
    if isinstance(fitted, torch.nn.Module):
        with torch.no_grad():
            surface = fitted(_t(grid)).double().numpy()
    else:
        surface = fitted.predict(grid)
    return res, surface.reshape(CONTOUR_GRID, CONTOUR_GRID)


def _minmax(train: np.ndarray, *others: np.ndarray):
    lo, hi = train.min(0), train.max(0)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    return [(a - lo) / span for a in (train, *others)]


def measure_autompg(preset: Preset, model: str, seed: int) -> dict[str, float]:
    """k-fold Auto MPG: inputs min-max scaled on the training folds (official preprocessing
    scales to [0, 1]); 20 % of the training folds select the epoch. Mean over folds."""
    X, y = D.autompg_frame()
    rng = np.random.default_rng(seed)
    per_fold = []
    for k, (tr, te) in enumerate(D.kfold_indices(len(X), preset.autompg_folds, rng)):
        tr = rng.permutation(tr)
        n_val = len(tr) // 5
        va, tr = tr[:n_val], tr[n_val:]
        Xtr, Xva, Xte = _minmax(X[tr], X[va], X[te])
        split = D.Split(Xtr, y[tr], Xva, y[va], Xte, y[te])
        res, _ = fit_and_score(model, split, D.AUTOMPG_MONOTONE, AUTOMPG_CFG,
                               train_config(preset, "autompg"), seed * 100 + k,
                               selection=preset.selection)  # fmt: skip
        per_fold.append(res)
    return {key: float(np.mean([f[key] for f in per_fold])) for key in per_fold[0]}


def measure_paper_dataset(
    preset: Preset, name: str, model: str, seed: int, root
) -> dict[str, float]:
    """One of the paper's real datasets from its preprocessed CSVs (official test split; 20 %
    of the training rows select the epoch)."""
    spec = D.PAPER_DATASETS[name]
    Xtr, ytr, Xte, yte = D.load_paper_dataset(root, name)
    perm = np.random.default_rng(seed).permutation(len(Xtr))
    n_val = len(perm) // 5
    va, tr = perm[:n_val], perm[n_val:]
    split = D.Split(Xtr[tr], ytr[tr], Xtr[va], ytr[va], Xte, yte)
    cfg = SMNNConfig(spec.exp_units, spec.relu_units, spec.conf_units)
    res, _ = fit_and_score(model, split, spec.monotone, cfg, train_config(preset, name), seed,
                           selection=preset.selection,
                           classification=spec.task == "classification")  # fmt: skip
    if "test_mse" in res:
        res["test_rmse"] = float(np.sqrt(res["test_mse"]))
    return res


def measure_scalability(preset: Preset, model: str, m: int, seed: int) -> dict[str, float]:
    """Median seconds per training epoch (first epoch dropped) and parameter count with m
    monotone inputs of 40 (official scalability_test_large_m: 70 % of the rows train)."""
    X, y = D.scalability_data(preset.scal_n, seed)
    seed_everything(seed)
    net = build(model, X.shape[1], D.scalability_monotone(m), SCALABILITY_CFG)
    n_train = int(0.7 * len(X))
    res = train_model(net, _t(X[:n_train]), _t((y[:n_train] - y.mean()) / y.std()),
                      TrainConfig(epochs=preset.scal_epochs, batch_size=128), seed=seed)  # fmt: skip
    return {f"epoch_seconds_m{m}": float(np.median(res.epoch_seconds[1:])),
            f"params_m{m}": float(count_parameters(net))}  # fmt: skip


# ------------------------------------------------------------------------------ run
def tasks(preset: Preset) -> list[str]:
    """The accuracy tasks of a preset, in the order they run."""
    names = [f"friedman_noise{nz:g}" for nz in preset.friedman_noises]
    names += ["synthetic2d", "autompg"]
    return names + (list(D.PAPER_DATASETS) if preset.paper_datasets else [])


def models_of(preset: Preset, log=None) -> list[str]:
    models = [m for m in MODELS if preset.peers or m not in PEERS]
    if "lmn" in models and not has_monotonicnetworks():
        if log:
            log.info("monotonicnetworks is not installed (pip install iclr24-smnn[peers]): "
                     "LMN skipped")  # fmt: skip
        models.remove("lmn")
    return models


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    if preset.paper_datasets:
        D.require_paper_data(ctx.data_dir)  # stop before training anything
    models = models_of(preset, ctx.log)
    ctx.log.info("models %s; best epoch picked on the %s split", models, preset.selection)
    metrics, surfaces = Metrics(), {}
    for seed in ctx.seeds:
        jobs = [(t, m) for t in tasks(preset) for m in models]
        bar = progress(total=len(jobs), desc=f"seed {seed}")
        for task, model in jobs:
            key = f"seed{seed}/{task}/{model}"
            if task.startswith("friedman_noise"):
                noise = float(task.removeprefix("friedman_noise"))
                res = ctx.cached(key, partial(measure_friedman, preset, noise, model, seed))
            elif task == "synthetic2d":
                res, surface = ctx.cached(key, partial(measure_synthetic2d, preset, model, seed))
                surfaces.setdefault(model, surface)  # the first seed's fit, for the figure
            elif task == "autompg":
                res = ctx.cached(key, partial(measure_autompg, preset, model, seed))
            else:
                res = ctx.cached(key, partial(measure_paper_dataset, preset, task, model, seed,
                                              ctx.data_dir))  # fmt: skip
            metrics.update(seed, res, prefix=f"{task}/{model}/")
            bar.update(1)
        bar.close()
        ctx.log.info("seed %d: timing epochs for m in %s", seed, list(preset.scal_m))
        for model in [m for m in ("smnn", "lmn") if m in models]:
            for m in preset.scal_m:
                res = ctx.cached(f"seed{seed}/scalability/{model}/m{m}",
                                 partial(measure_scalability, preset, model, m, seed))  # fmt: skip
                metrics.update(seed, res, prefix=f"scalability/{model}/")
        ctx.save_partial(metrics)
    ctx.save_figure(scalability_figure(metrics, preset, models), "scalability.png")
    ctx.save_figure(contour_figure(surfaces), "contour_2d.png")
    return Report(
        metrics=metrics,
        claims=make_claims(metrics, preset),
        checks=make_checks(metrics, preset, tasks(preset)),
        extra={"models": models, "selection": preset.selection},
    )


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())
