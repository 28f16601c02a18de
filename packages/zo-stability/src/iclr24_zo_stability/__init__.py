"""General Stability Analysis for Zeroth-Order Optimization Algorithms (Liu, Zhang, Gu & Chen,
ICLR 2024), https://openreview.net/forum?id=AfhNyr73Ma

Zeroth-order gradient estimates (coordinate, 2-point and 1-point, Gaussian or sphere), ZO-SGD /
ZO-GD / ZO-SVRG for any torch model as a black box, the coupled stability harness and the
stability bounds.
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .zo_stability import (
    KINDS,
    ZOGD,
    ZOSGD,
    ZOSVRG,
    Estimate,
    Estimator,
    QueryBudgetExhausted,
    model_objective,
)

__version__ = "0.1.0"

__all__ = [
    "KINDS",
    "ZOGD",
    "ZOSGD",
    "ZOSVRG",
    "Estimate",
    "Estimator",
    "QueryBudgetExhausted",
    "model_objective",
]
