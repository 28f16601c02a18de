"""iclr24-infobatch: InfoBatch, lossless training speed-up by unbiased dynamic data pruning
(Qin et al., ICLR 2024, arXiv 2303.04947)."""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .baselines import FullData, HardPruning, RandomPruning
from .infobatch import DistributedInfoBatch, DynamicPruner, InfoBatch, PrunedSampler
from .schedule import EpochProgressScheduler, cosine_lambda

__version__ = "0.1.0"

__all__ = [
    "DistributedInfoBatch",
    "DynamicPruner",
    "EpochProgressScheduler",
    "FullData",
    "HardPruning",
    "InfoBatch",
    "PrunedSampler",
    "RandomPruning",
    "cosine_lambda",
]
