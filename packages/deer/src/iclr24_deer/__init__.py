"""DEER: parallel evaluation of non-linear sequential models over the sequence length.

Lim, Zhu, Selfridge & Kasim, ICLR 2024, https://arxiv.org/abs/2309.12252
"""

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
