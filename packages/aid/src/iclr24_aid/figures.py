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
