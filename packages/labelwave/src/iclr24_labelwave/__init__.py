"""Early Stopping Against Label Noise Without Validation Data (Yuan, Feng & Liu, ICLR 2024),
https://arxiv.org/abs/2502.07551

Label Wave: stop training under label noise at the first minimum of the training set's
prediction changes, with no validation data; plus the official label-noise generators.
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .labelwave import (
    LabelWave,
    PredictionChangeTracker,
    label_wave_stop,
    prediction_changes,
    read_official_csv,
    state_of,
)
from .noise import NoisyLabels, make_noisy_labels

__version__ = "0.1.0"

__all__ = [
    "LabelWave",
    "NoisyLabels",
    "PredictionChangeTracker",
    "label_wave_stop",
    "make_noisy_labels",
    "prediction_changes",
    "read_official_csv",
    "state_of",
]
