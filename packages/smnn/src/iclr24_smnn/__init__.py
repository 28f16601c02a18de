"""Scalable Monotonic Neural Networks (Kim & Lee, ICLR 2024), as a library.

from iclr24_smnn import SMNN, SMNNRegressor, monotonicity_audit
"""

from .audit import AuditResult, monotonicity_audit
from .baselines import LipschitzMonotonicNet, has_monotonicnetworks, monotone_gbm
from .estimators import SMNNClassifier, SMNNRegressor
from .smnn import (
    MLP,
    SMNN,
    ConfluenceUnit,
    ExpOutput,
    ExpUnit,
    ReLUUnit,
    SameStructureNet,
    SMNNConfig,
    clipped_activation,
    count_parameters,
)
from .training import TrainConfig, TrainResult, train_model

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
