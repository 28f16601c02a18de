"""The figures of the run: MMCS over the alpha x ratio grid (PNG) and a feature dashboard
(top-activating contexts of randomly drawn SAE features, HTML)."""

from __future__ import annotations

import html

import numpy as np

from iclr24_common import Metrics, pyplot


def plot_mmcs_grid(metrics: Metrics, preset):
    """Mean MMCS over seeds for every (alpha, dictionary ratio) of the toy model."""
    plt = pyplot()
    grid = np.array([[metrics.mean(f"toy/sae/r{r:g}_a{a:g}/mmcs") for a in preset.toy_alphas]
                     for r in preset.toy_ratios])  # fmt: skip
    fig, ax = plt.subplots(
        figsize=(1.2 * len(preset.toy_alphas) + 2, 0.8 * len(preset.toy_ratios) + 1.6)
    )
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
    for (i, j), v in np.ndenumerate(grid):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="w" if v < 0.6 else "k")
    ax.set_xticks(range(len(preset.toy_alphas)), [f"{a:g}" for a in preset.toy_alphas])
    ax.set_yticks(range(len(preset.toy_ratios)), [f"{r:g}" for r in preset.toy_ratios])
    ax.set(xlabel="alpha (L1 coefficient)", ylabel="dictionary size / true features",
           title=f"toy MMCS (PCA {metrics.mean('toy/pca/mmcs'):.2f}, "
                 f"ICA {metrics.mean('toy/ica/mmcs'):.2f})")  # fmt: skip
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    return fig


def dashboard_html(features: list[dict], preset) -> str:
    """One section per feature: its firing frequency and its top contexts, the token that
    fires in bold."""
    rows = [f"<h1>SAE features, layer {preset.layer} ({preset.site}) of {html.escape(preset.lm)}</h1>",
            "<p>Features drawn at random among those that fire on the evaluation text; "
            "top activations on held-out tokens.</p>"]  # fmt: skip
    for feat in features:
        rows.append(
            f"<h2>feature {feat['feature']} (fires on {100 * feat['freq']:.2f}% of tokens)</h2><ol>"
        )
        for before, tok, after, act in feat["top"]:
            rows.append(f"<li><code>{act:.2f}</code> {html.escape(before)}<b>"
                        f"{html.escape(tok)}</b>{html.escape(after)}</li>")  # fmt: skip
        rows.append("</ol>")
    return "<!doctype html><meta charset='utf-8'><title>SAE dashboard</title>\n" + "\n".join(rows)


def plot_patching(metrics: Metrics, preset):
    """IOI patching curves: share of the logit-difference change against nodes patched, mean
    over seeds (the SAE's band: +/- 1 std over seeds); an SAE's nodes are its features and
    its error node, patched with every k (k features = k + 1 nodes)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for name, colour in (("sae", "C0"), ("neurons", "C1"), ("pca", "C2"), ("untrained", "C7")):
        keys = sorted((int(n.rsplit("_k", 1)[1]), n) for n in metrics.names()
                      if n.startswith(f"ioi/{name}/share_k"))  # fmt: skip
        if not keys:
            continue
        ks = np.array([k for k, _ in keys]) + (name in ("sae", "untrained"))
        mean = np.array([metrics.mean(n) for _, n in keys])
        std = np.array([metrics.std(n) for _, n in keys])
        ax.plot(ks, mean, "o-", color=colour, ms=3,
                label=f"{name} (k needed {metrics.mean(f'ioi/{name}/k_needed'):.3g})")  # fmt: skip
        ax.fill_between(ks, mean - std, mean + std, color=colour, alpha=0.2)
    ax.axhline(preset.ioi_share, color="grey", ls=":", lw=1)
    ax.set(xscale="log", xlabel="nodes patched (clean -> corrupted)",
           ylabel="share of logit-difference change",
           title=f"IOI patching, layer {preset.layer} ({preset.site})")  # fmt: skip
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
