"""Fast Updating Truncated SVD for Representation Learning with Sparse Matrices
(Deng et al., ICLR 2024), https://arxiv.org/abs/2401.09703
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .baselines import RecomputeSVD, VecharynskiSVD, YamazakiSVD, ZhaSimonSVD
from .data import load_dataset, make_sbm, make_user_item
from .metrics import hit_rate_mrr, relative_sv_error, scaled_residual
from .orthogonalize import gkl, rpi, sparse_qr
from .svd_update import EvolvingSVD, UpdateConfig, initial_svd

__version__ = "0.1.0"

__all__ = [
    "EvolvingSVD",
    "RecomputeSVD",
    "UpdateConfig",
    "VecharynskiSVD",
    "YamazakiSVD",
    "ZhaSimonSVD",
    "gkl",
    "hit_rate_mrr",
    "initial_svd",
    "load_dataset",
    "make_sbm",
    "make_user_item",
    "relative_sv_error",
    "rpi",
    "scaled_residual",
    "sparse_qr",
]
