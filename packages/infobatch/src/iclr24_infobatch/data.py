"""Data: a generated task far from 100% (default claims), scikit-learn's bundled digits (a
saturated check), and CIFAR-10/100 (the paper preset).

Every loader returns a :class:`Split` of tensors (features/images and integer labels). The
CIFAR loader reads the standard "python version" pickles that torchvision (and the CIFAR
web page) provide, from ``<data-dir>/infobatch/`` (or a torchvision root given as
``--data-dir`` itself); ``download=True`` lets torchvision fetch them.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from iclr24_common import MissingDataError, MissingDependencyError

SLUG = "infobatch"


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

    def validation(self, fraction: float, seed: int) -> Split:
        """A split of the training set only: ``fraction`` of it (drawn with ``seed``) becomes
        the evaluation set, for tuning; the test set is never looked at."""
        n = len(self.y_train)
        perm = torch.from_numpy(np.random.default_rng(seed).permutation(n))
        n_val = max(1, int(round(fraction * n)))
        va, tr = perm[:n_val], perm[n_val:]
        return Split(self.x_train[tr], self.y_train[tr], self.x_train[va], self.y_train[va],
                     self.num_classes, f"{self.name}-validation")  # fmt: skip


def _standardised(xtr: np.ndarray, ytr, xte: np.ndarray, yte, k: int, name: str) -> Split:
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6  # statistics of the training split only
    t = lambda a: torch.as_tensor((a - mu) / sd, dtype=torch.float32)  # noqa: E731
    y = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.long)  # noqa: E731
    return Split(t(xtr), y(ytr), t(xte), y(yte), k, name)


def load_digits_split() -> Split:
    """scikit-learn's bundled 8x8 digits: 1797 samples, 64 features, 10 classes; a fixed
    stratified 75/25 split (the same for every seed: seeds vary the model and the order)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    xtr, xte, ytr, yte = train_test_split(d.data.astype(np.float64), d.target, test_size=0.25,
                                          random_state=0, stratify=d.target)  # fmt: skip
    return _standardised(xtr, ytr, xte, yte, 10, "digits")


@dataclass(frozen=True)
class Mixture:
    """A generated classification task that a small MLP does not saturate.

    Each class is a mixture of ``clusters`` unit-variance Gaussian blobs whose centres are
    drawn from N(0, separation^2) in ``informative`` dimensions; a random rotation mixes
    them into the first ``informative`` features and ``noise_features`` pure-noise features
    follow; a ``label_noise`` fraction of the labels is redrawn uniformly. Classes overlap,
    so even the Bayes rule stays far below 100% (:meth:`bayes_accuracy`). The task is fixed
    by ``seed``: a run's seeds vary the model, the prune draws and the order.
    """

    num_classes: int = 10
    clusters: int = 4
    informative: int = 12
    noise_features: int = 28
    separation: float = 1.2
    label_noise: float = 0.05
    seed: int = 0

    def draw(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``n`` samples: features (n, informative + noise_features), labels (n,), the blob
        coordinates before rotation (n, informative) and the centres (K, clusters, informative)."""
        rng = np.random.default_rng(self.seed)
        k, c, d = self.num_classes, self.clusters, self.informative
        centres = rng.normal(0.0, self.separation, (k, c, d))
        y = rng.integers(0, k, n)
        z = centres[y, rng.integers(0, c, n)] + rng.normal(size=(n, d))
        rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
        x = np.concatenate([z @ rotation, rng.normal(size=(n, self.noise_features))], axis=1)
        flip = rng.random(n) < self.label_noise
        return x, np.where(flip, rng.integers(0, k, n), y), z, centres

    def split(self, n_train: int, n_test: int) -> Split:
        x, y, _, _ = self.draw(n_train + n_test)
        return _standardised(x[:n_train], y[:n_train], x[n_train:], y[n_train:],
                             self.num_classes, "mixture")  # fmt: skip

    def bayes_accuracy(self, n: int) -> float:
        """Accuracy (%) of the Bayes rule (the true class densities) on ``n`` drawn samples:
        the ceiling of any classifier on this task."""
        _, y, z, centres = self.draw(n)
        d2 = ((z[:, None, None, :] - centres[None]) ** 2).sum(-1)  # (n, K, clusters)
        log_density = np.logaddexp.reduce(-0.5 * d2, axis=2)  # equal cluster weights
        return 100.0 * float(np.mean(log_density.argmax(1) == y))


def make_mixture_split(n_train: int = 20_000, n_test: int = 5_000, **task) -> Split:
    """The generated task of the default preset (see :class:`Mixture`)."""
    return Mixture(**task).split(n_train, n_test)


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


def cifar_roots(data_dir: str | Path) -> list[Path]:
    """Where CIFAR is looked for: ``<data-dir>/infobatch/`` (the convention, and where
    ``--download`` puts it), then ``<data-dir>`` itself as a torchvision root."""
    return [Path(data_dir) / SLUG, Path(data_dir)]


def download_cifar(root: Path, name: str) -> None:
    """Fetch CIFAR through torchvision's own loader into ``root`` (the [paper] extra)."""
    try:
        import torchvision
    except ImportError:
        raise MissingDependencyError(
            '--download needs torchvision: pip install "iclr24-infobatch[paper]"'
        ) from None
    cls = torchvision.datasets.CIFAR10 if name == "cifar10" else torchvision.datasets.CIFAR100
    for train in (True, False):
        cls(str(root), train=train, download=True)


def locate_cifar(data_dir: str | Path, name: str = "cifar10", download: bool = False) -> Path:
    """The folder holding CIFAR-10/100's python pickles: under ``<data_dir>/infobatch/`` (the
    convention) or ``data_dir`` itself (a torchvision root). With ``download`` a missing set
    is fetched into ``<data_dir>/infobatch/``; else :class:`MissingDataError` says what is
    missing, where it looked and how to get it."""
    if name not in _CIFAR_FILES:
        raise ValueError(f"unknown CIFAR dataset {name!r}; use cifar10 or cifar100")
    folder, train_names, test_names, _ = _CIFAR_FILES[name]
    roots = cifar_roots(data_dir)
    complete = lambda r: all((r / folder / n).exists() for n in train_names + test_names)  # noqa: E731
    if download and not any(complete(r) for r in roots):
        download_cifar(roots[0], name)
    for r in roots:
        if complete(r):
            return r / folder
    raise MissingDataError(
        f"{name.upper()} (python version)", [r / folder for r in roots],
        f"download {'cifar-10' if name == 'cifar10' else 'cifar-100'}-python.tar.gz from "
        f"https://www.cs.toronto.edu/~kriz/cifar.html and extract it into {roots[0]}, "
        "or rerun with --download",
    )  # fmt: skip


def load_cifar(data_dir: str | Path, name: str = "cifar10", download: bool = False) -> Split:
    """CIFAR-10/100 (see :func:`locate_cifar` for where), normalised with the official
    example's statistics. Images are (N, 3, 32, 32) float32."""
    base = locate_cifar(data_dir, name, download)
    _, train_names, test_names, label_key = _CIFAR_FILES[name]
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
