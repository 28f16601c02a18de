"""One training run with a :class:`~iclr24_infobatch.infobatch.DynamicPruner` (full data,
InfoBatch or a baseline): SGD/LARS with OneCycle driven by epoch progress, label smoothing,
per-sample losses fed back to the pruner. Data lives in tensors; batches are index tensors."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .data import Split, augment_crop_flip
from .infobatch import DynamicPruner
from .models import LARS, lars_param_groups
from .schedule import EpochProgressScheduler


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings (defaults: the official cifar10_example.py)."""

    epochs: int = 200
    """Training epochs (official --num_epoch 200)."""
    batch_size: int = 128
    """Mini-batch size per process (official --batch-size 128)."""
    optimizer: str = "sgd"
    """sgd or lars (official --optimizer; lars for CIFAR-100 ResNet-50)."""
    max_lr: float = 0.05
    """OneCycle peak learning rate (official --max-lr 0.05; 5.2 with LARS)."""
    div_factor: float = 25.0
    """OneCycle initial lr = max_lr / div_factor (official --div-factor 25)."""
    final_div: float = 10000.0
    """OneCycle final lr = initial lr / final_div (official --final-div 10000)."""
    pct_start: float = 0.3
    """OneCycle warm-up fraction (official --pct-start 0.3)."""
    momentum: float = 0.9
    """SGD/LARS momentum (official --momentum 0.9; OneCycle cycles it 0.85-0.95)."""
    weight_decay: float = 5e-4
    """Weight decay (official --weight-decay 5e-4)."""
    label_smoothing: float = 0.1
    """Cross-entropy label smoothing (official --label-smoothing 0.1)."""
    augment: bool = False
    """Random crop (reflect pad 4) + horizontal flip, for images (official train transform)."""
    eval_batch: int = 1000
    """Batch size for the test-set evaluation."""


@torch.no_grad()
def correct(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 1000) -> np.ndarray:
    """Whether each sample is classified right (top-1): (N,) uint8, in eval mode. The per-item
    scores of a test set that every seed shares."""
    model.eval()
    right = [(model(xb).argmax(1) == yb).cpu().numpy() for xb, yb in
             zip(torch.split(x, batch), torch.split(y, batch))]  # fmt: skip
    model.train()
    return np.concatenate(right).astype(np.uint8) if right else np.zeros(0, np.uint8)


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 1000) -> float:
    """Top-1 accuracy in percent."""
    return 100.0 * int(correct(model, x, y, batch).sum()) / len(y)


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    lr0 = cfg.max_lr / cfg.div_factor  # OneCycle overwrites the lr anyway
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr0, momentum=cfg.momentum,
                               weight_decay=cfg.weight_decay)  # fmt: skip
    if cfg.optimizer == "lars":
        return LARS(lars_param_groups(model, cfg.weight_decay), lr=lr0, momentum=cfg.momentum,
                    weight_decay=cfg.weight_decay)  # fmt: skip
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}; use sgd or lars")


