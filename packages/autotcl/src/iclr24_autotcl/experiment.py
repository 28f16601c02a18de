"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-autotcl reproduce --help``).

Univariate forecasting (the paper's Table 1 protocol): one encoder architecture, trained per
seed with (a) TS2Vec's augmentation at TS2Vec's official budget, (b) AutoTCL's learned
augmentation at AutoTCL's official ETTh1-univariate budget, (c) a fixed random mask keeping
as many elements as (b)'s learned mask with (b)'s budget and losses; plus the same encoder
untrained, a ridge on raw lagged values, and (generated data) the oracle conditional mean.
Every representation is read out by the same ridge protocol (alpha on validation).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

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

from .autotcl import AutoTCL, TSEncoder, encode_series
from .baselines import TS2Vec, lag_features
from .claims import METHODS, make_checks, make_claims
from .data import TARGETS, load_forecast_csv, make_ett_like
from .figures import plot_forecasting
from .protocols import eval_forecasting, eval_oracle

PAPER = Paper(
    title="Parametric Augmentation for Time Series Contrastive Learning",
    authors="Zheng, Zhang, Ding, Chen, Cai, Liu & Zhao",
    arxiv="2402.10434",
    code="https://github.com/AslanDing/AutoTCL",
)


@dataclass(frozen=True)
class Preset:
    """One preset's scale; each default cites where it comes from."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Random seeds (data, initialisation, augmentation noise)."""
    data: str = "generated"
    """generated (the ETT-like series), or ETTh1, ETTh2, ETTm1, electricity, WTH from --data-dir."""
    n_hours: int = 3024
    """Length of the generated series (18 weeks; splits 60/20/20)."""
    horizons: tuple[int, ...] = (24, 48, 168)
    """Forecast horizons (the paper's first three for ETTh1)."""
    encoder: str = "ts2vec"
    """ts2vec, or cost (CoST's trend head on top, the official AutoTCL script's encoder)."""
    output_dims: int = 64
    """Representation size (official 320; CPU-scaled, the same for every method)."""
    hidden_dims: int = 32
    """Encoder width (official 64; CPU-scaled, the same for every method)."""
    depth: int = 6
    """Residual blocks (official 10; CPU-scaled; receptive field 509 > the 201-step window)."""
    sliding_padding: int = 200
    """Past steps each causal representation sees (official eval_forecasting: 200)."""
    autotcl_epochs: int = 100
    """AutoTCL epochs (official config_etth1_uni: 100)."""
    autotcl_iters: int = 4000
    """AutoTCL iteration cap (official training script: --iters 4000)."""
    autotcl_lr: float = 1e-5
    """Encoder learning rate (official config_etth1_uni: 1e-5)."""
    meta_lr: float = 0.012
    """Augmentation-network learning rate (official config_etth1_uni: 0.012)."""
    autotcl_batch: int = 32
    """Batch (official config_etth1_uni: 32; shrunk to the number of windows, as officially)."""
    autotcl_max_train_length: int = 257
    """Training window (official config_etth1_uni: 257)."""
    local_weight: float = 0.3
    """Local InfoNCE weight (official config_etth1_uni: 0.3)."""
    reg_weight: float = 0.003
    """Mask-size penalty weight (official config_etth1_uni: 0.003)."""
    regular_weight: float = 0.0
    """Mask time-smoothness weight (official config_etth1_uni: 0)."""
    gumbel_bias: float = 0.05
    """Noise truncation of the hard-concrete mask (official config_etth1_uni: 0.05)."""
    gamma_zeta: float = 0.05
    """Stretch of the hard-concrete mask (official config_etth1_uni: 0.05)."""
    aug_dim: int = 16
    """Augmentation trunk output (official config_etth1_uni: 16)."""
    aug_depth: int = 1
    """Augmentation trunk depth (official config_etth1_uni: 1)."""
    faithful_quirks: bool = True
    """Feed h's sigmoid output as the mask logit and score the local loss on the first series
    of the batch, as the official code does."""
    ts2vec_iters: int = 200
    """TS2Vec iterations (official ts2vec.py: 200 for data of <= 100,000 values)."""
    ts2vec_lr: float = 1e-3
    """TS2Vec learning rate (official train.py: 0.001)."""
    ts2vec_batch: int = 8
    """TS2Vec batch (official train.py: 8; shrunk to the number of series)."""
    ts2vec_max_train_length: int = 3000
    """TS2Vec training window (official train.py: 3000)."""
    lags: tuple[int, ...] = (24, 72, 168)
    """Raw-lag ridge: windows tried on validation (with the same alpha grid)."""

    def __post_init__(self):
        if self.data not in ("generated", *TARGETS):
            raise ValueError(f"data must be generated or one of {', '.join(TARGETS)}")
        if self.encoder not in ("ts2vec", "cost"):
            raise ValueError("encoder must be ts2vec or cost")
        if not self.horizons or min(self.horizons) < 1:
            raise ValueError("horizons must be >= 1")
        if self.data == "generated" and self.n_hours < 5 * (
            max(self.horizons) + self.sliding_padding // 2
        ):
            raise ValueError("n_hours too small for the horizons and sliding_padding")
        if min(self.output_dims, self.hidden_dims, self.depth, self.autotcl_epochs) < 1:
            raise ValueError("output_dims, hidden_dims, depth and autotcl_epochs must be >= 1")
        if min(self.ts2vec_iters, self.autotcl_iters, self.sliding_padding + 1) < 1:
            raise ValueError("iterations must be >= 1 and sliding_padding >= 0")
        if not self.lags or min(self.lags) < 1:
            raise ValueError("lags must be >= 1")


PRESETS = {
    "smoke": Preset(
        seeds=(0,),
        n_hours=1008,
        horizons=(24, 48),
        output_dims=16,
        hidden_dims=16,
        depth=3,
        sliding_padding=48,
        autotcl_epochs=8,
        ts2vec_iters=8,
        lags=(24,),
    ),  # fmt: skip
    "default": Preset(),
    # the paper's scale: ETTh1 univariate, the official encoder size and all five horizons
    "paper": Preset(
        data="ETTh1",
        horizons=(24, 48, 168, 336, 720),
        output_dims=320,
        hidden_dims=64,
        depth=10,
        lags=(24, 72, 168, 336),
    ),  # fmt: skip
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--data", field="data", help="generated, ETTh1, ETTh2, ETTm1, ...")
    preset_option(parser, "--encoder", field="encoder", help="ts2vec or cost")


def load_task(preset: Preset, seed: int, data_dir):
    if preset.data == "generated":
        return make_ett_like(preset.n_hours, seed, preset.horizons)
    return load_forecast_csv(data_dir, preset.data)


def autotcl_model(preset: Preset, input_dims: int, **kw) -> AutoTCL:
    return AutoTCL(
        input_dims, preset.output_dims, preset.hidden_dims, preset.depth, preset.encoder,
        aug_dim=preset.aug_dim, aug_depth=preset.aug_depth, lr=preset.autotcl_lr,
        meta_lr=preset.meta_lr, batch_size=preset.autotcl_batch,
        max_train_length=preset.autotcl_max_train_length, gumbel_bias=preset.gumbel_bias,
        gamma_zeta=preset.gamma_zeta, local_weight=preset.local_weight,
        reg_weight=preset.reg_weight, regular_weight=preset.regular_weight,
        faithful_quirks=preset.faithful_quirks, **kw,
    )  # fmt: skip


def parameters(net) -> np.ndarray:
    return np.concatenate([p.detach().numpy().ravel() for p in net.parameters()])


def relative_change(before: np.ndarray, after: np.ndarray) -> float:
    """How far training moved the (averaged) encoder: ||after - before|| / ||before||."""
    return float(np.linalg.norm(after - before) / np.linalg.norm(before))


def measure_method(preset: Preset, seed: int, method: str, task, keep_ratio=None):
    """Train one method on one seed and read it out with the ridge protocol."""
    seed_everything(seed)
    horizons = [h for h in preset.horizons if h in task.horizons] or list(task.horizons)
    train, C = task.data[:, task.train], task.data.shape[-1]
    t0 = time.perf_counter()
    out: dict[str, float] = {}
    if method == "raw_lag":  # the lag window is chosen on validation, per horizon
        best = {}
        for lags in preset.lags:
            res = eval_forecasting(lag_features(task.data, task.n_covariates, lags), task,
                                   drop=preset.sliding_padding, horizons=horizons)  # fmt: skip
            for H in horizons:
                if H not in best or res[f"valid_score_h{H}"] < best[H][f"valid_score_h{H}"]:
                    best[H] = res | {f"lags_h{H}": float(lags)}
        for H in horizons:
            out.update({k: v for k, v in best[H].items() if k.endswith(f"_h{H}")})
        out["mse"] = float(np.mean([out[f"mse_h{H}"] for H in horizons]))
        out["mae"] = float(np.mean([out[f"mae_h{H}"] for H in horizons]))
        return {f"raw_lag/{k}": v for k, v in out.items()}
    bar = progress(desc=f"seed {seed} {method} (epochs)")

    def tick(model):
        bar.update(1)
        bar.set_postfix(iter=model.n_iters)

    if method == "ts2vec":
        model = TS2Vec(C, preset.output_dims, preset.hidden_dims, preset.depth, preset.ts2vec_lr,
                       preset.ts2vec_batch, preset.ts2vec_max_train_length)  # fmt: skip
        init = parameters(model._net)
        model.fit(train, n_iters=preset.ts2vec_iters, progress=tick)
        net, out["iters"] = model.net.module, model.n_iters
        out["param_change"] = relative_change(init, parameters(net))
    elif method == "untrained":
        net = TSEncoder(C, preset.output_dims, preset.hidden_dims, preset.depth,
                        trend_head=preset.encoder == "cost")  # fmt: skip
        out["iters"] = 0
    else:
        kind = "learned" if method == "autotcl" else "random"
        model = autotcl_model(preset, C, augmentation=kind, keep_ratio=keep_ratio or 0.5)
        init = parameters(model._net)
        model.fit(
            train, n_epochs=preset.autotcl_epochs, n_iters=preset.autotcl_iters, progress=tick
        )
        net, out["iters"] = model.net.module, model.n_iters
        out["param_change"] = relative_change(init, parameters(net))
        if method == "autotcl":
            keep = model.mask_keep_rate(train)  # (1, T_train, C)
            out["keep_ratio"] = float(keep.mean())
            if task.spikes is not None:
                spikes, target_keep = task.spikes[task.train], keep[0, :, -1]
                out["drop_at_spikes"] = float(1 - target_keep[spikes].mean())
                out["drop_elsewhere"] = float(1 - target_keep[~spikes].mean())
    out["train_seconds"] = time.perf_counter() - t0
    reprs = encode_series(net, task.data, causal=True, sliding_length=1,
                          sliding_padding=preset.sliding_padding)  # fmt: skip
    out.update(eval_forecasting(reprs, task, drop=preset.sliding_padding, horizons=horizons))
    out["seconds"] = time.perf_counter() - t0
    bar.close()
    return {f"{method}/{k}": v for k, v in out.items()}


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    load_task(preset, ctx.seeds[0], ctx.data_dir)  # a missing file fails at once
    metrics = Metrics()
    for seed in ctx.seeds:
        task = load_task(preset, seed, ctx.data_dir)
        if task.oracle is not None:
            hs = [h for h in preset.horizons if h in task.horizons]
            oracle = ctx.cached(f"seed{seed}-oracle", lambda t=task, h=hs: eval_oracle(t, h))
            metrics.update(seed, {f"oracle/{k}": v for k, v in oracle.items()})
        keep = None
        for method in METHODS:
            ctx.log.info("seed %d: %s", seed, method)
            values = ctx.cached(
                f"seed{seed}-{method}",
                lambda m=method, s=seed, k=keep, t=task: measure_method(preset, s, m, t, k),
            )
            metrics.update(seed, values)
            keep = values.get("autotcl/keep_ratio", keep)
            ctx.save_partial(metrics)
    ctx.save_figure(plot_forecasting(metrics, preset), "forecasting.png")
    return Report(metrics, make_claims(metrics, preset), make_checks(metrics, preset))


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())
