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
