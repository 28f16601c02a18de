"""GADAM: graph anomaly detection with adaptive message passing (Chen et al., ICLR 2024),
on torch-geometric with the PyGOD detector API."""

import warnings

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

with warnings.catch_warnings():
    # torch_geometric calls the deprecated torch.jit.script while it is imported: a torch
    # FutureWarning about PyG's own code that no user of this package can act on.
    warnings.filterwarnings("ignore", r"`torch\.jit\.script` is deprecated", FutureWarning)
    import torch_geometric  # noqa: F401

from .baselines import (
    DOMINANT,
    GAE,
    AnomalyDAE,
    AnomalyDAEConfig,
    DominantConfig,
    GAEConfig,
    degree_score,
    feature_inconsistency_score,
)
from .cola import CoLA, ColaConfig
from .data import (
    CitationGraphSpec,
    citation_graph,
    inject_anomalies,
    load_dataset,
    load_mat,
    load_pygod,
    normalize_features,
)
from .gadam import GADAM, GADAMConfig, derangement, neighbour_mean, pre_attention
from .metrics import detection_metrics, recall_at_k

__version__ = "0.1.0"
__all__ = [
    "GADAM",
    "CitationGraphSpec",
    "AnomalyDAE",
    "AnomalyDAEConfig",
    "CoLA",
    "ColaConfig",
    "DOMINANT",
    "DominantConfig",
    "GAE",
    "GAEConfig",
    "GADAMConfig",
    "citation_graph",
    "degree_score",
    "derangement",
    "detection_metrics",
    "feature_inconsistency_score",
    "inject_anomalies",
    "load_dataset",
    "load_mat",
    "load_pygod",
    "neighbour_mean",
    "normalize_features",
    "pre_attention",
    "recall_at_k",
]
