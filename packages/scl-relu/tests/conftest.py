"""Shared test helpers: a tiny fake CIFAR-10 in the python-pickle format."""

import pickle

import numpy as np
import pytest


@pytest.fixture
def write_cifar():
    """write_cifar(root, n_train, n_test) writes ``<root>/scl-relu/cifar-10-batches-py`` with
    random images; returns the test batch's dict."""
    return _write_cifar


def _write_cifar(root, n_train=20, n_test=10):
    folder = root / "scl-relu" / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for i, name in enumerate([f"data_batch_{j}" for j in range(1, 6)] + ["test_batch"]):
        n = n_test if name == "test_batch" else n_train
        d = {b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
             b"labels": [(i + j) % 10 for j in range(n)]}  # fmt: skip
        with open(folder / name, "wb") as f:
            pickle.dump(d, f)
    return d
