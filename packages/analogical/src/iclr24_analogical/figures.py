"""The plot: accuracy and output tokens per method (mean and SE over seeds)."""

from __future__ import annotations

from iclr24_common import Metrics, pyplot


def plot_methods(m: Metrics, preset):
    methods = [x for x in preset.methods if f"llm/{x}/acc" in m]
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, key, label in (
        (axes[0], "acc", "accuracy"),
        (axes[1], "output_tokens", "output tokens"),
    ):
        means = [m.mean(f"llm/{x}/{key}") for x in methods]
        ses = [m.se(f"llm/{x}/{key}") for x in methods]
        ax.bar(range(len(methods)), means, yerr=ses, color="tab:blue", alpha=0.8)
        ax.set_xticks(range(len(methods)), [x.replace("_", "\n") for x in methods], fontsize=7)
        ax.set_ylabel(label)
    fig.suptitle(f"{preset.llm} on {preset.task} problems ({len(preset.seeds)} seeds)")
    fig.tight_layout()
    return fig
