"""The plots: best value against evaluations per optimizer, and the paper's numbers beside ours."""

from __future__ import annotations

import numpy as np

from iclr24_common import Metrics, pyplot

# paper Table 2, (15, 14): unique (w, b) pairs explored until found; Table 3, n = 10: gap (%)
PAPER_PAIRS = {"text-bison": (40.0, 12.4), "gpt-3.5": (36.0, 15.2), "gpt-4": (17.2, 5.1)}
PAPER_TSP_GAP = {"NN": (13.0, 1.3), "FI": (3.2, 1.4), "bison": (0.0, 0.0), "gpt-3.5": (0.0, 0.0),
                 "gpt-4": (0.0, 0.0)}  # fmt: skip


LABELS = {"random": "random\nsearch", "local": "local\nperturbation"}


def plot_curves(curves: dict, title: str, ylabel: str):
    """``curves``: optimizer -> [(evaluations, best value)], one step line each."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for name, pts in curves.items():
        x, y = zip(*pts) if pts else ((0,), (np.nan,))
        ax.plot(x, y, label=name, drawstyle="steps-post", marker="." if len(x) < 30 else None)
    ax.set_xlabel("distinct solutions evaluated")
    ax.set_ylabel(ylabel)
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return fig


def plot_paper_vs_ours(m: Metrics, preset):
    """Left: evaluations until (15, 14), the paper's LLMs vs ours (censored bars hatched);
    right: TSP optimality gap, the paper's n = 10 vs ours."""
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    names, vals, errs, colors, hatch = [], [], [], [], []
    for k, (v, e) in PAPER_PAIRS.items():
        names.append(f"paper\n{k}")
        vals.append(v)
        errs.append(e)
        colors.append("tab:gray")
        hatch.append("")
    for k in ("llm", "random", "local"):
        key = f"linreg/{k}/evaluations_to_optimum"
        if k == "llm":
            found = m.mean("linreg/llm/found") == 1.0
            v = m.mean(key) if key in m and found else m.mean("linreg/llm/evaluations")
        else:
            v, found = m.mean(key), m.mean(key) <= preset.baseline_max_evaluations
        names.append(f"ours\n{LABELS[k] if k != 'llm' else f'LLM {preset.llm}'}")
        vals.append(max(v, 0.8))  # log scale: 0 evaluations drawn at the bottom
        errs.append(m.std(key) if key in m else 0.0)
        colors.append("tab:blue")
        hatch.append("" if found else "//")
    bars = a.bar(range(len(vals)), vals, yerr=errs, color=colors)
    for bar, h in zip(bars, hatch):
        bar.set_hatch(h)
    a.set_xticks(range(len(names)), names, fontsize=7)
    a.set_yscale("log")
    a.set_ylabel("distinct (w, b) evaluated until (15, 14)")
    a.set_title("regression (15, 14); hatched: not found (budget shown)", fontsize=9)
    names, vals, errs, colors = [], [], [], []
    for k, (v, e) in PAPER_TSP_GAP.items():
        names.append(f"paper\n{k}")
        vals.append(v)
        errs.append(e)
        colors.append("tab:gray")
    for k, label in (("nn", "NN"), ("fi", "FI"), ("llm", f"LLM {preset.llm}"),
                     ("random", LABELS["random"]), ("local", LABELS["local"])):  # fmt: skip
        names.append(f"ours\n{label}")
        vals.append(m.mean(f"tsp/{k}/gap"))
        errs.append(m.std(f"tsp/{k}/gap"))
        colors.append("tab:blue")
    b.bar(range(len(vals)), vals, yerr=errs, color=colors)
    b.set_xticks(range(len(names)), names, fontsize=7)
    b.set_ylabel("optimality gap (%)")
    b.set_title(f"TSP: paper n = 10, ours n = {preset.tsp_n} (equal evaluations)", fontsize=9)
    fig.tight_layout()
    return fig
