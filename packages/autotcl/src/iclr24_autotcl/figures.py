"""The figures of the run (PNG in --out)."""

from __future__ import annotations

import numpy as np

from iclr24_common import Metrics, pyplot

from .claims import LABELS, METHODS


def plot_forecasting(metrics: Metrics, preset, prefix: str = ""):
    """Test MSE per horizon and method (mean over seeds, bars +/- std), oracle as a line;
    ``prefix`` picks the series ("seattle/")."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    hs = list(preset.horizons)
    width = 0.8 / len(METHODS)
    x = np.arange(len(hs))
    for i, m in enumerate(METHODS):
        names = [f"{prefix}{m}/mse_h{h}" for h in hs]
        ax.bar(x + i * width, [metrics.mean(n) for n in names], width,
               yerr=[metrics.std(n) for n in names], label=LABELS[m])  # fmt: skip
    if f"{prefix}oracle/mse" in metrics:
        for j, h in enumerate(hs):
            y = metrics.mean(f"oracle/mse_h{h}")
            ax.plot([j - 0.1, j + 0.9], [y, y], "k--", lw=1, label="oracle" if j == 0 else None)
    ax.set(xticks=x + 0.4 - width / 2, xticklabels=[f"H={h}" for h in hs], ylabel="test MSE")
    ax.set_title(prefix.rstrip("/") or "generated series", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
