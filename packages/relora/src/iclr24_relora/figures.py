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


def plot_size_sweep(sizes: dict[str, dict]):
    """The size sweep: each method's held-out loss, and ReLoRA's paired gaps (+/- 2 SE;
    positive = ReLoRA the lower loss), against the parameter count."""
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.4))
    rows = sorted(sizes.values(), key=lambda row: row["params"])
    params = np.array([row["params"] for row in rows])
    for method, label in LABELS.items():
        ax.plot(params, [row["eval_loss"][method] for row in rows], "o-", label=label)
    for key, label in (("gap_vs_lora", "vs LoRA"), ("gap_vs_lora_warm", "vs LoRA + warm start"),
                       ("gap_vs_full", "vs full-rank")):  # fmt: skip
        gap = np.array([row[key] for row in rows])
        bx.errorbar(params, gap[:, 0], yerr=2 * gap[:, 1], fmt="o-", capsize=3, label=label)
    bx.axhline(0, c="gray", lw=0.8)
    for a in (ax, bx):
        a.set_xscale("log")
        a.set_xlabel("parameters")
    ax.set(ylabel="held-out loss (nats/token)", title="loss by model size")
    bx.set(ylabel="other's loss - ReLoRA's (nats)", title="ReLoRA's gaps (+/- 2 SE)")
    ax.legend(fontsize=8)
    bx.legend(fontsize=8)
    fig.tight_layout()
    return fig
