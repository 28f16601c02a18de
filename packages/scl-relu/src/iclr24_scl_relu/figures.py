"""The figures of the run (PNG in --out)."""

from __future__ import annotations

from iclr24_common import Metrics, pyplot


def plot_validation(metrics: Metrics, preset):
    """Validation MSE per ridge penalty (mean over seeds)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    lams = list(preset.lams)
    ax.plot(lams, [metrics.mean(f"ridge/val_mse_lam{lam:g}") for lam in lams], "o-", label="ridge")
    ax.axhline(metrics.mean("least_squares/test_mse"), ls="--", c="gray", label="least squares (test)")
    ax.set(xscale="log", yscale="log", xlabel="penalty lam", ylabel="MSE")
    ax.legend()
    return fig
