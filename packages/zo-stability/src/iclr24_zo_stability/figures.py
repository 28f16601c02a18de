"""The figures of the run (PNG in --out): divergence curves per estimator, bound vs measured."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot

COLOURS = {"coord": "C0", "gauss2": "C1", "sphere2": "C2", "gauss1": "C3", "sphere1": "C4"}
LABELS = {"coord": "coordinate", "gauss2": "2-point Gaussian", "sphere2": "2-point sphere",
          "gauss1": "1-point Gaussian", "sphere1": "1-point sphere"}  # fmt: skip


def plot_divergence(results: dict, preset):
    """delta_t = ||w_t - w'_t|| (mean over seeds, solid) and its bound (dotted) against t, one
    panel per problem x algorithm."""
    plt = pyplot()
    rows, cols = list(preset.problems), list(preset.algorithms)
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(3.6 * len(cols), 2.8 * len(rows)),
                             squeeze=False)  # fmt: skip
    for i, pb in enumerate(rows):
        for j, alg in enumerate(cols):
            ax = axes[i][j]
            for kind in preset.estimators:
                r = results.get((pb, alg, kind))
                if r is None:
                    continue
                t = np.arange(r["delta"].shape[1])
                ax.plot(t[1:], r["delta"].mean(0)[1:], c=COLOURS[kind], label=LABELS[kind])
                bound = np.where(np.isfinite(r["bound"]) & (r["bound"] < 1e300), r["bound"], np.nan)
                ax.plot(t[1:], bound[1:], c=COLOURS[kind], ls=":", lw=0.8)
            ax.set(yscale="log", title=f"{pb}, ZO-{alg.upper()}", xlabel="step t")
            if j == 0:
                ax.set_ylabel("||w_t - w'_t||  (bound dotted)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_bounds(results: dict, preset):
    """Every cell: measured L E delta_T against the bound L B_T (log-log; the diagonal is a
    bound met with no slack)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.8, 4.2))
    markers = {"sgd": "o", "gd": "s", "svrg": "^"}
    lo, hi = np.inf, 0.0
    for (_, alg, kind), r in results.items():
        L = r["constants"]["L"]
        x, y = L * r["per_seed"]["delta_T"].mean(), L * r["bound"][-1]
        if x > 0 and np.isfinite(y) and y < 1e300:
            ax.scatter(x, y, c=COLOURS[kind], marker=markers[alg], s=22)
            lo, hi = min(lo, x, y), max(hi, x, y)
    if hi > 0:
        ax.plot([lo, hi], [lo, hi], c="gray", lw=0.8, ls="--")
    for kind in preset.estimators:
        ax.scatter([], [], c=COLOURS[kind], label=LABELS[kind])
    for alg in preset.algorithms:
        ax.scatter([], [], c="k", marker=markers[alg], label=f"ZO-{alg.upper()}")
    ax.set(xscale="log", yscale="log", xlabel="measured L E||w_T - w'_T||", ylabel="bound L B_T")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
