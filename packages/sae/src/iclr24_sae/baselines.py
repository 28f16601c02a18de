"""The paper's baselines: PCA, ICA (scikit-learn FastICA, as the official ``autoencoders/
ica.py``), the neuron (standard) basis and random directions.

Each is a :class:`Basis`: unit directions ``(m, d)`` (its dictionary, for MMCS) and an
encoder giving signed codes ``(n, m)``. Like the official ``to_nneg_dict`` /
``to_topk_dict``, a signed direction counts as two features, its positive and its negative
half (:meth:`Basis.features`), so every baseline gets a non-negative code as an SAE has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class Basis:
    name: str
    directions: np.ndarray
    """Dictionary atoms ``(m, d)``, unit rows."""
    encode: Callable[[np.ndarray], np.ndarray]
    """Inputs ``(n, d)`` to signed codes ``(n, m)``."""

    def features(self, x: np.ndarray) -> np.ndarray:
        """Non-negative feature activations ``(n, 2m)``: ``[relu(codes), relu(-codes)]``."""
        c = self.encode(x)
        return np.concatenate([np.maximum(c, 0), np.maximum(-c, 0)], axis=1)


def _unit(w: np.ndarray) -> np.ndarray:
    return w / np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-12)


def pca_basis(x: np.ndarray) -> Basis:
    """All principal directions of ``x``, by decreasing variance (official ``BatchedPCA``:
    eigenvectors of the covariance); codes are projections of the centred input."""
    mean = x.mean(0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    return Basis("pca", vt, lambda z: (z - mean) @ vt.T)


def ica_basis(x: np.ndarray, seed: int = 0, max_iter: int = 200) -> Basis:
    """FastICA after standardising (official: ``StandardScaler`` then ``FastICA()`` with
    scikit-learn's defaults: as many components as dimensions, 200 iterations, tol 1e-4).
    Dictionary atoms: the mixing matrix's columns mapped back to the input space (the
    directions the sources add to ``x``); codes: the estimated sources."""
    import warnings

    from sklearn.decomposition import FastICA
    from sklearn.exceptions import ConvergenceWarning

    mean, scale = x.mean(0), x.std(0) + 1e-8
    ica = FastICA(whiten="unit-variance", random_state=seed, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ica.fit((x - mean) / scale)
    atoms = _unit((ica.mixing_ * scale[:, None]).T)  # (m, d)
    return Basis("ica", atoms, lambda z: ica.transform((z - mean) / scale))


def neuron_basis(d: int) -> Basis:
    """The standard basis: each activation dimension is a feature."""
    return Basis("neurons", np.eye(d), lambda z: np.asarray(z, np.float64))


def random_basis(d: int, m: int, seed: int = 0) -> Basis:
    """``m`` random unit directions (Gaussian, normalised)."""
    w = _unit(np.random.default_rng(seed).standard_normal((m, d)))
    return Basis("random", w, lambda z: np.asarray(z, np.float64) @ w.T)
