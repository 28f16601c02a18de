"""How much the result depends on Label Wave's two knobs, the moving-average window k and
the patience: Algorithm 1 replayed on the logged prediction-change curves of the full-data
runs, for a grid of (k, patience). Free: the PC curve of a run does not depend on k or the
patience (training goes on to the end whatever the rule says), so no run is retrained.

For each noise kind and cell: the mean over seeds of (test accuracy at the epoch the rule
selects - the test oracle's), and the fraction of runs on which the rule stopped (patience ran
out inside the budget).
"""

from __future__ import annotations

import numpy as np

from .labelwave import label_wave_stop

# The grid (module constants, not preset fields: the replay reads finished units and does not
# change what a run trains). The windows are the paper's Appendix E sweep, k in {1, 2, 3, 5,
# 10} (second-hand, see labelwave.py); k = 3 with patience 1 (the first local minimum) is the
# package's rule, patience 5 its rule until 2026-12-05.
WINDOWS = (1, 2, 3, 5, 10)
PATIENCES = (1, 3, 5, 10, 20)


def pcs_of(run: dict) -> list[int | None]:
    """A run's logged PC per epoch, None where there is none (epoch 1)."""
    return [None if np.isnan(p) else int(p) for p in run["pc"]]


def replay_cell(runs: list[dict], window: int, patience: int) -> dict[str, float]:
    """Algorithm 1 with (window, patience) on each run's logged PC: mean (selected - oracle)
    test accuracy, mean |selected - oracle epoch|, stop rate. A rule that selects nothing (fewer
    epochs than the window) keeps the last epoch."""
    gaps, offsets, stops = [], [], []
    for run in runs:
        acc = np.asarray(run["test_acc"], dtype=float)  # (epochs,)
        best, stop = label_wave_stop(pcs_of(run), window, patience)
        best = len(acc) if best is None else best
        oracle = int(np.argmax(acc)) + 1
        gaps.append(acc[best - 1] - acc[oracle - 1])
        offsets.append(abs(best - oracle))
        stops.append(stop is not None)
    return {"gap": float(np.mean(gaps)), "gap_min": float(np.min(gaps)),
            "epochs_from_oracle": float(np.mean(offsets)), "stop_rate": float(np.mean(stops))}  # fmt: skip


def replay_grid(curves: dict[str, list[dict]], windows=WINDOWS, patiences=PATIENCES) -> dict:
    """``curves``: noise kind -> the full-data runs (one per seed). Returns a JSON-ready dict:
    ``{"windows", "patiences", "groups": {kind: {"gap": [[...]], "gap_min", "stop_rate",
    "epochs_from_oracle"}}}`` with rows = windows, columns = patiences."""
    out = {"windows": list(windows), "patiences": list(patiences), "groups": {}}
    for g, runs in curves.items():
        cells = [[replay_cell(runs, w, p) for p in patiences] for w in windows]
        out["groups"][g] = {key: [[c[key] for c in row] for row in cells]
                            for key in ("gap", "gap_min", "stop_rate", "epochs_from_oracle")}  # fmt: skip
    return out


def grid_table(grid: dict) -> str:
    """The grid as Markdown: one row per window, one column per (noise kind, patience) cell:
    mean selected - oracle test accuracy (points), stop rate in brackets."""
    lines = []
    for g, m in grid["groups"].items():
        lines.append(f"\n{g}: mean test acc at Label Wave's epoch - oracle's (points) "
                     "[stop rate]\n")  # fmt: skip
        lines.append("| k \\ patience | " + " | ".join(map(str, grid["patiences"])) + " |")
        lines.append("|---" * (len(grid["patiences"]) + 1) + "|")
        for i, w in enumerate(grid["windows"]):
            cells = [f"{m['gap'][i][j]:+.1f} [{m['stop_rate'][i][j]:.1f}]"
                     for j in range(len(grid["patiences"]))]  # fmt: skip
            lines.append(f"| {w} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
