"""The figures of the run (PNG in --out): the 2-D fits and the time per epoch against m."""

from __future__ import annotations

import numpy as np

from iclr24_common import Metrics, pyplot

from . import data as D

LABELS = {
    "smnn": "SMNN",
    "mlp": "MLP",
    "same": "same structure",
    "lmn": "LMN (monotonicnetworks)",
    "umnn": "UMNN (umnn)",
    "lattice": "lattice (pytorch-lattice)",
    "gbm": "monotone GBM",
}


def contour_figure(surfaces: dict[str, np.ndarray]):
    """The 2-D function and the fits (first seed), as the official ``contour_2d``: a monotone
    model's level lines can only rise along y. ``surfaces``: model -> (G, G) grid values
    (rows: y, columns: x, both on linspace(0, 1, G))."""
    plt = pyplot()
    panels = [(name, z) for name, z in surfaces.items() if name in ("smnn", "mlp", "same")]
    g = np.linspace(0, 1, next(iter(surfaces.values())).shape[0]) if surfaces else np.zeros(1)
    gx, gy = np.meshgrid(g, g)
    panels = [("true function", D.synthetic_2d_function(gx, gy))] + [
        (LABELS[name], z) for name, z in panels
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.2), sharey=True,
                             squeeze=False)  # fmt: skip
    levels = np.linspace(min(z.min() for _, z in panels), max(z.max() for _, z in panels), 13)
    for ax, (title, z) in zip(axes[0], panels):  # one colour scale for all panels
        cs = ax.contourf(g, g, z, levels=levels, cmap="RdBu_r")
        ax.contour(cs, colors="k", linewidths=0.4)
        ax.set_title(title)
        ax.set_xlabel("x (free)")
    axes[0][0].set_ylabel("y (monotone)")
    fig.tight_layout()
    return fig


def scalability_figure(metrics: Metrics, preset, models):
    """Time per training epoch and parameter count against the number m of monotone inputs
    (of 40; mean over seeds)."""
    plt = pyplot()
    fig, (ax_t, ax_p) = plt.subplots(1, 2, figsize=(9.5, 3.6))
    ms = sorted(preset.scal_m)
    for name in models:
        t = [f"scalability/{name}/epoch_seconds_m{m}" for m in ms]
        p = [f"scalability/{name}/params_m{m}" for m in ms]
        if all(k in metrics for k in t + p):
            ax_t.plot(ms, [metrics.mean(k) * 1e3 for k in t], marker="o", label=LABELS[name])
            ax_p.plot(ms, [metrics.mean(k) for k in p], marker="o", label=LABELS[name])
    ax_t.set(xlabel="monotone inputs m (of 40)", ylabel="ms per training epoch", yscale="log",
             title="Training time vs m")  # fmt: skip
    ax_p.set(xlabel="monotone inputs m (of 40)", ylabel="parameters", yscale="log",
             title="Parameters vs m")  # fmt: skip
    ax_t.legend(fontsize=8)
    fig.tight_layout()
    return fig


def noise_figure(metrics: Metrics, preset, models):
    """Friedman #1: denoised test MSE against the noise std of the training targets (mean and
    sd over seeds), for the models fitted at every level."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    noises = sorted(preset.friedman_noises)
    for name in models:
        keys = [f"friedman_noise{nz:g}/{name}/test_mse" for nz in noises]
        if all(k in metrics for k in keys):
            mean = np.array([metrics.mean(k) for k in keys])
            sd = np.array([np.std(metrics.values(k)) for k in keys])
            ax.errorbar(noises, mean, yerr=sd, marker="o", capsize=3, label=LABELS[name])
    ax.set(xlabel="noise std of the training targets", ylabel="denoised test MSE",
           title="Friedman #1: error vs noise")  # fmt: skip
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
