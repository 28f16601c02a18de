"""The figures: samples trained on per epoch, and the saved fraction over r and delta."""

from __future__ import annotations

import numpy as np

from iclr24_common import Metrics, pyplot

from .claims import PAPER_SAVED


def plot_epoch_sizes(records: dict, preset, seed: int):
    """Samples trained on in each epoch, per method (one panel per dataset, one seed)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(preset.datasets), figsize=(5 * len(preset.datasets), 3.5),
                             squeeze=False)  # fmt: skip
    for ax, ds in zip(axes[0], preset.datasets):
        for m in preset.methods:
            r = records.get((ds, m, seed))
            if r:
                style = "--" if m.startswith("random") else "-"  # overlaps infobatch_r0.7
                ax.plot([ep["samples"] for ep in r["epochs"]], style, label=m)
        ax.set(title=f"{ds} (seed {seed})", xlabel="epoch", ylabel="samples trained on")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_sweep(grid: dict, ds: str, preset, metrics: Metrics):
    """Left: InfoBatch's saved fraction over r, one line per delta, against the ceiling r x
    delta (every sample below the mean) and the paper's ~40%. Right: its test accuracy, with
    full data's (mean +/- std over seeds)."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    ratios = sorted({r for r, _ in grid})
    for i, d in enumerate(sorted({d for _, d in grid})):
        color = f"C{i}"
        saved = [grid[r, d]["saved_fraction"] for r in ratios]
        left.plot(ratios, saved, "o-", color=color, label=f"measured, delta = {d:g}")
        left.plot(ratios, np.array(ratios) * d, ":", color=color, lw=1)
        right.plot(ratios, [grid[r, d]["test_acc"] for r in ratios], "o-", color=color,
                   label=f"delta = {d:g}")  # fmt: skip
    left.plot([], [], "k:", lw=1, label="r x delta (all samples below the mean)")
    left.plot([0.5], [PAPER_SAVED], "k*", ms=12, label="paper: ~40% at r = 0.5, delta = 0.875")
    low = [grid[r, d]["low_fraction"] for (r, d) in grid if grid[r, d]["low_fraction"]]
    left.set(xlabel="prune ratio r", ylabel="sample passes saved",
             title=f"{ds}: saved ~ r x {np.mean(low):.2f} (below-mean share) x pruned epochs / E")  # fmt: skip
    left.legend(fontsize=7)
    full = f"{ds}/full/test_acc"
    if full in metrics:
        mu, sd = metrics.mean(full), metrics.std(full)
        right.axhline(mu, color="k", lw=1, label="full data (mean over seeds)")
        right.axhspan(mu - sd, mu + sd, color="k", alpha=0.1)
    right.set(xlabel="prune ratio r", ylabel="test accuracy (%)",
              title=f"{ds}: InfoBatch accuracy (seed {preset.seeds[0]})")  # fmt: skip
    right.legend(fontsize=7)
    fig.tight_layout()
    return fig
