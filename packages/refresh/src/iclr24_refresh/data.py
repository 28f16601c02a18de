"""Data: the default streams (Split-Digits from scikit-learn's bundled ``load_digits``, and a
generated Gaussian-mixture class-incremental stream) and the paper's image benchmarks
(Split CIFAR-10, Split CIFAR-100, Split Tiny-ImageNet) read from local files.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr24_common import MissingDataError

from .continual import Task, split_by_class


@dataclass(frozen=True)
class Stream:
    """A class-incremental benchmark: its tasks and the input shape / class count."""

    name: str
    tasks: list[Task]
    n_classes: int
    input_shape: tuple[int, ...]


def split_digits(test_fraction: float = 0.3, split_seed: int = 0) -> Stream:
    """Split-Digits: the 1,797 8x8 digits of ``sklearn.datasets.load_digits``, pixels scaled
    to [0, 1], one fixed stratified train/test split, 5 tasks of 2 classes (0-1, 2-3, ...)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=test_fraction, stratify=y, random_state=split_seed
    )
    return Stream("digits", split_by_class(Xtr, ytr, Xte, yte, 2), 10, (64,))


def gaussian_mixture(
    n_classes: int = 20,
    classes_per_task: int = 2,
    dim: int = 20,
    components: int = 2,
    spread: float = 1.2,
    n_train: int = 200,
    n_test: int = 100,
    seed: int = 0,
) -> Stream:
    """A generated class-incremental stream: class c is an equal mixture of ``components``
    unit-covariance Gaussians in ``dim`` dimensions with means drawn from N(0, spread^2 I)
    (so classes overlap and are not linearly separable); ``n_train`` / ``n_test`` examples
    per class; tasks of ``classes_per_task`` classes in class order. One fixed draw per
    ``seed`` (the benchmark, not the run)."""
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, spread, size=(n_classes, components, dim))

    def draw(n):
        y = np.repeat(np.arange(n_classes), n)
        k = rng.integers(0, components, size=y.size)
        x = means[y, k] + rng.standard_normal((y.size, dim))
        return x.astype(np.float32), y

    (Xtr, ytr), (Xte, yte) = draw(n_train), draw(n_test)
    return Stream("gmm", split_by_class(Xtr, ytr, Xte, yte, classes_per_task), n_classes, (dim,))


# ------------------------------------------------------------------ the paper's benchmarks
PAPER_DATASETS = {
    # name: (folder under <data-dir>/refresh/, classes, classes per task, how to get it)
    "cifar10": ("cifar-10-batches-py", 10, 2,
                "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz (extract there)"),
    "cifar100": ("cifar-100-python", 100, 10,
                 "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz (extract there)"),
    "tinyimg": ("tiny-imagenet-200", 200, 20,
                "http://cs231n.stanford.edu/tiny-imagenet-200.zip (extract there)"),
}  # fmt: skip

MEANS_STDS = {  # mammoth's per-dataset normalisation (datasets/seq_*.py)
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2615)),
    "cifar100": ((0.5071, 0.4867, 0.4408), (0.2675, 0.2565, 0.2761)),
    "tinyimg": ((0.4802, 0.4480, 0.3975), (0.2770, 0.2691, 0.2821)),
}


def _unpickle(path: Path) -> dict:
    with open(path, "rb") as f:
        return pickle.load(f, encoding="latin1")


def _cifar(folder: Path, name: str):
    if name == "cifar10":
        parts = [_unpickle(folder / f"data_batch_{i}") for i in range(1, 6)]
        xtr = np.concatenate([p["data"] for p in parts])
        ytr = np.concatenate([p["labels"] for p in parts])
        te = _unpickle(folder / "test_batch")
        xte, yte = te["data"], np.asarray(te["labels"])
    else:
        tr, te = _unpickle(folder / "train"), _unpickle(folder / "test")
        xtr, ytr = tr["data"], np.asarray(tr["fine_labels"])
        xte, yte = te["data"], np.asarray(te["fine_labels"])
    shape = (-1, 3, 32, 32)
    return xtr.reshape(shape), ytr, xte.reshape(shape), yte


