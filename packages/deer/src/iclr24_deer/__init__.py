"""DEER: parallel evaluation of non-linear sequential models over the sequence length.

Lim, Zhu, Selfridge & Kasim, ICLR 2024, https://arxiv.org/abs/2309.12252
"""

import os

# DEER runs many short element-wise ops. OpenMP threads that spin while they wait stall each
# of them when the cores are shared (measured 4-5x slower with 2 threads on 2 busy cores);
# sleeping waiters cost microseconds. Only before torch is first imported; never overrides.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


from ._malloc import MALLOC_TUNED
from .classifier import ClassifierConfig, ResidualGRUClassifier
from .deer import (
    DEERResult,
    ElmanCellFn,
    GRUCellFn,
    LSTMCellFn,
    cell_value_and_jacobian,
    deer_rnn,
    default_tolerances,
    linear_recurrence,
    linear_recurrence_sequential,
    reverse_linear_recurrence,
    sequential_rnn,
)
from .modules import DEERGRU, DEERLSTM
from .ode import deer_ode

__version__ = "0.1.0"

__all__ = [
    "MALLOC_TUNED",
    "DEERGRU",
    "DEERLSTM",
    "ClassifierConfig",
    "DEERResult",
    "ElmanCellFn",
    "GRUCellFn",
    "LSTMCellFn",
    "ResidualGRUClassifier",
    "cell_value_and_jacobian",
    "deer_ode",
    "deer_rnn",
    "default_tolerances",
    "linear_recurrence",
    "linear_recurrence_sequential",
    "reverse_linear_recurrence",
    "sequential_rnn",
]
