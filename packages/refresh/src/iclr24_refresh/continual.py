"""Continual-learning plumbing: the class-incremental task stream, the reservoir replay
buffer, class-IL / task-IL evaluation and the accuracy-matrix metrics (mammoth's
definitions: ``utils/buffer.py``, ``utils/training.py``, ``utils/metrics.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn


@dataclass
class Task:
    """One task of a class-incremental stream: its classes and its train / test data."""

    classes: tuple[int, ...]
    x_train: Tensor  # (n, ...) float
    y_train: Tensor  # (n,) long, global class ids
    x_test: Tensor
    y_test: Tensor


def split_by_class(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    classes_per_task: int,
) -> list[Task]:
    """Classes 0..K-1 in order, ``classes_per_task`` per task (mammoth's Split-* order)."""
    n_classes = int(max(y_train.max(), y_test.max())) + 1
    if n_classes % classes_per_task:
        raise ValueError(f"{n_classes} classes do not split into tasks of {classes_per_task}")
    tasks = []
    for start in range(0, n_classes, classes_per_task):
        cls = tuple(range(start, start + classes_per_task))
        tr, te = np.isin(y_train, cls), np.isin(y_test, cls)
        tasks.append(
            Task(
                cls,
                torch.as_tensor(x_train[tr], dtype=torch.float32),
                torch.as_tensor(y_train[tr], dtype=torch.long),
                torch.as_tensor(x_test[te], dtype=torch.float32),
                torch.as_tensor(y_test[te], dtype=torch.long),
            )
        )
    return tasks


class ReservoirBuffer:
    """Reservoir sampling of (input, label, logits) (Vitter's algorithm R, as mammoth's
    ``Buffer``): after n examples have been offered, each is held with probability size/n.
    Its draws come from its own ``numpy.random.Generator``."""

    def __init__(self, size: int, seed: int = 0):
        if size < 1:
            raise ValueError("buffer size must be >= 1")
        self.size, self.seen = size, 0
        self.rng = np.random.default_rng(seed)
        self.x: Tensor | None = None
        self.y: Tensor | None = None
        self.logits: Tensor | None = None

    def __len__(self) -> int:
        return min(self.seen, self.size)

    def slots(self, n: int) -> np.ndarray:
        """Where each of the next ``n`` offered examples goes (-1: not kept); advances ``seen``."""
        out = np.full(n, -1)
        for i in range(n):
            if self.seen < self.size:
                out[i] = self.seen
            else:
                r = int(self.rng.integers(0, self.seen + 1))
                out[i] = r if r < self.size else -1
            self.seen += 1
        return out

    def add(self, x: Tensor, y: Tensor, logits: Tensor | None = None) -> None:
        if self.x is None:
            self.x = torch.zeros((self.size, *x.shape[1:]), dtype=x.dtype, device=x.device)
            self.y = torch.zeros(self.size, dtype=torch.long, device=x.device)
            k = logits.shape[1] if logits is not None else 1
            self.logits = torch.zeros((self.size, k), dtype=torch.float32, device=x.device)
        where = self.slots(len(y))
        keep = np.flatnonzero(where >= 0)
        if keep.size:
            idx = torch.as_tensor(where[keep], device=x.device)
            sel = torch.as_tensor(keep, device=x.device)
            self.x[idx], self.y[idx] = x[sel], y[sel]
            if logits is not None:
                self.logits[idx] = logits[sel].detach().float()

    def sample(self, n: int) -> tuple[Tensor, Tensor, Tensor]:
        """``n`` distinct held examples (all, if fewer are held), uniformly."""
        idx = self.rng.choice(len(self), size=min(n, len(self)), replace=False)
        idx = torch.as_tensor(idx, device=self.x.device)
        return self.x[idx], self.y[idx], self.logits[idx]


@torch.no_grad()
def evaluate(net: nn.Module, tasks: list[Task], batch: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy (%) on each task's test set: class-IL (argmax over every output) and task-IL
    (argmax over the task's own classes; mammoth's ``mask_classes``). -> two (len(tasks),)."""
    was = net.training
    net.eval()
    cil, til = [], []
    for t in tasks:
        ok_c = ok_t = 0
        for s in range(0, len(t.y_test), batch):
            x, y = t.x_test[s : s + batch], t.y_test[s : s + batch]
            out = net(x)
            ok_c += int((out.argmax(1) == y).sum())
            masked = torch.full_like(out, float("-inf"))
            cls = list(t.classes)
            masked[:, cls] = out[:, cls]
            ok_t += int((masked.argmax(1) == y).sum())
        cil.append(100.0 * ok_c / len(t.y_test))
        til.append(100.0 * ok_t / len(t.y_test))
    net.train(was)
    return np.array(cil), np.array(til)


@torch.no_grad()
def class_il_items(net: nn.Module, tasks: list[Task], batch: int = 1024) -> np.ndarray:
    """Every test example's class-IL score, weighted so that their mean is the average
    accuracy over the tasks (%): 100 * correct_i * N / (T * n_t) for example i of task t,
    with N test examples over T tasks and n_t in task t. -> (N,), the per-item scores of a
    test set that every seed shares."""
    was = net.training
    net.eval()
    n_all = sum(len(t.y_test) for t in tasks)
    out = []
    for t in tasks:
        for s in range(0, len(t.y_test), batch):
            x, y = t.x_test[s : s + batch], t.y_test[s : s + batch]
            ok = (net(x).argmax(1) == y).double().cpu().numpy()  # (b,)
            out.append(100.0 * ok * n_all / (len(tasks) * len(t.y_test)))
    net.train(was)
    return np.concatenate(out)


# ------------------------------------------------------------------ accuracy-matrix metrics
def average_accuracy(R: np.ndarray) -> float:
    """Mean accuracy over all tasks after the last one. R[i, j]: task j after training task i."""
    return float(R[-1].mean())


def forgetting(R: np.ndarray) -> float:
    """Mean over tasks j < T-1 of (best accuracy on j before the end) - (final accuracy on j)
    (Chaudhry et al. 2018; mammoth ``forgetting``)."""
    T = R.shape[0]
    if T < 2:
        return 0.0
    return float(np.mean([R[: T - 1, j].max() - R[T - 1, j] for j in range(T - 1)]))


def backward_transfer(R: np.ndarray) -> float:
    """Mean over tasks j < T-1 of R[T-1, j] - R[j, j] (Lopez-Paz & Ranzato 2017)."""
    T = R.shape[0]
    if T < 2:
        return 0.0
    return float(np.mean([R[T - 1, j] - R[j, j] for j in range(T - 1)]))
