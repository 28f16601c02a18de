"""Data: scikit-learn's bundled digits (default), and CIFAR-10/100 from their python pickles
(paper preset, ``<data-dir>/labelwave/cifar-10-batches-py`` or ``cifar-100-python``).

Every split is ``(x, y)`` with x float32 of shape (n, ...) and y int64 of shape (n,); the raw
inputs (``raw``) are what the instance-dependent noise projects, as the official builder
projects raw image bytes.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr24_common import MissingDataError

CIFAR_FOLDERS = {"cifar10": "cifar-10-batches-py", "cifar100": "cifar-100-python"}
CIFAR_ARCHIVES = {"cifar10": "cifar-10-python.tar.gz", "cifar100": "cifar-100-python.tar.gz"}
# per-channel mean and std of the official loader (labelwave_cifar10_dataloader.py)
CIFAR_MEAN = np.array([0.4914, 0.4822, 0.4465], dtype=np.float32)
CIFAR_STD = np.array([0.2023, 0.1994, 0.2010], dtype=np.float32)


@dataclass(frozen=True)
class Dataset:
    x_train: np.ndarray  # (n, ...) float32, normalised
    raw_train: np.ndarray  # (n, ...) the raw inputs (for instance-dependent noise)
    y_train: np.ndarray  # (n,) clean labels
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int


def load_digits_split(seed: int, test_fraction: float = 0.3) -> Dataset:
    """sklearn's 8x8 digits (1797 images, 10 classes), a seeded train / test split; pixels
    0..16 scaled to [0, 1]."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    test, train = order[:n_test], order[n_test:]
    scaled = (x / 16.0).astype(np.float32)  # (1797, 64)
    return Dataset(scaled[train], x[train], y[train].astype(np.int64), scaled[test],
                   y[test].astype(np.int64), 10)  # fmt: skip


def _unpickle(path: Path) -> dict:
    with open(path, "rb") as f:
        return pickle.load(f, encoding="bytes")


def load_cifar(root: str | Path, name: str) -> Dataset:
    """CIFAR-10 or -100 from the python pickles under ``<root>/labelwave/``; images (n, 3, 32, 32)
    normalised with the official mean and std."""
    folder = Path(root) / "labelwave" / CIFAR_FOLDERS[name]
    if name == "cifar10":
        files, test_file, key = [f"data_batch_{i}" for i in range(1, 6)], "test_batch", b"labels"
    else:
        files, test_file, key = ["train"], "test", b"fine_labels"
    missing = [folder / f for f in [*files, test_file] if not (folder / f).exists()]
    if missing:
        raise MissingDataError(
            f"{name} (python version)", missing,
            f"download https://www.cs.toronto.edu/~kriz/{CIFAR_ARCHIVES[name]} and unpack it "
            f"into {folder.parent}",
        )  # fmt: skip
    train = [_unpickle(folder / f) for f in files]
    test = _unpickle(folder / test_file)
    raw = np.concatenate([d[b"data"] for d in train]).reshape(-1, 3, 32, 32)  # (50000, 3, 32, 32)
    y = np.concatenate([d[key] for d in train]).astype(np.int64)
    raw_test = np.asarray(test[b"data"]).reshape(-1, 3, 32, 32)

    def norm(images):
        return ((images / 255.0 - CIFAR_MEAN[:, None, None]) / CIFAR_STD[:, None, None]).astype(
            np.float32
        )

    return Dataset(norm(raw), raw.transpose(0, 2, 3, 1), y, norm(raw_test),
                   np.asarray(test[key], dtype=np.int64), 10 if name == "cifar10" else 100)  # fmt: skip


def holdout_split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, validation) holding out ``fraction`` of the noisy training set at random
    (as the official loader did at its first commit 178a761: 20% with np.random.choice, the
    validation labels noisy; since 19f9dbc, 2024-12-31, it holds out nothing)."""
    rng = np.random.default_rng(seed + 10_000)
    val = np.sort(rng.choice(n, int(round(fraction * n)), replace=False))
    return np.setdiff1d(np.arange(n), val), val
