"""Seeding: one call makes Python, NumPy and torch (CPU and CUDA) draws reproducible."""

from __future__ import annotations

import os
import random

import numpy as np


def seed_everything(seed: int, deterministic: bool = False) -> np.random.Generator:
    """Seed Python's `random`, NumPy's global RNG and torch (CPU and every CUDA device).

    With ``deterministic=True`` torch is also asked for deterministic kernels (cuDNN
    benchmark off, ``torch.use_deterministic_algorithms(True, warn_only=True)``), which
    can be slower. Returns a fresh ``numpy.random.Generator`` seeded with ``seed`` for
    code that prefers an explicit generator over global state.
    """
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (legacy global RNG, still used by libraries)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import torch
    except ImportError:
        return np.random.default_rng(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        # cuBLAS needs this workspace setting for deterministic matmuls on CUDA >= 10.2.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        torch.use_deterministic_algorithms(True, warn_only=True)
    return np.random.default_rng(seed)
