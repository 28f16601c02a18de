"""The plots: accuracy against input tokens for each configuration, and accuracy by position
in the batch (round 1, i.e. naive batching)."""

from __future__ import annotations

import numpy as np

from iclr24_common import Metrics, pyplot


def plot_accuracy_vs_tokens(metrics: Metrics, preset):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, part, title in ((axes[0], "llm", f"{preset.llm} on {preset.task}"),
                            (axes[1], "sim", "simulated position-biased LLM")):  # fmt: skip
        sizes = preset.batch_sizes if part == "llm" else (1, preset.sim_batch_size)
        votes = preset.votes if part == "llm" else preset.sim_votes
        for b in sizes:
            name = "single" if (part == "sim" and b == 1) else f"bs{b}"
            k = 1 if b == 1 else votes
            xs = [metrics.mean(f"{part}/{name}/v{r}/prompt_tokens") for r in range(1, k + 1)]
            ys = [metrics.mean(f"{part}/{name}/v{r}/acc") for r in range(1, k + 1)]
            ax.plot(
                xs, ys, "o-", label=f"bs {b}" + (" (SinglePrompt)" if b == 1 else f", 1..{k} votes")
            )
            if f"{part}/{name}/seas/acc" in metrics:
                ax.plot(metrics.mean(f"{part}/{name}/seas/prompt_tokens"),
                        metrics.mean(f"{part}/{name}/seas/acc"), "*", ms=14,
                        label=f"bs {b} BPE+SEAS")  # fmt: skip
        ax.set_xscale("log")
        ax.set_xlabel("input tokens (all calls, mean over seeds)")
        ax.set_ylabel("accuracy")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_position(positions: dict[str, list[list[float]]]):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, per_seed in positions.items():
        acc = np.mean(per_seed, axis=0)
        if len(acc) > 1:
            ax.plot(range(len(acc)), acc, "o-", ms=3, label=name)
    ax.set_xlabel("position in the batch (round 1)")
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
