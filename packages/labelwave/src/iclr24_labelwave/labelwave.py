"""Early Stopping Against Label Noise Without Validation Data (Yuan, Feng & Liu, ICLR 2024).
https://arxiv.org/abs/2502.07551 · official code: https://github.com/tmllab/2024_ICLR_LabelWave
(followed at HEAD cf3e9eb, 2025-02-22; its PC loop in main.py is unchanged since the first
commit 178a761, 2024-06-04).

Label Wave watches only the training set. Let f_t be the model during epoch t and
yhat_t(i) = argmax f_t(x_i) the label it predicts for training example i (recorded on the
mini-batch forward pass that trains on i, so no extra pass is needed, as in the official
``main.py``). The prediction changes of epoch t are

    PC_t = sum_i 1[ yhat_t(i) != yhat_{t-1}(i) ]           (Sec. 3; official main.py)

counted over the examples seen in both epochs. PC falls while the model learns the easy,
mostly clean patterns, and rises again once it starts to fit the mislabeled examples; its
smoothed first minimum is where to stop. With the moving average over k epochs

    MA_t = (1/k) sum_{s=t-k+1..t} PC_s                     (Algorithm 1)

training keeps the model of the epoch where MA reaches a new minimum, and stops when MA has
not improved for ``patience`` epochs; the kept model is the result. No validation data. With
the default patience 1 this is the paper's "first local minimum" of MA (k = 3; see WINDOW).
"""

from __future__ import annotations

import copy
import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# The rule: stop at the FIRST local minimum of the k = 3 moving average of PC. Source,
# second-hand: a transcription of the paper (its Algorithm 1 and Appendix E), not read from the
# paper's PDF here, says Algorithm 1 keeps the best PC' = trailing mean of the last k PCs and
# stops at its first local minimum, and that Appendix E sweeps k in {1, 2, 3, 5, 10} and finds
# k = 3 best (PC'-vs-test-accuracy correlation -0.9637). The official code (178a761 .. cf3e9eb)
# logs PC but implements neither the moving average nor the stop. Algorithm 1's counter with
# patience 1 is exactly the first local minimum: the first epoch whose moving average is not
# beaten by the next one (a tie is no improvement) is kept, and training stops one epoch later.
# Until 2026-12-05 this package used patience 5 (ours, not the paper's); both are constructor
# arguments, and the run replays a grid of them (sensitivity.py).
WINDOW = 3
PATIENCE = 1


def prediction_changes(previous: np.ndarray, current: np.ndarray) -> int:
    """PC between two epochs' predicted labels, both (n,) with -1 for "not seen that epoch":
    the examples seen in both epochs whose predicted label differs."""
    seen = (previous >= 0) & (current >= 0)
    return int(np.count_nonzero(seen & (previous != current)))


