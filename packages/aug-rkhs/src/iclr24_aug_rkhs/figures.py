"""The figures of the run (PNG in --out)."""

from __future__ import annotations

import numpy as np

from iclr24_common import Metrics, pyplot


def _curve(metrics: Metrics, group: str, name: str, alphas):
    keys = [f"{group}/a{a:g}/{name}" for a in alphas]
    return np.array([metrics.mean(k) for k in keys]), np.array([metrics.se(k) for k in keys])


def plot_errors(metrics: Metrics, preset):
    """Downstream error and the bound's terms against the [MASK] rate."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.2, 4.0))
    alphas = np.array(preset.alphas)
    for group, name, label, style in (
        ("finite", "error", f"finite-sample encoder (m={preset.n_pretrain}), ridge probe", "o-"),
        ("ideal_ridge", "error", "ideal encoder, ridge probe", "s-"),
        ("ideal", "error", "ideal encoder, constrained probe", "^-"),
        ("finite", "approx_error", "finite-sample encoder: approximation error", "o:"),
    ):
        mean, se = _curve(metrics, group, name, alphas)
        ax.errorbar(alphas, mean, yerr=se, fmt=style, ms=4, capsize=2, label=label)
    for name, label, style in (
        ("approx_error", "ideal encoder: approximation error", "k:"),
        ("approx_bound", "approximation bound eps B^2/(1-lambda_{d+1})", "k--"),
        ("estimation_bound", f"estimation bound (n={preset.n_labels})", "k-."),
    ):
        ax.plot(alphas, _curve(metrics, "spectrum", name, alphas)[0], style, lw=1, label=label)
    tg = _curve(metrics, "finite", "approx_bound", alphas)[0]
    ax.plot(alphas, tg, "C0--", lw=1, label="trace-gap approximation bound (finite-sample encoder)")
    ax.set(yscale="log", xlabel="[MASK] rate alpha", ylabel="E (f_hat - f*)^2  (Var f* = 1)")
    ax.set_title(f"V={preset.vocab_size}, L={preset.length}, d={preset.d}", fontsize=9)
    ax.legend(fontsize=6.5, loc="best")
    fig.tight_layout()
    return fig


def plot_spectra(eigenvalues: dict[str, list[float]], preset):
    """The top eigenvalues of Gamma* Gamma at each [MASK] rate."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    cmap = plt.get_cmap("viridis")
    for i, (key, lam) in enumerate(eigenvalues.items()):
        ax.plot(np.arange(len(lam)), lam, ".-", ms=3, lw=0.8,
                color=cmap(i / max(1, len(eigenvalues) - 1)), label=f"alpha={key[1:]}")  # fmt: skip
    ax.axvline(preset.d + 0.5, color="gray", ls=":", lw=1)
    ax.set(yscale="log", xlabel="index i", ylabel="lambda_i", ylim=(1e-4, 1.5))
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def plot_kappa(metrics: Metrics, preset):
    """log10 kappa^2 on text against the sequence length, per [MASK] rate, with the
    i.i.d.-token closed form on the same windows (dashed)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    lengths = np.array(preset.text_lengths)
    for a in preset.text_alphas:
        mean = [metrics.mean(f"text/a{a:g}/L{n}/log10_kappa_sq") for n in lengths]
        iid = [metrics.mean(f"text/a{a:g}/L{n}/iid_log10_kappa_sq") for n in lengths]
        line = ax.plot(lengths, mean, "o-", ms=3, label=f"alpha={a:g}")[0]
        ax.plot(lengths, iid, "--", lw=0.8, color=line.get_color())
    ax.set(xlabel="sequence length L (characters)", ylabel="log10 kappa^2")
    ax.set_title("text: bigram-chain P_X (solid), i.i.d. tokens (dashed)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_mlm(metrics: Metrics, preset):
    """Masked-LM part: the linear probe's test error against the pretraining mask rate."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    rates = np.array(preset.mlm_rates)
    mean, se = _curve(metrics, "mlm", "probe_error", rates)
    ax.errorbar(rates, mean, yerr=se, fmt="o-", ms=4, capsize=2, label="MLM-pretrained encoder")
    for key, label, style in (("mlm/untrained/probe_error", "untrained encoder", "k--"),
                              ("mlm/char_histogram/probe_error", "character histogram", "k:"),
                              ("mlm/chance_error", "chance", "k-.")):  # fmt: skip
        ax.axhline(metrics.mean(key), ls=style[1:], color="k", lw=1, label=label)
    ax.set(xlabel="pretraining [MASK] rate", ylabel="probe test error")
    ax.set_title(f"{preset.mlm_layers} layers x {preset.mlm_hidden}, {preset.mlm_steps} steps, "
                 f"{preset.mlm_classes} classes", fontsize=9)  # fmt: skip
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
