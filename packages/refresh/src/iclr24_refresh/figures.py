"""Figures: accuracy matrices as heat-maps, and average accuracy after each task."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot


def plot_accuracy_matrices(matrices: dict[str, dict[str, list]], dataset: str):
    """Class-IL accuracy matrix R[i, j] of every arm (one seed)."""
    plt = pyplot()
    arms = list(matrices)
    fig, axes = plt.subplots(1, len(arms), figsize=(2.6 * len(arms), 2.8), squeeze=False)
    for ax, arm in zip(axes[0], arms):
        R = np.asarray(matrices[arm]["cil"])
        ax.imshow(R, vmin=0, vmax=100, cmap="viridis")
        T = R.shape[0]
        if T <= 6:
            for i in range(T):
                for j in range(T):
                    ax.text(j, i, f"{R[i, j]:.0f}", ha="center", va="center", fontsize=6, color="w")
        ax.set_title(arm, fontsize=8)
        ax.set_xlabel("task evaluated", fontsize=7)
        ax.set_ylabel("after training task", fontsize=7)
        ax.tick_params(labelsize=6)
    fig.suptitle(f"{dataset}: class-IL accuracy matrix (%), seed 0", fontsize=9)
    fig.tight_layout()
    return fig


def plot_accuracy_over_time(per_seed: list[dict[str, dict[str, list]]], dataset: str):
    """Mean class-IL accuracy over the tasks seen so far, after each task (mean of seeds)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for arm in per_seed[0]:
        curves = []
        for m in per_seed:
            R = np.asarray(m[arm]["cil"])
            curves.append([R[i, : i + 1].mean() for i in range(R.shape[0])])
        ax.plot(np.arange(1, R.shape[0] + 1), np.mean(curves, 0), marker="o", ms=3, label=arm)
    ax.set_xlabel("tasks learned")
    ax.set_ylabel("class-IL accuracy on seen tasks (%)")
    ax.set_title(f"{dataset} (mean of {len(per_seed)} seeds)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
