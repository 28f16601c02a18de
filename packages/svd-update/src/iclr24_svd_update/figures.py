"""The cumulative update-time figure."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot


def plot_curves(curves: dict) -> object:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(curves), figsize=(5.5 * len(curves), 4), squeeze=False)
    for ax, (title, per_method) in zip(axes[0], curves.items()):
        for name, cum in per_method.items():
            ax.plot(
                np.arange(1, len(cum) + 1),
                cum,
                label=name,
                linestyle="-" if name.startswith("ours") else "--",
            )
        ax.set_yscale("log")
        ax.set_xlabel("update batch")
        ax.set_ylabel("cumulative update time (s)")
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
