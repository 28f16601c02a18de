"""Label-noise generators of the official ``LabelWave/noise_build.py`` (tmllab/2024_ICLR_LabelWave):
symmetric, pair-flip and instance-dependent (Xia et al., NeurIPS 2020) noise.

They consume a ``numpy.random.RandomState(seed)`` in the order the official builders consume
theirs (one multinomial draw per example in dataset order for the class-conditional kinds;
truncated-normal flip rates, then the projection W, then one choice per example for the
instance kind), so the same seed and inputs give the same noisy labels
(tests/test_labelwave_noise.py holds the official builder's outputs as fixtures).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("sym", "pair", "instance")


@dataclass(frozen=True)
class NoisyLabels:
    labels: np.ndarray
    """(n,) the noisy labels."""
    transition: np.ndarray
    """(C, C) the realised transition matrix: row i, the fractions of class i given label j."""
    nominal: np.ndarray | None
    """(C, C) the transition matrix sampled from (None for instance noise: one per example)."""

    rate: float
    """The realised noise rate: the fraction of examples whose label changed."""


def symmetric_matrix(rate: float, num_classes: int) -> np.ndarray:
    """1 - rate on the diagonal, rate / (C - 1) elsewhere (noisify_multiclass_symmetric)."""
    P = np.full((num_classes, num_classes), rate / (num_classes - 1))
    np.fill_diagonal(P, 1.0 - rate)
    return P


def pair_matrix(rate: float, num_classes: int) -> np.ndarray:
    """Class i keeps its label with 1 - rate and becomes i + 1 (mod C) with rate (noisify_pairflip)."""
    P = np.eye(num_classes) * (1.0 - rate)
    P[np.arange(num_classes), (np.arange(num_classes) + 1) % num_classes] = rate
    return P


def sample_from_matrix(labels: np.ndarray, P: np.ndarray, seed: int) -> np.ndarray:
    """One multinomial draw per example, in dataset order, from row P[y_i] (multiclass_noisify)."""
    rng = np.random.RandomState(seed)
    return np.array([np.argmax(rng.multinomial(1, P[y], 1)[0]) for y in labels], dtype=np.int64)


def instance_noise(
    features: np.ndarray, labels: np.ndarray, rate: float, num_classes: int, seed: int,
    norm_std: float = 0.1,
) -> np.ndarray:  # fmt: skip
    """Instance-dependent noise (Xia et al. 2020, get_instance_noisy_label; norm_std 0.1 as
    official): flip rate q_i ~ N(rate, norm_std^2) truncated to [0, 1]; W ~ N(0, 1) of shape
    (C, D, C); p_i = q_i softmax(x_i W[y_i]) with the true class masked out, plus 1 - q_i on y_i.
    features: (n, ...) raw inputs, flattened to D; labels: (n,)."""
    from scipy import stats

    rng = np.random.RandomState(seed)
    n = len(labels)
    x = np.asarray(features, dtype=np.float32).reshape(n, -1)  # (n, D)
    a, b = (0 - rate) / norm_std, (1 - rate) / norm_std
    q = stats.truncnorm(a, b, loc=rate, scale=norm_std).rvs(n, random_state=rng)  # (n,)
    W = rng.randn(num_classes, x.shape[1], num_classes).astype(np.float32)  # (C, D, C)
    scores = np.einsum("nd,ndc->nc", x, W[labels])  # (n, C), float32 as the official torch mm
    scores[np.arange(n), labels] = -np.inf
    scores = np.exp(scores - scores.max(axis=1, keepdims=True))
    P = (q[:, None] * (scores / scores.sum(axis=1, keepdims=True))).astype(np.float32)
    P[np.arange(n), labels] += (1 - q).astype(np.float32)
    return np.array([rng.choice(num_classes, p=P[i]) for i in range(n)], dtype=np.int64)


def make_noisy_labels(
    labels: np.ndarray, kind: str, rate: float, num_classes: int, seed: int,
    features: np.ndarray | None = None,
) -> NoisyLabels:  # fmt: skip
    """Noisy labels of ``kind`` (sym, pair or instance) at ``rate``, with the realised and the
    nominal transition matrices. Instance noise needs the raw ``features``."""
    labels = np.asarray(labels, dtype=np.int64)
    if kind not in KINDS:
        raise ValueError(f"noise kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"noise rate must lie in [0, 1), got {rate}")
    if rate == 0.0:
        noisy, nominal = labels.copy(), np.eye(num_classes)
    elif kind == "instance":
        if features is None:
            raise ValueError("instance noise needs the features")
        noisy, nominal = instance_noise(features, labels, rate, num_classes, seed), None
    else:
        make = symmetric_matrix if kind == "sym" else pair_matrix
        nominal = make(rate, num_classes)
        noisy = sample_from_matrix(labels, nominal, seed)
    counts = np.zeros((num_classes, num_classes))
    np.add.at(counts, (labels, noisy), 1)
    realised = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    return NoisyLabels(noisy, realised, nominal, float(np.mean(noisy != labels)))
