"""The figures of the run (PNG in --out): divergence curves per estimator, bound vs measured."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot

COLOURS = {"coord": "C0", "gauss2": "C1", "sphere2": "C2", "gauss1": "C3", "sphere1": "C4"}
LABELS = {"coord": "coordinate", "gauss2": "2-point Gaussian", "sphere2": "2-point sphere",
          "gauss1": "1-point Gaussian", "sphere1": "1-point sphere"}  # fmt: skip


def plot_divergence(results: dict, preset):
    """delta_t = ||w_t - w'_t||, mean over the coupled seeds with a +-1 SE band, against t: one
        panel per problem x algorithm, one line per estimator (the bounds: bound_vs_measured.png); an
    estimator whose runs diverged has no curve, only its legend entry."""
    plt = pyplot()
    rows, cols = list(preset.problems), list(preset.algorithms)
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(3.6 * len(cols), 2.7 * len(rows)),
                             squeeze=False)  # fmt: skip
    for i, pb in enumerate(rows):
        for j, alg in enumerate(cols):
            ax, late = axes[i][j], []
            for kind in preset.estimators:
                r = results.get((pb, alg, kind))
                if r is None:
                    continue
                delta = r["delta"]
                if not np.isfinite(delta).all():  # a diverged run: no curve, said in the legend
                    ax.plot([], [], c=COLOURS[kind], ls=":", label=f"{LABELS[kind]}: diverged")
                    continue
                t = np.arange(1, delta.shape[1])
                mean = delta.mean(0)[1:]
                se = delta.std(0, ddof=1)[1:] / np.sqrt(len(delta)) if len(delta) > 1 else 0 * mean
                ok = mean > 0  # SGD: exactly 0 until the replaced example is first drawn
                ax.plot(t[ok], mean[ok], c=COLOURS[kind], label=LABELS[kind], lw=1.2)
                lower = np.maximum(mean - se, mean / 3)
                ax.fill_between(t[ok], lower[ok], (mean + se)[ok], color=COLOURS[kind], alpha=0.2)
                late.append(mean[len(mean) // 10 :])
            ax.set(yscale="log", title=f"{pb}, ZO-{alg.upper()}", xlabel="step t")
            if late and all(np.isfinite(v).all() for v in late):
                top = max(float(v.max()) for v in late)
                ax.set_ylim(bottom=max(min(float(v[v > 0].min(initial=top)) for v in late) / 3,
                                       top * 1e-4))  # fmt: skip
            if j == 0:
                ax.set_ylabel("E ||w_t - w'_t||")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_bounds(results: dict, preset):
    """The slack of every cell, log10(B_T / E delta_T) (0: the bound is met with no room;
    the generalisation gap is below L B_T as well, see the claims), one panel per problem."""
    plt = pyplot()
    probs = list(preset.problems)
    fig, axes = plt.subplots(1, len(probs), figsize=(3.4 * len(probs), 3.2), squeeze=False)
    hatches = {"sgd": "", "gd": "//", "svrg": ".."}
    for ax, pb in zip(axes[0], probs):
        labels = []
        for alg in preset.algorithms:
            for kind in preset.estimators:
                r = results.get((pb, alg, kind))
                if r is None:
                    continue
                B, d = r["bound"][-1], r["per_seed"]["delta_T"].mean()
                slack = np.log10(B / d) if d > 0 and np.isfinite(B) else np.nan
                x = len(labels)
                ax.bar(x, 320 if np.isnan(slack) else slack, color=COLOURS[kind],
                       hatch=hatches[alg], alpha=0.4 if np.isnan(slack) else 1.0)  # fmt: skip
                labels.append(f"{alg}/{kind}")
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=6)
        ax.set(yscale="symlog", title=pb, ylabel="log10 slack  (bound / measured)")
    fig.tight_layout()
    return fig
