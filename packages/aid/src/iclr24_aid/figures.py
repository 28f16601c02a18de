"""The figures of the run (PNG in --out)."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot


def plot_curves(curves: dict) -> object:
    """Validation (seen combinations) and test (unseen) accuracy over training, mean over
    seeds, one panel per ratio p. curves: (ratio, method) -> list of histories."""
    plt = pyplot()
    ratios = sorted({r for r, _ in curves})
    fig, axes = plt.subplots(1, len(ratios), figsize=(4.2 * len(ratios), 3.2), squeeze=False)
    for ax, ratio in zip(axes[0], ratios):
        for (r, method), hists in sorted(curves.items()):
            if r != ratio:
                continue
            step = hists[0]["step"]
            for split, ls in (("val", "--"), ("test", "-")):
                acc = np.mean([h[split] for h in hists], axis=0)
                ax.plot(step, acc, ls, label=f"{'FWM+AID' if method == 'aid' else 'FWM'} {split}")
        ax.set(title=f"SAR, p = {ratio:g}", xlabel="step", ylabel="accuracy", ylim=(0, 1.02))
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_clevr(curves: dict) -> object:
    """Sort-of-CLEVR validation accuracy per question kind over epochs, mean over seeds.
    curves: method -> list of histories."""
    plt = pyplot()
    kinds = ("unary", "binary", "ternary")
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    for ax, kind in zip(axes, kinds):
        for method, hists in sorted(curves.items()):
            acc = np.mean([h[f"val/{kind}"] for h in hists], axis=0)
            label = "linear + AID" if method == "aid" else "linear Transformer"
            ax.plot(hists[0]["epoch"], acc, "o-", label=label)
        ax.set(title=f"Sort-of-CLEVR, {kind}", xlabel="epoch", ylabel="validation accuracy")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_attention(maps: dict) -> object:
    """AID's attention maps, mean over seeds: input features (rows) x slots (columns), each
    column a distribution over inputs. maps: group -> list (seeds) of the unit's maps: SAR
    (``p<ratio>``): dict of named (inputs, components) arrays; Sort-of-CLEVR (``clevr``): one
    (2H, 2H) array per iteration of the shared layer."""
    plt = pyplot()
    panels = []
    for group, per_seed in sorted(maps.items()):
        if group == "clevr":
            for i in range(len(per_seed[0])):
                panels.append((f"Sort-of-CLEVR, iteration {i + 1}",
                               np.mean([m[i] for m in per_seed], 0), "input feature (k, v)",
                               "slot (k1..kH, v1..vH)"))  # fmt: skip
        else:
            for name in per_seed[0]:
                panels.append((f"SAR {group}, {name}", np.mean([m[name] for m in per_seed], 0),
                               "input stream", "component"))  # fmt: skip
    vmax = max(float(a.max()) for _, a, _, _ in panels)
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.9 * cols, 2.9 * rows), squeeze=False,
                             layout="constrained")  # fmt: skip
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    for ax, (title, a, ylabel, xlabel) in zip(axes.flat, panels):
        im = ax.imshow(a, vmin=0, vmax=vmax, cmap="viridis")
        ax.set(xticks=range(a.shape[1]), yticks=range(a.shape[0]))
        ax.set_title(title, fontsize=8)
        ax.set_xlabel(xlabel, fontsize=7)
        ax.set_ylabel(ylabel, fontsize=7)
        ax.tick_params(labelsize=6)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.6, label="attention (columns sum to 1)")
    return fig
