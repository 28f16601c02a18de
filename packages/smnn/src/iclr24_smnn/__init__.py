"""Scalable Monotonic Neural Networks (Kim & Lee, ICLR 2024), as a library.

from iclr24_smnn import SMNN, SMNNRegressor, monotonicity_audit
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .audit import AuditResult, monotonicity_audit
from .baselines import (
    MLP,
    CalibratedLatticeNet,
    LipschitzMonotonicNet,
    SameStructureNet,
    UMNNSum,
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
    official_state_dict,
)
from .train import TrainConfig, TrainResult, train_model

__version__ = "0.1.0"

__all__ = [
    "MLP",
    "SMNN",
    "AuditResult",
    "CalibratedLatticeNet",
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
    "UMNNSum",
    "clipped_activation",
    "count_parameters",
    "monotone_gbm",
    "monotonicity_audit",
    "official_state_dict",
    "train_model",
]
