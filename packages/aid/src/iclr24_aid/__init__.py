"""iclr24-aid: Attention-based Iterative Decomposition for Tensor Product Representation
(Park, Choi & Lee, ICLR 2024), with the Fast Weight Memory backbone and the systematic
associative recall task."""

from .aid import AIDDecomposition, LinearDecomposition
from .data import SAR, Batch, load_words
from .fwm import FWM, clip_frobenius, fwm_read, fwm_write
from .train import TrainConfig, TrainResult, accuracy, role_cosines, train

__all__ = [
    "FWM",
    "SAR",
    "AIDDecomposition",
    "Batch",
    "LinearDecomposition",
    "TrainConfig",
    "TrainResult",
    "accuracy",
    "clip_frobenius",
    "fwm_read",
    "fwm_write",
    "load_words",
    "role_cosines",
    "train",
]
