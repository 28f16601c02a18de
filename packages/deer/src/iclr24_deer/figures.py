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


def plot_speed(rows: list[dict]):
    """DEER's forward speed-up over the sequential baselines against T, one line per hidden size."""
    fig, ax = pyplot().subplots(figsize=(5, 3.5))
    for n in sorted({r["hidden"] for r in rows}):
        rs = sorted((r for r in rows if r["hidden"] == n), key=lambda r: r["T"])
        ax.loglog([r["T"] for r in rs], [r["speedup_deer_vs_loop"] for r in rs], "o-",
                  label=f"hidden {n}")  # fmt: skip
    ax.axhline(1.0, color="k", lw=0.5)
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("speed-up vs GRUCell loop")
    ax.set_title(f"DEER forward, {rows[0]['device']}")
    ax.legend()
    fig.tight_layout()
    return fig
