"""The stopping rules Label Wave is compared with, all applied to per-epoch curves (1-based
epochs returned). Each baseline trains at the same official budget (main.py: 200 epochs,
constant lr 0.01) as the method; only the epoch chosen differs.

- hold-out validation: train on (1 - f) of the noisy training set, keep the epoch with the
  best accuracy on the held-out part (its labels as noisy as the training labels). This
  follows the official code's FIRST commit (tmllab/2024_ICLR_LabelWave 178a761, 2024-06-04),
  whose loader held out 20% and whose main.py logged this ValAcc per epoch; since 19f9dbc and
  f97f3b7 (2024-12-31; HEAD cf3e9eb) the official code trains on all the data and logs no
  validation accuracy. We take the best over the whole budget (no patience), the strongest
  form of the rule.
- final epoch: train to the end and keep the last model.
- oracle: the epoch with the best test accuracy (uses test labels: a reference, not a method).
"""

from __future__ import annotations

import numpy as np


def best_validation_epoch(val_acc: np.ndarray) -> int:
    """The first epoch with the highest validation accuracy. val_acc: (epochs,)"""
    if len(val_acc) == 0:
        raise ValueError("no validation accuracy recorded")
    return int(np.argmax(val_acc)) + 1


def final_epoch(test_acc: np.ndarray) -> int:
    return len(test_acc)


def oracle_epoch(test_acc: np.ndarray) -> int:
    """The first epoch with the highest test accuracy (reference only)."""
    return int(np.argmax(test_acc)) + 1
