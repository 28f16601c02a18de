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


def plot_loss_curves(losses: dict[str, list[list[float]]], window: int = 20):
    """Training loss per step (moving average over ``window`` steps), one panel per trained
    model and condition, one line per seed: whether the curves have flattened."""
    plt = pyplot()
    keys = sorted(losses)
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=True):
        for i, run in enumerate(losses[key]):
            run = np.asarray(run, dtype=float)
            w = max(1, min(window, len(run) // 5))
            smooth = np.convolve(run, np.ones(w) / w, mode="valid")
            ax.plot(np.arange(w, len(run) + 1), smooth, lw=1, label=f"seed {i}")
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_title(key, fontsize=9)
    axes[0][0].set_ylabel("training loss (own objective)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_sweep(metrics, names: dict[int, str], methods, xlabel: str, title: str):
    """Mean +/- sd over seeds of one metric along a sweep; ``names`` maps each x to the
    metric's name with ``{}`` for the method."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    xs = sorted(names)
    for method in methods:
        have = [x for x in xs if names[x].format(method) in metrics]
        if have:
            mean = [metrics.mean(names[x].format(method)) for x in have]
            sd = [metrics.std(names[x].format(method)) for x in have]
            ax.errorbar(have, mean, yerr=sd, label=method, capsize=2, marker="o")
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Chamfer distance (CD, lower better)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
