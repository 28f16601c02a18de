"""iclr24-aid: Attention-based Iterative Decomposition for Tensor Product Representation
(Park, Choi & Lee, ICLR 2024), with three TPR backbones (Fast Weight Memory, TPR-RNN, a linear
Transformer), the systematic associative recall task, and the sys-bAbI and WikiText-103
loaders."""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .aid import AIDDecomposition, LinearDecomposition
from .babi import load_babi
from .corpus import load_wikitext103, pydoc_corpus
from .data import SAR, Batch, load_words
from .fwm import FWM, clip_frobenius, fwm_read, fwm_write
from .linear_transformer import (
    LinearTransformerLM,
    causal_linear_attention,
    quadratic_linear_attention,
)
from .tasks import BabiTrain, LMTrain, train_babi, train_lm
from .tprrnn import TPRRNN, tpr_update
from .train import TrainConfig, TrainResult, accuracy, role_cosines, train

__all__ = [
    "FWM",
    "SAR",
    "TPRRNN",
    "AIDDecomposition",
    "BabiTrain",
    "Batch",
    "LMTrain",
    "LinearDecomposition",
    "LinearTransformerLM",
    "TrainConfig",
    "TrainResult",
    "accuracy",
    "causal_linear_attention",
    "clip_frobenius",
    "fwm_read",
    "fwm_write",
    "load_babi",
    "load_wikitext103",
    "load_words",
    "pydoc_corpus",
    "quadratic_linear_attention",
    "role_cosines",
    "tpr_update",
    "train",
    "train_babi",
    "train_lm",
]
