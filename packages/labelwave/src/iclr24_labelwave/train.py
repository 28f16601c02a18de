"""The one training loop: constant-lr SGD on the noisy labels (official main.py at cf3e9eb,
the same at 178a761: lr 0.01, momentum 0.9, weight decay 5e-4, batch 128, no schedule), with a :class:`LabelWave` callback
fed the predictions of each training mini-batch, and the test (and, for the hold-out
baselines, validation) accuracy recorded every epoch. Data lives in tensors; batches are
index tensors, so the callback gets dataset indices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .labelwave import LabelWave, state_of


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 200
    """Training epochs (official main.py EPOCH = 200)."""
    batch_size: int = 128
    """Mini-batch size (official BATCH_SIZE = 128)."""
    lr: float = 0.01
    """Constant learning rate (official LR = 0.01; a step schedule creates false PC minima)."""
    momentum: float = 0.9
    """SGD momentum (official)."""
    weight_decay: float = 5e-4
    """Weight decay (official)."""
    window: int = 3
    """Label Wave's moving-average window k (the paper's best k = 3, second-hand; see
    labelwave.py)."""
    patience: int = 1
    """Label Wave's patience: 1 = stop at the first local minimum of the moving average (the
    paper's rule, second-hand; see labelwave.py)."""
    pc_pass: str = "train"
    """train: PC from the training mini-batches' own forward pass (official); eval: an extra
    pass over the training set in eval mode, without augmentation, after each epoch."""
    augment: bool = False
    """Random crop (pad 4) + horizontal flip, for images (official CIFAR transform)."""

    def __post_init__(self):
        if min(self.epochs, self.batch_size, self.window, self.patience) < 1:
            raise ValueError("epochs, batch_size, window and patience must be >= 1")
        if self.epochs <= self.window:
            raise ValueError(
                "epochs must exceed window (the first moving average needs window + 1)"
            )
        if self.lr <= 0:
            raise ValueError("lr must be > 0")
        if self.pc_pass not in ("train", "eval"):
            raise ValueError("pc_pass must be train or eval")


def mlp(in_dim: int, num_classes: int, width: int = 512) -> nn.Module:
    """Two hidden ReLU layers: (B, in_dim) -> (B, num_classes); enough to memorise noise."""
    return nn.Sequential(nn.Flatten(), nn.Linear(in_dim, width), nn.ReLU(),
                         nn.Linear(width, width), nn.ReLU(), nn.Linear(width, num_classes))  # fmt: skip


def resnet18(num_classes: int) -> nn.Module:
    """torchvision's ResNet-18 with the CIFAR stem (3x3 conv, stride 1, no max-pool)."""
    try:
        from torchvision.models import resnet18 as tv_resnet18
    except ImportError as e:
        from iclr24_common import MissingDependencyError

        raise MissingDependencyError(
            "the paper preset needs torchvision: pip install 'iclr24-labelwave[paper]'"
        ) from e
    model = tv_resnet18(num_classes=num_classes)
    model.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    model.maxpool = nn.Identity()
    return model


def crop_flip(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Random 32x32 crop of the zero-padded (pad 4) batch and a random horizontal flip.
    x: (B, C, H, W)."""
    B, _, H, W = x.shape
    padded = F.pad(x, (4, 4, 4, 4))
    dy, dx = torch.randint(0, 9, (2,), generator=gen).tolist()  # one offset per batch (cheap)
    out = padded[:, :, dy : dy + H, dx : dx + W]
    flip = (torch.rand(B, generator=gen) < 0.5).to(x.device)
    return torch.where(flip[:, None, None, None], out.flip(3), out)


@torch.no_grad()
def predict(model: nn.Module, x: torch.Tensor, batch: int = 1000) -> torch.Tensor:
    model.eval()
    return torch.cat([model(xb).argmax(1) for xb in torch.split(x, batch)])


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    return float((predict(model, x) == y).float().mean()) * 100.0


def test_items(run: dict, epoch: int | None = None) -> np.ndarray:
    """Every test example's score (100 right, 0 wrong) at 1-based ``epoch`` of a ``train``
    result, or of the state Label Wave kept (``epoch=None``): their mean is that epoch's test
    accuracy (``kept_test_acc``). -> (n_test,)"""
    packed = run["kept_correct"] if epoch is None else run["test_correct"][epoch - 1]
    return np.unpackbits(packed, count=run["n_test"]).astype(float) * 100.0


def train(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, x_test: torch.Tensor,
    y_test: torch.Tensor, cfg: TrainConfig, seed: int, x_val: torch.Tensor | None = None,
    y_val: torch.Tensor | None = None, progress=None,
) -> dict[str, np.ndarray | float | int | None]:  # fmt: skip
    """Train for ``cfg.epochs`` on (x, y) (noisy labels) and record, per epoch, the test
    accuracy, which test examples were right (``test_correct``: (epochs, ceil(n_test / 8))
    packed bits, read by :func:`test_items`), the validation accuracy (when given) and Label
    Wave's PC. Label Wave runs as a callback; training goes on after it says stop so that the
    final epoch and the oracle are measured on the same run, and the state it kept is
    evaluated at the end (``kept_test_acc``, its items ``kept_correct``)."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum,
                          weight_decay=cfg.weight_decay)  # fmt: skip
    wave = LabelWave(len(y), window=cfg.window, patience=cfg.patience)
    test_acc, val_acc, train_loss, test_correct = [], [], [], []
    for _ in range(cfg.epochs):
        model.train()
        total = 0.0
        for idx in torch.randperm(len(y), generator=gen).split(cfg.batch_size):
            xb = crop_flip(x[idx], gen) if cfg.augment else x[idx]
            out = model(xb)  # (B, C)
            loss = F.cross_entropy(out, y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            if cfg.pc_pass == "train":
                wave.update(idx, out.detach().argmax(1))  # the prediction made while training
        if cfg.pc_pass == "eval":
            wave.update(torch.arange(len(y)), predict(model, x))
        wave.end_epoch(state_of(model))
        train_loss.append(total / len(y))
        correct = predict(model, x_test) == y_test  # (n_test,)
        test_acc.append(float(correct.float().mean()) * 100.0)  # = accuracy(model, x, y)
        test_correct.append(np.packbits(correct.cpu().numpy()))  # every test item, bit-packed
        if x_val is not None:
            val_acc.append(accuracy(model, x_val, y_val))
        if progress is not None:
            progress.update(1)
    kept = kept_correct = None
    if wave.best_state is not None:
        model.load_state_dict(wave.best_state)
        right = predict(model, x_test) == y_test  # (n_test,)
        kept = float(right.float().mean()) * 100.0  # = accuracy(model, x_test, y_test)
        kept_correct = np.packbits(right.cpu().numpy())
    pcs = [np.nan if p is None else p for p in wave.tracker.history]
    ma = [np.nan if m is None else m for m in wave.moving_average]
    return {"test_acc": np.array(test_acc), "val_acc": np.array(val_acc),
            "test_correct": np.stack(test_correct), "kept_correct": kept_correct,
            "n_test": len(y_test),
            "train_loss": np.array(train_loss), "pc": np.array(pcs, dtype=float),
            "pc_ma": np.array(ma, dtype=float), "best_epoch": wave.best_epoch,
            "stop_epoch": wave.stop_epoch, "kept_test_acc": kept}  # fmt: skip
