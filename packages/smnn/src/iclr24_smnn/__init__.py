"""Scalable Monotonic Neural Networks (Kim & Lee, ICLR 2024), as a library.

from iclr24_smnn import SMNN, SMNNRegressor, monotonicity_audit
"""

from .audit import AuditResult, monotonicity_audit
from .baselines import (
    MLP,
    LipschitzMonotonicNet,
    SameStructureNet,
    has_monotonicnetworks,
    monotone_gbm,
)
from .estimators import SMNNClassifier, SMNNRegressor
from .smnn import (
    SMNN,
    ConfluenceUnit,
    ExpOutput,
    ExpUnit,
    ReLUUnit,
    SMNNConfig,
    clipped_activation,
    count_parameters,
)
from .train import TrainConfig, TrainResult, train_model

__version__ = "0.1.0"

__all__ = [
    "MLP",
    "SMNN",
    "AuditResult",
    "ConfluenceUnit",
    "ExpOutput",
    "ExpUnit",
    "LipschitzMonotonicNet",
    "ReLUUnit",
    "SMNNClassifier",
    "SMNNConfig",
    "SMNNRegressor",
    "SameStructureNet",
    "TrainConfig",
    "TrainResult",
    "clipped_activation",
    "count_parameters",
    "has_monotonicnetworks",
    "monotone_gbm",
    "monotonicity_audit",
    "train_model",
]
