"""The figures of the run (PNG in --out)."""

from __future__ import annotations

import numpy as np

from iclr24_common import Metrics, pyplot

from .autotcl import quirk_keep_range
from .claims import LABELS, METHODS


def plot_forecasting(metrics: Metrics, preset, prefix: str = ""):
    """Test MSE per horizon and method (mean over seeds, bars +/- std), oracle as a line;
    ``prefix`` picks the series ("seattle/")."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    hs = list(preset.horizons)
    methods = [m for m in METHODS if f"{prefix}{m}/mse" in metrics]
    width = 0.8 / len(methods)
    x = np.arange(len(hs))
    for i, m in enumerate(methods):
        names = [f"{prefix}{m}/mse_h{h}" for h in hs]
        ax.bar(x + i * width, [metrics.mean(n) for n in names], width,
               yerr=[metrics.std(n) for n in names], label=LABELS[m])  # fmt: skip
    if f"{prefix}oracle/mse" in metrics:
        for j, h in enumerate(hs):
            y = metrics.mean(f"oracle/mse_h{h}")
            ax.plot([j - 0.1, j + 0.9], [y, y], "k--", lw=1, label="oracle" if j == 0 else None)
    ax.set(xticks=x + 0.4 - width / 2, xticklabels=[f"H={h}" for h in hs], ylabel="test MSE")
    ax.set_title(prefix.rstrip("/") or f"{preset.data} series", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_keep_probability(arrays: dict, preset, prefix: str = ""):
    """The learned masks' keep-probability distribution over the elements of the training
    series (histograms summed over the seeds): AutoTCL as the paper describes it and the
    official code's variant, whose keep probability the quirk confines to a band (shaded).
    Left: every channel (covariates and target); right: the target channel."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.2), sharey=False)
    edges = np.linspace(0.0, 1.0, len(next(iter(arrays[f"{prefix}autotcl/keep_hist"].values())))
                        + 1)  # fmt: skip
    lo, hi = quirk_keep_range(preset.gumbel_bias, preset.gamma_zeta)
    for ax, suffix, title in zip(axes, ("", "_target"), ("all channels", "target channel")):
        for m in ("autotcl", "autotcl_quirk"):
            name = f"{prefix}{m}/keep_hist{suffix}"
            if name not in arrays:
                continue
            counts = np.sum(list(arrays[name].values()), axis=0)
            share = counts / max(counts.sum(), 1)
            ax.stairs(share, edges, label=LABELS[m], fill=m == "autotcl", alpha=0.6)
        ax.axvspan(lo, hi, color="grey", alpha=0.15, lw=0,
                   label=f"the quirk's range [{lo:.3f}, {hi:.3f}]")  # fmt: skip
        ax.set(xlabel="keep probability of an element", xlim=(0, 1), title=title)
    axes[0].set_ylabel("share of elements")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"the learned masks on the training split ({prefix.rstrip('/') or preset.data} "
                 "series, seeds pooled)", fontsize=9)  # fmt: skip
    fig.tight_layout()
    return fig