class Trainer:
    """One training run, stepped an epoch at a time: :meth:`epoch` trains the next epoch drawn
    by ``pruner`` and returns its wall time (evaluation excluded); :meth:`result` scores the
    model. :func:`train_run` runs it to the end; the interleaved timing alternates the epochs
    of two trainers (full data and InfoBatch) so that both see the same machine load."""

    def __init__(self, split: Split, model: nn.Module, pruner: DynamicPruner, cfg: TrainConfig,
                 device: torch.device | str = "cpu", generator: torch.Generator | None = None):  # fmt: skip
        self.device = device = torch.device(device)
        self.split, self.pruner, self.cfg, self.generator = split, pruner, cfg, generator
        model.to(device)
        self.xtr, self.ytr = split.x_train.to(device), split.y_train.to(device)
        n = self.xtr.shape[0]
        if len(pruner) != n:
            raise ValueError(f"pruner covers {len(pruner)} samples, the training set has {n}")
        if pruner.world_size > 1:
            model = nn.parallel.DistributedDataParallel(model)
        self.model = model
        self.opt = make_optimizer(model, cfg)
        steps_full = math.ceil(math.ceil(n / pruner.world_size) / cfg.batch_size)
        onecycle = torch.optim.lr_scheduler.OneCycleLR(
            self.opt, cfg.max_lr, total_steps=cfg.epochs * steps_full, pct_start=cfg.pct_start,
            div_factor=cfg.div_factor, final_div_factor=cfg.final_div,
        )  # fmt: skip
        self.sched = EpochProgressScheduler(onecycle, steps_full)
        self.epochs: list[dict] = []
        self.train_seconds = 0.0
        model.train()

    def epoch(self) -> float:
        """Train the next epoch; return its wall time in seconds."""
        cfg, pruner, model, device = self.cfg, self.pruner, self.model, self.device
        epoch = len(self.epochs)
        if epoch >= cfg.epochs:
            raise RuntimeError(f"all {cfg.epochs} epochs have been trained")
        steps = math.ceil(pruner.epoch_length() / cfg.batch_size)
        self.sched.begin_epoch(epoch, steps)
        seen = torch.zeros(len(self.ytr), dtype=torch.bool)
        w_min, w_max, loss_sum, nb = math.inf, -math.inf, 0.0, 0
        t0 = time.perf_counter()
        for idx in pruner.batches(cfg.batch_size):
            x, y = self.xtr[idx.to(device)], self.ytr[idx.to(device)]
            if cfg.augment:
                x = augment_crop_flip(x, self.generator)
            per_sample = F.cross_entropy(model(x), y, reduction="none",
                                         label_smoothing=cfg.label_smoothing)  # fmt: skip
            w = pruner.weights[idx]  # the weights this batch is trained with
            loss = pruner.update(per_sample, idx)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            self.sched.step()
            seen[idx] = True
            w_min, w_max = min(w_min, float(w.min())), max(w_max, float(w.max()))
            loss_sum, nb = loss_sum + float(loss.detach()), nb + 1
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        seconds = time.perf_counter() - t0
        self.train_seconds += seconds
        self.epochs.append({"samples": int(seen.sum()), "weight_min": w_min, "weight_max": w_max,
                            "train_loss": loss_sum / max(nb, 1)})  # fmt: skip
        return seconds

    def result(self) -> dict:
        """The test accuracy (and whether each test sample was right, ``test_correct``), the
        training wall time, the pass counters and per-epoch records."""
        model, pruner, split, device = self.model, self.pruner, self.split, self.device
        net = model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model
        right = correct(net, split.x_test.to(device), split.y_test.to(device), self.cfg.eval_batch)
        return {
            "test_acc": 100.0 * int(right.sum()) / len(split.y_test),
            "test_correct": right,
            "train_seconds": self.train_seconds,
            "saved_fraction": pruner.saved_fraction(),
            "predicted_saved_fraction": pruner.predicted_saved_fraction(),
            "forward_passes": pruner.forward_passes,
            "full_passes": pruner.full_passes,
            "kept_per_epoch": list(pruner.kept_per_epoch),
            "low_fraction": pruner.low_fraction() if hasattr(pruner, "low_fraction") else None,
            "pruned_epochs": sum(c > 0 for c in getattr(pruner, "low_counts", ())),
            "epochs": self.epochs,
        }


def train_run(
    split: Split,
    model: nn.Module,
    pruner: DynamicPruner,
    cfg: TrainConfig,
    device: torch.device | str = "cpu",
    generator: torch.Generator | None = None,
) -> dict:
    """Train ``model`` for ``cfg.epochs`` epochs drawn by ``pruner``; return the test accuracy,
    the training wall time (evaluation excluded), the pass counters and per-epoch records."""
    trainer = Trainer(split, model, pruner, cfg, device, generator)
    for _ in range(cfg.epochs):
        trainer.epoch()
    return trainer.result()
