"""Understanding Augmentation-based Self-Supervised Representation Learning via RKHS
Approximation and Regression (Zhai, Liu, Risteski, Kolter & Ravikumar, ICLR 2024),
https://arxiv.org/abs/2306.00788

An augmentation as an operator: its kernel, spectrum, RKHS, isometry constant and
augmentation complexity kappa, computed exactly on finite spaces (kappa by Monte Carlo on
long sequences); the ideal and the finite-sample encoders, linear probes, and the error
decomposition into estimation and approximation terms.
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .aug_rkhs import (
    FiniteAugmentation,
    Spectrum,
    constrained_probe,
    kernel_pca_encoder,
    kernel_pca_encoder_counts,
    mask_augmentation,
    mask_eigenvalues_product,
    mask_kappa_sq_product,
    mask_log_kernel_diagonal_markov,
    mask_log_kernel_diagonal_mc,
    mask_trace,
    nystrom_encoder,
    predict,
    replacement_augmentation,
    replacement_kappa_sq_uniform,
    ridge_probe,
)
from .bounds import (
    approximation_bound,
    approximation_bound_l2,
    estimation_bound,
    finite_sample_error_bound,
    probe_error_bound,
    trace_gap_approximation_bound,
    trace_gap_sample_bound,
)
from .data import (
    Corpus,
    FiniteSpace,
    MarkovChain,
    enumerate_sequences,
    load_corpus,
    load_pydoc_topics,
    random_target,
    tokenize_chars,
    topic_mixture,
    topic_target,
)

__version__ = "0.1.0"

__all__ = [
    "Corpus",
    "FiniteAugmentation",
    "FiniteSpace",
    "MarkovChain",
    "Spectrum",
    "approximation_bound",
    "approximation_bound_l2",
    "constrained_probe",
    "enumerate_sequences",
    "estimation_bound",
    "finite_sample_error_bound",
    "load_corpus",
    "load_pydoc_topics",
    "mask_augmentation",
    "mask_eigenvalues_product",
    "mask_kappa_sq_product",
    "mask_log_kernel_diagonal_markov",
    "mask_log_kernel_diagonal_mc",
    "mask_trace",
    "kernel_pca_encoder",
    "kernel_pca_encoder_counts",
    "nystrom_encoder",
    "predict",
    "probe_error_bound",
    "random_target",
    "replacement_augmentation",
    "replacement_kappa_sq_uniform",
    "ridge_probe",
    "tokenize_chars",
    "trace_gap_approximation_bound",
    "trace_gap_sample_bound",
    "topic_mixture",
    "topic_target",
]
