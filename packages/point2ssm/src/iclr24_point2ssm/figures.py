"""The figures of the run (PNG in --out)."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot

from .shape_model import ShapeModel


def plot_ssm_curves(curves: dict[str, list[dict]], methods, cond: str):
    """Compactness, generalization and specificity over 1..max_modes modes, mean +/- sd over
    seeds, one line per method, for one input condition."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for ax, name in zip(axes, ("compactness", "generalization", "specificity"), strict=True):
        for method in methods:
            runs = np.array([c[name] for c in curves.get(f"{cond}/{method}", [])])
            if runs.size == 0:
                continue
            modes = np.arange(1, runs.shape[1] + 1)
            ax.errorbar(modes, runs.mean(0), yerr=runs.std(0), label=method, capsize=2)
        ax.set_xlabel("number of modes")
        ax.set_title(f"{name} ({cond} input)")
    axes[0].legend()
    fig.tight_layout()
    return fig


def plot_modes(model: ShapeModel, title: str, n_modes: int = 3):
    """The first modes of a shape model, mean +/- 2 sd."""
    return model.figure(n_modes, title=title)
