"""The baselines: each experiment with the paper's ingredient switched off.

* UFM (no ReLU) is :class:`~iclr24_scl_relu.scl_relu.UFM`, the classic unconstrained-features
  model of SCL (Graf et al., ICML 2021); the network without the final ReLU is
  ``SCLNet(relu=False)``, the standard SupCon head (HobbitLong/SupContrast).
* Batching without binding: random batches, one fixed partition (the UFM experiment) or
  reshuffled every epoch (networks), as in every SupCon training loop.
"""

from __future__ import annotations

import numpy as np


def random_batches(n: int, batch_size: int, seed: int) -> list[list[int]]:
    """A random partition of range(n) into batches of ``batch_size`` (the last may be
    smaller): batch-shuffling, the batching the paper compares binding against."""
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    order = np.random.default_rng(seed).permutation(n)
    return [order[i : i + batch_size].tolist() for i in range(0, n, batch_size)]