class PredictionChangeTracker:
    """Each training example's predicted label in the current epoch, keyed by its dataset
    index (never its batch position, so any shuffle order gives the same count), and PC_t
    against the previous epoch.

    ``update(indices, predictions)`` after each mini-batch: indices (b,) into the training
    set, predictions (b,) class ids or (b, C) logits. ``end_epoch()`` returns PC_t, or None
    after the first epoch (nothing to compare with; the official code logs 0 there).
    """

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n = n
        self.previous: np.ndarray | None = None
        self.current = np.full(n, -1, dtype=np.int64)  # (n,), -1 = not seen this epoch
        self.history: list[int | None] = []

    def update(self, indices, predictions) -> None:
        idx = np.asarray(_numpy(indices), dtype=np.int64).reshape(-1)  # (b,)
        pred = np.asarray(_numpy(predictions))
        if pred.ndim == 2:
            pred = pred.argmax(axis=1)  # (b, C) logits -> (b,) labels
        if pred.shape != idx.shape:
            raise ValueError(f"{idx.shape[0]} indices but predictions of shape {pred.shape}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.n):
            raise ValueError(f"indices must lie in [0, {self.n})")
        self.current[idx] = pred  # a later visit in the same epoch overwrites, as in main.py

    def end_epoch(self) -> int | None:
        pc = None if self.previous is None else prediction_changes(self.previous, self.current)
        self.previous, self.current = self.current, np.full(self.n, -1, dtype=np.int64)
        self.history.append(pc)
        return pc


class LabelWave:
    """Algorithm 1 as a framework-agnostic callback.

    Per mini-batch: ``update(indices, predictions)``. Per epoch: ``end_epoch(state)`` returns
    True when training should stop; ``state`` is what to keep at a new minimum (a model, a
    state dict, or a zero-argument callable returning one, called only when needed); it is
    deep-copied. Afterwards ``best_epoch`` (1-based) and ``best_state`` are the result. A loop
    that keeps training after the stop (to log the whole PC curve) leaves them unchanged.
    """

    def __init__(self, n: int, window: int = WINDOW, patience: int = PATIENCE):
        if window < 1 or patience < 1:
            raise ValueError(f"window and patience must be >= 1, got {window}, {patience}")
        self.tracker = PredictionChangeTracker(n)
        self.window, self.patience = window, patience
        self.pcs: list[int] = []  # PC_2, PC_3, ... (epoch 1 has none)
        self.moving_average: list[float | None] = []  # MA per epoch, None until k PCs exist
        self.epoch = 0
        self.best = float("inf")
        self.best_epoch: int | None = None
        self.best_state: Any = None
        self.wait = 0
        self.stop_epoch: int | None = None  # the first epoch at which end_epoch said stop

    def update(self, indices, predictions) -> None:
        self.tracker.update(indices, predictions)

    def end_epoch(self, state: Any = None) -> bool:
        return self.observe(self.tracker.end_epoch(), state)

    def observe(self, pc: int | None, state: Any = None) -> bool:
        """Algorithm 1's step for one epoch's PC (None for the first epoch)."""
        self.epoch += 1
        if pc is not None:
            self.pcs.append(pc)
        ma = self.step(pc)
        self.moving_average.append(ma)
        if self.stop_epoch is not None:  # stopped: the result is frozen (PC is still logged)
            return True
        if ma is not None and ma < self.best:  # a tie is no improvement: keep the earlier
            self.best, self.best_epoch, self.wait = ma, self.epoch, 0
            self.best_state = copy.deepcopy(state() if callable(state) else state)
        elif ma is not None:
            self.wait += 1
        if self.wait >= self.patience:
            self.stop_epoch = self.epoch
        return self.stop_epoch is not None

    def step(self, pc: int | None) -> float | None:
        """MA_t over the last ``window`` PCs, once that many exist."""
        if pc is None or len(self.pcs) < self.window:
            return None
        return float(np.mean(self.pcs[-self.window :]))


def label_wave_stop(
    pcs: list[int | None], window: int = WINDOW, patience: int = PATIENCE
) -> tuple[int | None, int | None]:
    """Algorithm 1 on a recorded PC sequence (one entry per epoch, None for the first):
    ``(best_epoch, stop_epoch)``, 1-based; stop_epoch is None when patience never ran out."""
    rule = LabelWave(1, window, patience)
    for pc in pcs:
        rule.observe(pc)
    return rule.best_epoch, rule.stop_epoch


def read_official_csv(path: str | Path) -> tuple[list[int | None], list[float]]:
    """The per-epoch CSV written by the official ``main.py``: ``(pcs, test_acc)`` for
    ``label_wave_stop``. Both layouts are read: ``Epoch,LabelWave,ValAcc,TestAcc`` (first commit
    178a761) and ``Epoch,LabelWave,TestAcc`` (since f97f3b7, 2024-12-31). The official loop
    writes PC = 0 at epoch 1, where there is no previous epoch to compare with; it is read as
    missing (None), never as a count of 0, which would otherwise enter the first moving average
    as a spurious minimum."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0][:2] != ["Epoch", "LabelWave"] or rows[0][-1] != "TestAcc":
        raise ValueError(f"{path}: not an official Label Wave CSV (header Epoch,LabelWave,...,"
                         "TestAcc)")  # fmt: skip
    pcs, acc = [], []
    for n, row in enumerate(rows[1:], start=2):
        try:
            epoch, pc, test = int(row[0]), int(float(row[1])), float(row[-1])
        except (ValueError, IndexError) as e:
            raise ValueError(f"{path}: line {n}: {row!r} is not epoch,PC,...,test acc") from e
        if epoch != len(pcs) + 1:
            raise ValueError(f"{path}: line {n}: epoch {epoch}, expected {len(pcs) + 1}")
        pcs.append(None if epoch == 1 else pc)
        acc.append(test)
    return pcs, acc


def _numpy(x) -> Any:
    """torch tensors (any device) and sequences to NumPy."""
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return x


def state_of(model) -> Callable[[], dict]:
    """For a torch module: a callable giving a CPU copy of its state dict (for end_epoch)."""
    return lambda: {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
