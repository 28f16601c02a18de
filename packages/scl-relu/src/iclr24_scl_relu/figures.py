"""The figures of the run (PNG in --out): Gram heat-maps per setting, UFM convergence."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot


def plot_grams(grams: dict[str, np.ndarray]):
    """The normalised class-mean Gram matrix (cosines) of every setting, first seed."""
    plt = pyplot()
    names = list(grams)
    cols = min(4, len(names))
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.9 * rows), squeeze=False)
    for ax in axes.flat[len(names) :]:
        ax.axis("off")
    for ax, name in zip(axes.flat, names):
        G = np.asarray(grams[name], dtype=float)
        d = np.sqrt(np.maximum(np.diag(G), 1e-300))
        im = ax.imshow(G / np.outer(d, d), vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_title(name, fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.6, label="cosine of class means")
    return fig


def plot_curves(curves: dict[str, list[tuple[int, float]]]):
    """Distance of the class-mean Gram matrix to the OF along projected GD, first seed."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for name, curve in curves.items():
        if curve:
            steps, dist = zip(*curve)
            ax.plot(steps, np.maximum(dist, 1e-9), label=name)
    ax.set(yscale="log", xlabel="GD step", ylabel="distance of G_M to the OF")
    ax.legend(fontsize=7)
    return fig