def _tiny(folder: Path):
    from PIL import Image

    wnids = sorted(p.name for p in (folder / "train").iterdir() if p.is_dir())
    cls = {w: i for i, w in enumerate(wnids)}
    load = lambda p: np.asarray(Image.open(p).convert("RGB")).transpose(2, 0, 1)  # noqa: E731
    xtr, ytr = [], []
    for w in wnids:
        for p in sorted((folder / "train" / w / "images").glob("*.JPEG")):
            xtr.append(load(p))
            ytr.append(cls[w])
    xte, yte = [], []
    for line in (folder / "val" / "val_annotations.txt").read_text().splitlines():
        fname, wnid = line.split("\t")[:2]
        xte.append(load(folder / "val" / "images" / fname))
        yte.append(cls[wnid])
    # C-contiguous (n, 3, 64, 64): stacking the transposed HWC images keeps their channels-last
    # strides, on which torch 2.15's CPU convolution backward corrupted the heap (found by the
    # paper-path test)
    xtr, xte = np.ascontiguousarray(np.stack(xtr)), np.ascontiguousarray(np.stack(xte))
    return xtr, np.asarray(ytr), xte, np.asarray(yte)


def load_paper_dataset(name: str, root: str | Path) -> Stream:
    """Split CIFAR-10 (5x2), CIFAR-100 (10x10) or Tiny-ImageNet (10x20) from
    ``<root>/refresh/<folder>``: CIFAR's python pickles, Tiny-ImageNet's original folder
    layout (train/<wnid>/images, val/val_annotations.txt). Inputs normalised as mammoth's
    test transform; the training augmentation is :func:`crop_flip`."""
    folder_name, n_classes, per_task, how = PAPER_DATASETS[name]
    folder = Path(root) / "refresh" / folder_name
    marker = {"cifar10": "test_batch", "cifar100": "test", "tinyimg": "wnids.txt"}[name]
    if not (folder / marker).exists():
        raise MissingDataError(f"{name} ({folder_name})", [folder / marker], how)
    xtr, ytr, xte, yte = _tiny(folder) if name == "tinyimg" else _cifar(folder, name)
    mean, std = (np.asarray(v, dtype=np.float32).reshape(1, 3, 1, 1) for v in MEANS_STDS[name])
    norm = lambda a: ((a.astype(np.float32) / 255.0) - mean) / std  # noqa: E731
    tasks = split_by_class(norm(xtr), ytr, norm(xte), yte, per_task)
    return Stream(name, tasks, n_classes, tuple(xtr.shape[1:]))


def crop_flip(x: torch.Tensor, gen: torch.Generator, pad: int = 4) -> torch.Tensor:
    """RandomCrop(H, padding=4) + RandomHorizontalFlip on a batch (n, C, H, W), vectorised
    (mammoth's training transform for CIFAR / Tiny-ImageNet, applied after normalisation
    with zero padding: a simplification of padding before normalising)."""
    n, _, h, w = x.shape
    padded = torch.nn.functional.pad(x, (pad, pad, pad, pad))
    dy = torch.randint(0, 2 * pad + 1, (n,), generator=gen)
    dx = torch.randint(0, 2 * pad + 1, (n,), generator=gen)
    rows = (dy[:, None] + torch.arange(h)[None]).to(x.device)  # (n, h)
    cols = (dx[:, None] + torch.arange(w)[None]).to(x.device)  # (n, w)
    i = torch.arange(n, device=x.device)[:, None, None]
    out = padded.permute(0, 2, 3, 1)[i, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)
    flip = (torch.rand(n, generator=gen) < 0.5).to(x.device)
    # contiguous: the gather above leaves channels-last strides (see _tiny)
    return torch.where(flip[:, None, None, None], out.flip(-1), out).contiguous()
