"""Figures: the matplotlib backend is chosen here, once, for every package (no display)."""

from __future__ import annotations

import io
from pathlib import Path

from .io import atomic_write_bytes


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (works on servers and in CI).

    >>> plt = pyplot(); fig, ax = plt.subplots()
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | Path, dpi: int = 120) -> Path:
    """Save a matplotlib figure atomically as PNG and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    pyplot().close(fig)
    return atomic_write_bytes(path, buf.getvalue())
