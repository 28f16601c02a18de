"""The figures of the run (PNG in --out)."""

from __future__ import annotations

import numpy as np

from iclr24_common import pyplot

LABELS = {"full": "full-rank", "lora": "LoRA", "lora_warm": "LoRA + warm start", "relora": "ReLoRA"}


def plot_training(curves: dict[str, dict[str, list[float]]], warm_start: int):
    """Training loss (smoothed) and learning rate of each method for one seed."""
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.2))
    for method, curve in curves.items():
        loss = np.asarray(curve["losses"])
        k = max(1, len(loss) // 40)
        smooth = np.convolve(loss, np.ones(k) / k, mode="valid")
        ax.plot(np.arange(len(smooth)) + k - 1, smooth, label=LABELS[method])
        bx.plot(curve["lrs"], label=LABELS[method], lw=1)
    for a in (ax, bx):
        a.axvline(warm_start, ls=":", c="gray")
        a.set_xlabel("step")
    ax.set(ylabel="train loss (nats/token)", title="training loss")
    bx.set(ylabel="learning rate", title="jagged cosine schedule")
    ax.legend()
    fig.tight_layout()
    return fig
