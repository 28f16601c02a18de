"""Data: scikit-learn's bundled/generated tasks (smoke, default) and CIFAR-10/100 (paper).

Every loader returns a :class:`Split` of tensors (features/images and integer labels). The
CIFAR loader reads the standard "python version" pickles that torchvision (and the CIFAR
web page) provide; ``download=True`` lets torchvision fetch them.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from iclr24_common import MissingDataError


@dataclass
class Split:
    """A train/test split as tensors."""

    x_train: torch.Tensor
    """(N, ...) float32 inputs."""
    y_train: torch.Tensor
    """(N,) int64 labels."""
    x_test: torch.Tensor
    """(M, ...) float32 inputs."""
    y_test: torch.Tensor
    """(M,) int64 labels."""
    num_classes: int
    """Number of classes."""
    name: str
    """Dataset name."""

    def to(self, device) -> Split:
        return Split(self.x_train.to(device), self.y_train.to(device), self.x_test.to(device),
                     self.y_test.to(device), self.num_classes, self.name)  # fmt: skip


def _standardised_split(x: np.ndarray, y: np.ndarray, test_size: float, name: str) -> Split:
    from sklearn.model_selection import train_test_split

    # A fixed split (random_state=0) for every seed: seeds vary the model and the data order.
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_size, random_state=0, stratify=y)
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6
    t = lambda a: torch.as_tensor((a - mu) / sd, dtype=torch.float32)  # noqa: E731
    return Split(t(xtr), torch.as_tensor(ytr, dtype=torch.long), t(xte),
                 torch.as_tensor(yte, dtype=torch.long), int(y.max()) + 1, name)  # fmt: skip


def load_digits_split() -> Split:
    """scikit-learn's bundled 8x8 digits: 1797 samples, 64 features, 10 classes (75/25)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return _standardised_split(d.data.astype(np.float64), d.target, 0.25, "digits")


def make_classification_split(n_samples: int = 5000) -> Split:
    """A generated harder task: 20 features (10 informative), 4 classes, class_sep 0.8,
    2% flipped labels (80/20 split)."""
    from sklearn.datasets import make_classification

    x, y = make_classification(
        n_samples=n_samples, n_features=20, n_informative=10, n_redundant=5, n_classes=4,
        n_clusters_per_class=2, class_sep=0.8, flip_y=0.02, random_state=0,
    )  # fmt: skip
    return _standardised_split(x, y, 0.2, "classification")


# -- CIFAR ------------------------------------------------------------------------------
# Normalisation statistics of the official examples (cifar10_example.py / cifar100 example).
CIFAR_STATS = {
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    "cifar100": ((0.5074, 0.4867, 0.4411), (0.2011, 0.1987, 0.2025)),
}
_CIFAR_FILES = {
    "cifar10": (
        "cifar-10-batches-py",
        [f"data_batch_{i}" for i in range(1, 6)],
        ["test_batch"],
        b"labels",
    ),
    "cifar100": ("cifar-100-python", ["train"], ["test"], b"fine_labels"),
}


def _read_batches(paths: list[Path], label_key: bytes) -> tuple[torch.Tensor, torch.Tensor]:
    xs, ys = [], []
    for p in paths:
        with open(p, "rb") as f:
            d = pickle.load(f, encoding="bytes")
        xs.append(np.asarray(d[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
        ys.append(np.asarray(d[label_key], dtype=np.int64))
    return torch.from_numpy(np.concatenate(xs)), torch.from_numpy(np.concatenate(ys))


def load_cifar(root: str | Path, name: str = "cifar10", download: bool = False) -> Split:
    """CIFAR-10/100 from ``root`` (the folder holding ``cifar-10-batches-py`` or
    ``cifar-100-python``), normalised with the official example's statistics.
    Images are (N, 3, 32, 32) float32."""
    if name not in _CIFAR_FILES:
        raise ValueError(f"unknown CIFAR dataset {name!r}; use cifar10 or cifar100")
    folder, train_names, test_names, label_key = _CIFAR_FILES[name]
    base = Path(root) / folder
    needed = [base / n for n in train_names + test_names]
    if not all(p.exists() for p in needed) and download:
        import torchvision

        cls = torchvision.datasets.CIFAR10 if name == "cifar10" else torchvision.datasets.CIFAR100
        cls(str(root), train=True, download=True)
        cls(str(root), train=False, download=True)
    missing = [p for p in needed if not p.exists()]
    if missing:
        raise MissingDataError(
            f"{name.upper()} (python version)", missing,
            f"download {'cifar-10' if name == 'cifar10' else 'cifar-100'}-python.tar.gz from "
            f"https://www.cs.toronto.edu/~kriz/cifar.html and extract it into {root}, "
            "or rerun with --download",
        )  # fmt: skip
    xtr, ytr = _read_batches([base / n for n in train_names], label_key)
    xte, yte = _read_batches([base / n for n in test_names], label_key)
    mean, std = (torch.tensor(s).view(1, 3, 1, 1) for s in CIFAR_STATS[name])
    norm = lambda x: (x.float() / 255.0 - mean) / std  # noqa: E731
    return Split(norm(xtr), ytr, norm(xte), yte, 10 if name == "cifar10" else 100, name)


def augment_crop_flip(x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """The official train transform, batched: RandomCrop(32, padding=4, reflect) and
    RandomHorizontalFlip. x: (B, C, H, W) -> (B, C, H, W)."""
    b, c, h, w = x.shape
    pad = 4
    xp = F.pad(x, (pad, pad, pad, pad), mode="reflect")  # (B, C, H+8, W+8)
    kw = {"device": x.device}
    oy = torch.randint(0, 2 * pad + 1, (b,), generator=generator).to(**kw)
    ox = torch.randint(0, 2 * pad + 1, (b,), generator=generator).to(**kw)
    rows = (oy[:, None] + torch.arange(h, **kw))[:, None, :, None]  # (B, 1, H, 1)
    cols = (ox[:, None] + torch.arange(w, **kw))[:, None, None, :]  # (B, 1, 1, W)
    bi = torch.arange(b, **kw)[:, None, None, None]
    ci = torch.arange(c, **kw)[None, :, None, None]
    out = xp[bi, ci, rows, cols]  # (B, C, H, W)
    flip = (torch.rand(b, generator=generator) < 0.5).to(x.device)[:, None, None, None]
    return torch.where(flip, out.flip(3), out)
