"""The baselines, on the same sampler machinery as InfoBatch (:class:`DynamicPruner`):
full-data training, random dynamic pruning and hard dynamic pruning.

The paper compares InfoBatch with static pruning (Random, EL2N, GraNd, ...) and dynamic
pruning (Random*, epsilon-greedy, UCB) at equal prune ratios (Table 1) and ablates soft vs
hard pruning (Sec. 4.3). Here the two dynamic baselines get InfoBatch's own budget: random
pruning keeps InfoBatch's per-epoch kept counts, hard pruning spreads InfoBatch's total
budget evenly over the epochs; their learning rate is tuned on validation exactly as the
method's is (experiment.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .infobatch import DynamicPruner


class FullData(DynamicPruner):
    """Plain training: every sample every epoch, weight 1 (the reference of every claim)."""

    def _select(self, epoch: int) -> np.ndarray:
        self.weights.fill_(1.0)
        return np.arange(self.num_samples)


class RandomPruning(DynamicPruner):
    """Random dynamic pruning: epoch t keeps ``keep_counts[t]`` uniformly drawn samples,
    weight 1 (the paper's "Random*" dynamic baseline, Table 1). Passing InfoBatch's own
    per-epoch kept counts gives the same per-epoch budget."""

    def __init__(self, dataset: Any, num_epochs: int, keep_counts: Sequence[int], **kw):
        super().__init__(dataset, num_epochs, **kw)
        if len(keep_counts) < num_epochs:
            raise ValueError(f"need {num_epochs} keep counts, got {len(keep_counts)}")
        self.keep_counts = [min(max(int(k), 1), self.num_samples) for k in keep_counts]

    def _select(self, epoch: int) -> np.ndarray:
        self.weights.fill_(1.0)
        return self.rng.choice(self.num_samples, self.keep_counts[epoch], replace=False)


class HardPruning(DynamicPruner):
    """Hard dynamic pruning: every epoch drops the ``prune_fraction`` of samples with the
    lowest scores (ties broken at random); no rescaling, no annealing (the "hard prune"
    variant of the paper's ablation)."""

    def __init__(self, dataset: Any, num_epochs: int, prune_fraction: float, **kw):
        super().__init__(dataset, num_epochs, **kw)
        if not 0.0 <= prune_fraction < 1.0:
            raise ValueError(f"prune_fraction must be in [0, 1), got {prune_fraction}")
        self.prune_fraction = float(prune_fraction)

    def _select(self, epoch: int) -> np.ndarray:
        self.weights.fill_(1.0)
        n_drop = int(round(self.prune_fraction * self.num_samples))
        perm = self.rng.permutation(self.num_samples)  # random tie-break among equal scores
        ranked = perm[np.argsort(self.scores.numpy()[perm], kind="stable")]
        return ranked[n_drop:]
