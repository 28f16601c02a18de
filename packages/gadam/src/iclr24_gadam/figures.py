"""The AUC-per-method figure."""

from __future__ import annotations

from iclr24_common import Metrics, pyplot

from .claims import METHODS


def plot_auc(metrics: Metrics, graphs: list[str]):
    """One panel per graph: mean ROC-AUC of every method with the seeds' std."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(graphs), figsize=(5 * len(graphs), 3.5), squeeze=False)
    for ax, g in zip(axes[0], graphs):
        names = [m for m in METHODS if f"{g}/{m}/auc" in metrics]
        means = [metrics.mean(f"{g}/{m}/auc") for m in names]
        stds = [metrics.std(f"{g}/{m}/auc") for m in names]
        colors = ["C3" if m == "gadam" else "C1" if m == "gadam_local" else "C0" for m in names]
        ax.bar(range(len(names)), means, yerr=stds, color=colors)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_ylim(min(0.4, min(means) - 0.05), 1.0)  # a below-chance bar stays visible
        ax.axhline(0.5, color="0.5", lw=0.8, ls=":")  # chance
        ax.set_title(f"{g}: ROC-AUC (mean +/- std over seeds)")
    fig.tight_layout()
    return fig
