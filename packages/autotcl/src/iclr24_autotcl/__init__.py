"""AutoTCL: parametric augmentation for time-series contrastive learning (Zheng et al.,
ICLR 2024), with the TS2Vec encoder, TS2Vec's augmentation as the baseline, and the TS2Vec
evaluation protocols."""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .autotcl import (
    AugmentationNet,
    AutoTCL,
    TSEncoder,
    encode_series,
    gaussian_mmd,
    global_info_nce,
    hard_concrete,
    info_nce,
    local_info_nce,
)
from .baselines import TS2Vec, hierarchical_contrastive_loss, lag_features
from .data import (
    Classification,
    Forecasting,
    load_classification,
    load_forecast_csv,
    load_seattle,
    make_ett_like,
    time_features,
)
from .protocols import (
    eval_classification,
    eval_forecasting,
    eval_oracle,
    fit_ridge,
    fit_svm,
    pred_samples,
)

__all__ = [
    "AugmentationNet",
    "AutoTCL",
    "Classification",
    "Forecasting",
    "TS2Vec",
    "TSEncoder",
    "encode_series",
    "eval_classification",
    "eval_forecasting",
    "eval_oracle",
    "fit_ridge",
    "fit_svm",
    "gaussian_mmd",
    "global_info_nce",
    "hard_concrete",
    "hierarchical_contrastive_loss",
    "info_nce",
    "lag_features",
    "load_classification",
    "load_forecast_csv",
    "local_info_nce",
    "load_seattle",
    "make_ett_like",
    "pred_samples",
    "time_features",
]
