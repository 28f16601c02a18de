"""The training-curve and speed-grid figures."""

from __future__ import annotations

from iclr24_common import pyplot


def plot_training(curves: dict[str, list[float]]):
    """Batch loss per Adam step, DEER (solid) and sequential nn.GRU (dashed)."""
    fig, ax = pyplot().subplots(figsize=(5, 3.5))
    for name, losses in curves.items():
        deer = name.startswith("deer")
        ax.plot(losses, "-" if deer else "--", lw=1.5 if deer else 1.0,
                label=name.replace("native", "sequential (nn.GRU)"))  # fmt: skip
    ax.set_xlabel("Adam step")
    ax.set_ylabel("training loss (batch)")
    ax.set_title("DEER vs sequential training, same init and batches")
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def plot_speed(metrics, device: str):
    """DEER's forward speed-up over nn.GRU against T, one colour per hidden size (mean over
    seeds), with the official V100 speed-ups over a jitted lax.scan GRU dashed."""
    from .bench import V100_FORWARD_SPEEDUP
    from .claims import speed_points

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, (n, lengths) in enumerate(speed_points(metrics).items()):
        col = f"C{i}"
        ours = [metrics.mean(f"speed/h{n}_T{T}/deer_speedup") for T in lengths]
        ax.loglog(lengths, ours, "o-", color=col, label=f"hidden {n}, ours ({device})")
        v100 = V100_FORWARD_SPEEDUP.get(n, {})
        if v100:
            ax.loglog(list(v100), list(v100.values()), "--", color=col, lw=0.8,
                      label=f"hidden {n}, paper (V100)")  # fmt: skip
    ax.axhline(1.0, color="k", lw=0.5)
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("DEER speed-up over the sequential GRU")
    ax.set_title("GRU forward: ours vs nn.GRU (solid), paper V100 vs lax.scan (dashed)", fontsize=8)
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig
