"""Symmetric Neural-Collapse Representations with Supervised Contrastive Loss: The Impact of
ReLU and Batching (Kini, Vakilian, Behnia, Gill & Thrampoulidis, ICLR 2024),
https://arxiv.org/abs/2306.07960

The supervised contrastive loss (reference semantics and the paper's per-batch form), the
unconstrained-features models UFM and UFM+ (ReLU), batch-binding and the batch-graph condition,
geometry metrics (distance to the orthogonal frame and the simplex ETF, NC1, angles) and
STEP imbalance.
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .baselines import random_batches
from .data import load_cifar, load_digits_split, step_counts, step_imbalance, ufm_labels
from .geometry import (
    class_means,
    etf_of_distance,
    geometry,
    gram_distance,
    mean_angle,
    nc1,
    orthogonal_frame,
    simplex_etf,
    zero_row_fraction,
)
from .scl_relu import (
    UFM,
    BatchBindingSampler,
    BatchGraph,
    SupConLoss,
    UFMPlus,
    batch_graph_condition,
    bind,
    binding_examples,
    normalize_rows,
    of_loss_value,
    project_nonneg_sphere,
    scl_loss,
    supcon_loss,
)

__version__ = "0.1.0"

__all__ = [
    "UFM",
    "BatchBindingSampler",
    "BatchGraph",
    "SupConLoss",
    "UFMPlus",
    "batch_graph_condition",
    "bind",
    "binding_examples",
    "class_means",
    "etf_of_distance",
    "geometry",
    "gram_distance",
    "load_cifar",
    "load_digits_split",
    "mean_angle",
    "nc1",
    "normalize_rows",
    "of_loss_value",
    "orthogonal_frame",
    "project_nonneg_sphere",
    "random_batches",
    "scl_loss",
    "simplex_etf",
    "step_counts",
    "step_imbalance",
    "supcon_loss",
    "ufm_labels",
    "zero_row_fraction",
]
