"""DEER: parallel evaluation of non-linear sequential models over the sequence length.

Lim, Zhu, Selfridge & Kasim, ICLR 2024, https://arxiv.org/abs/2309.12252
"""

# DEER runs many short element-wise ops: OpenMP threads that spin while they wait stall each of
# them when the cores are shared (measured 4-5x slower with 2 threads on 2 busy cores).
# iclr24_common sets OMP_WAIT_POLICY=PASSIVE (sleeping waiters) unless the user set it, and
# must be imported before torch for OpenMP to read it.
import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

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
