"""The figures of the run (PNG in --out): the paper's Figure 1 (reward per checkpoint, raw
vs EMA, over the BC loss) and its LM figure (validation loss of every checkpoint)."""

from __future__ import annotations

from iclr24_common import pyplot


def plot_rewards(curves: dict, env: str, seed: int):
    """Rollout reward J (top) and BC training loss (bottom, the loss the paper plots) per
    checkpoint of one environment, one seed, the measured window after the plateau shaded;
    ``curves[(env, config, seed)]`` is a ``BCHistory`` as a dict (the EMA is evaluated in the
    window only)."""
    plt = pyplot()
    names = sorted({name for e, name, _ in curves if e == env})
    fig, axes = plt.subplots(2, len(names), figsize=(4 * len(names), 5), sharex="col",
                             squeeze=False)  # fmt: skip
    fig.suptitle(f"{env}, seed {seed}")
    for col, name in enumerate(names):
        c = curves[(env, name, seed)]
        top, bottom = axes[0, col], axes[1, col]
        top.plot(c["step"], c["reward"], ".-", lw=1, label="raw iterate")
        top.plot(c["step"], c["reward_ema"], "-", lw=2, label="EMA")
        top.set(title=name.replace("_", " "), ylabel="rollout reward J")
        bottom.plot(c["step"], c["train_loss"], ".-", lw=1, label="raw iterate")
        bottom.plot(c["step"], c["train_loss_ema"], "-", lw=2, label="EMA")
        bottom.set(xlabel="SGD step", ylabel="BC training loss", yscale="log")
        start = c.get("window_start", len(c["step"]) // 2)
        for ax in (top, bottom):
            ax.axvspan(c["step"][start], c["step"][-1], color="0.92", zorder=0)
        top.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_lm(curve: dict):
    """Character LM validation loss per checkpoint, raw vs EMA (cool-down shaded)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(curve["step"], curve["val"], ".-", lw=1, label="raw iterate")
    ax.plot(curve["step"], curve["val_ema"], "-", lw=2, label="EMA")
    ax.axvspan(curve["decay_from"], curve["step"][-1], color="0.9", label="lr cool-down")
    half = len(curve["val"]) // 3
    ax.set(xlabel="step", ylabel="validation loss (nats/char)",
           ylim=(min(curve["val_ema"]) - 0.05, max(curve["val"][half:]) + 0.1))  # fmt: skip
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
