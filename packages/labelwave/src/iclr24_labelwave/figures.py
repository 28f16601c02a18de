"""The figures of the run (PNG in --out)."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot


def plot_waves(curves: dict) -> object:
    """Per noise kind (first seed): test accuracy, PC and its moving average per epoch, with
    the epoch Label Wave selects and the epoch it stops."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(curves), figsize=(4.2 * len(curves), 3.2), squeeze=False)
    for ax, (spec, run) in zip(axes[0], curves.items(), strict=True):
        epochs = np.arange(1, len(run["test_acc"]) + 1)
        ax.plot(epochs, run["test_acc"], c="C0", label="test acc (%)")
        ax.set(xlabel="epoch", ylabel="test accuracy (%)", title=spec)
        right = ax.twinx()
        right.plot(epochs, run["pc"], c="C1", alpha=0.4, label="PC")
        right.plot(epochs, run["pc_ma"], c="C1", label="PC moving average")
        right.set_ylabel("prediction changes")
        if run["best_epoch"] is not None:
            ax.axvline(run["best_epoch"], c="C2", ls="--", label="Label Wave")
        if run["stop_epoch"] is not None:
            ax.axvline(run["stop_epoch"], c="gray", ls=":", label="stop")
        ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    return fig


def plot_grid(grid: dict) -> object:
    """Per noise kind, a heatmap over (window k, patience) of the mean test accuracy at the
    epoch Label Wave selects minus the oracle's (points; 0 is the best possible), each cell
    annotated with it and the stop rate; the rule's own setting is boxed."""
    plt = pyplot()
    groups = grid["groups"]
    ws, ps = grid["windows"], grid["patiences"]
    low = min(min(min(r) for r in m["gap"]) for m in groups.values())
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.6), squeeze=False)
    for ax, (g, m) in zip(axes[0], groups.items(), strict=True):
        gap = np.asarray(m["gap"])  # (windows, patiences)
        im = ax.imshow(gap, cmap="viridis", vmin=low, vmax=0.0, aspect="auto")
        for i in range(len(ws)):
            for j in range(len(ps)):
                ax.text(j, i, f"{gap[i, j]:+.1f}\n{m['stop_rate'][i][j]:.0%}", ha="center",
                        va="center", fontsize=6.5, color="w" if gap[i, j] < low / 2 else "k")  # fmt: skip
        if "rule" in grid and grid["rule"][0] in ws and grid["rule"][1] in ps:
            i, j = ws.index(grid["rule"][0]), ps.index(grid["rule"][1])
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="r", lw=2))
        ax.set(xticks=range(len(ps)), xticklabels=ps, yticks=range(len(ws)), yticklabels=ws,
               xlabel="patience", ylabel="window k", title=g)  # fmt: skip
    fig.colorbar(im, ax=axes[0].tolist(), label="test acc: Label Wave - oracle (points)")
    return fig
