"""Data: (R, rho)-STEP imbalance of any labelled set, the UFM's label vectors, scikit-learn's
bundled digits (the default network experiment) and CIFAR-10/100 (the paper preset).

CIFAR is read from the standard "python version" pickles under
``<data-dir>/scl-relu/cifar-10-batches-py/`` and ``<data-dir>/scl-relu/cifar-100-python/``
(what torchvision's ``CIFAR10(root=<data-dir>/scl-relu, download=True)`` writes; ``--download``
lets it fetch them).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

from iclr24_common import MissingDataError, MissingDependencyError

CIFAR = {
    "cifar10": ("cifar-10-batches-py", [f"data_batch_{i}" for i in range(1, 6)], "test_batch",
                b"labels", 10),
    "cifar100": ("cifar-100-python", ["train"], "test", b"fine_labels", 100),
}  # fmt: skip
TARBALL = {"cifar10": "cifar-10-python.tar.gz", "cifar100": "cifar-100-python.tar.gz"}


def step_counts(k: int, n_major: int, ratio: float, minority_fraction: float = 0.5) -> list[int]:
    """Class sizes of (R, rho)-STEP imbalance: the first k - round(rho k) classes keep
    n_major examples, the last round(rho k) keep max(1, round(n_major / R))."""
    if ratio < 1:
        raise ValueError(f"imbalance ratio R must be >= 1, got {ratio}")
    n_min = int(round(k * minority_fraction))
    minor = max(1, int(round(n_major / ratio)))
    return [n_major] * (k - n_min) + [minor] * n_min


def ufm_labels(k: int, n_major: int, ratio: float, minority_fraction: float = 0.5) -> np.ndarray:
    """Labels of a STEP-imbalanced UFM: class c repeated step_counts(...)[c] times. -> (n,)"""
    counts = step_counts(k, n_major, ratio, minority_fraction)
    return np.repeat(np.arange(k), counts)


def step_imbalance(
    labels, ratio: float, minority_fraction: float = 0.5, seed: int = 0
) -> tuple[np.ndarray, list[int]]:
    """Subsample a labelled set to (R, rho)-STEP imbalance: every majority class keeps
    n_max = the smallest class size, the last round(rho k) classes keep n_max / R, drawn at
    random with ``seed``. labels: (n,) -> (kept indices sorted, majority classes)."""
    labels = np.asarray(labels, dtype=np.int64)
    classes, counts = np.unique(labels, return_counts=True)
    sizes = step_counts(len(classes), int(counts.min()), ratio, minority_fraction)
    rng = np.random.default_rng(seed)
    keep = [rng.choice(np.flatnonzero(labels == c), size=s, replace=False)
            for c, s in zip(classes, sizes)]  # fmt: skip
    majority = [int(c) for c, s in zip(classes, sizes) if s == sizes[0]]
    return np.sort(np.concatenate(keep)), majority


def load_digits_split(test_fraction: float = 0.3, seed: int = 0):
    """scikit-learn's bundled 8x8 digits (1797 images, 10 classes), pixels scaled to [0, 1],
    split per class into train and test. -> (X_train (n, 64), y_train, X_test, y_test)"""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    return train_test_split(X, y, test_size=test_fraction, stratify=y, random_state=seed)


def _unpickle(path: Path) -> dict:
    with open(path, "rb") as f:
        return pickle.load(f, encoding="bytes")


def cifar_files(root: str | Path, name: str) -> list[Path]:
    folder, train, test, _, _ = CIFAR[name]
    return [Path(root) / "scl-relu" / folder / f for f in [*train, test]]


def load_cifar(root: str | Path, name: str = "cifar10", download: bool = False):
    """CIFAR-10/100 from the python pickles under ``<root>/scl-relu/``.
    -> (X_train (50000, 32, 32, 3) uint8, y_train, X_test (10000, 32, 32, 3), y_test)"""
    if name not in CIFAR:
        raise ValueError(f"dataset must be one of {', '.join(CIFAR)}")
    folder, train, test, key, _ = CIFAR[name]
    files = cifar_files(root, name)
    if download and not all(p.exists() for p in files):
        try:
            import torchvision
        except ImportError:
            raise MissingDependencyError(
                "--download needs torchvision: pip install 'iclr24-scl-relu[paper]'"
            ) from None
        cls = torchvision.datasets.CIFAR10 if name == "cifar10" else torchvision.datasets.CIFAR100
        cls(root=str(Path(root) / "scl-relu"), train=True, download=True)
    missing = [p for p in files if not p.exists()]
    if missing:
        raise MissingDataError(
            f"{name} (python version)",
            missing,
            f"download https://www.cs.toronto.edu/~kriz/{TARBALL[name]} and extract it into "
            f"{Path(root) / 'scl-relu'}, or run with --download",
        )

    def read(parts):
        dicts = [_unpickle(Path(root) / "scl-relu" / folder / p) for p in parts]
        X = np.concatenate([d[b"data"] for d in dicts]).reshape(-1, 3, 32, 32)
        y = np.concatenate([np.asarray(d[key], dtype=np.int64) for d in dicts])
        return X.transpose(0, 2, 3, 1), y

    return (*read(train), *read([test]))


# SupContrast main_supcon.py: per-dataset normalisation
CIFAR_MEAN = {"cifar10": (0.4914, 0.4822, 0.4465), "cifar100": (0.5071, 0.4867, 0.4408)}
CIFAR_STD = {"cifar10": (0.2023, 0.1994, 0.2010), "cifar100": (0.2675, 0.2565, 0.2761)}


def augment_cifar(x, name: str = "cifar10", generator=None):
    """One random view per image, on the images' device, batched: SupContrast's training
    transform (RandomResizedCrop(32, scale=(0.2, 1)), horizontal flip, ColorJitter(0.4, 0.4,
    0.4) with p = 0.8, RandomGrayscale(p = 0.2), normalisation) without the hue jitter, with
    the jitters in a fixed order. x: (b, 32, 32, 3) uint8 -> (b, 3, 32, 32) float32"""
    import torch
    import torch.nn.functional as F

    x = x.permute(0, 3, 1, 2).float() / 255.0
    b, dev = x.shape[0], x.device

    def u(lo, hi, shape=(b,)):
        return lo + (hi - lo) * torch.rand(shape, device=dev, generator=generator)

    area = u(0.2, 1.0)
    aspect = torch.exp(u(np.log(3 / 4), np.log(4 / 3)))
    w, h = (area * aspect).sqrt().clamp(max=1.0), (area / aspect).sqrt().clamp(max=1.0)
    flip = torch.where(u(0, 1) < 0.5, -1.0, 1.0)
    theta = torch.zeros(b, 2, 3, device=dev)
    theta[:, 0, 0], theta[:, 1, 1] = w * flip, h
    theta[:, 0, 2], theta[:, 1, 2] = u(-1, 1) * (1 - w), u(-1, 1) * (1 - h)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
    weights = torch.tensor([0.299, 0.587, 0.114], device=dev).view(1, 3, 1, 1)
    jitter = (u(0, 1) < 0.8).view(b, 1, 1, 1)
    y = x * u(0.6, 1.4).view(b, 1, 1, 1)  # brightness
    mean = (y * weights).sum(1, keepdim=True).mean((2, 3), keepdim=True)
    y = ((y - mean) * u(0.6, 1.4).view(b, 1, 1, 1) + mean).clamp(0, 1)  # contrast
    gray = (y * weights).sum(1, keepdim=True)
    y = ((y - gray) * u(0.6, 1.4).view(b, 1, 1, 1) + gray).clamp(0, 1)  # saturation
    x = torch.where(jitter, y, x)
    gray = (x * weights).sum(1, keepdim=True).expand(-1, 3, -1, -1)
    x = torch.where((u(0, 1) < 0.2).view(b, 1, 1, 1), gray, x)
    mean_ = torch.tensor(CIFAR_MEAN[name], device=dev).view(1, 3, 1, 1)
    std_ = torch.tensor(CIFAR_STD[name], device=dev).view(1, 3, 1, 1)
    return (x - mean_) / std_


def cifar_test_view(x, name: str = "cifar10"):
    """The evaluation view: no augmentation, normalised. (b, 32, 32, 3) uint8 -> (b, 3, 32, 32)"""
    import torch

    x = x.permute(0, 3, 1, 2).float() / 255.0
    mean = torch.tensor(CIFAR_MEAN[name], device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(CIFAR_STD[name], device=x.device).view(1, 3, 1, 1)
    return (x - mean) / std
