"""One training run with a :class:`~iclr24_infobatch.infobatch.DynamicPruner` (full data,
InfoBatch or a baseline): SGD/LARS with OneCycle driven by epoch progress, label smoothing,
per-sample losses fed back to the pruner. Data lives in tensors; batches are index tensors."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

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
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 1000) -> float:
    """Top-1 accuracy in percent."""
    model.eval()
    correct = sum(int((model(xb).argmax(1) == yb).sum()) for xb, yb in
                  zip(torch.split(x, batch), torch.split(y, batch)))  # fmt: skip
    model.train()
    return 100.0 * correct / len(y)


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    lr0 = cfg.max_lr / cfg.div_factor  # OneCycle overwrites the lr anyway
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr0, momentum=cfg.momentum,
                               weight_decay=cfg.weight_decay)  # fmt: skip
    if cfg.optimizer == "lars":
        return LARS(lars_param_groups(model, cfg.weight_decay), lr=lr0, momentum=cfg.momentum,
                    weight_decay=cfg.weight_decay)  # fmt: skip
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}; use sgd or lars")


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
    device = torch.device(device)
    model.to(device)
    xtr, ytr = split.x_train.to(device), split.y_train.to(device)
    n = xtr.shape[0]
    if len(pruner) != n:
        raise ValueError(f"pruner covers {len(pruner)} samples, the training set has {n}")
    if pruner.world_size > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = make_optimizer(model, cfg)
    steps_full = math.ceil(math.ceil(n / pruner.world_size) / cfg.batch_size)
    onecycle = torch.optim.lr_scheduler.OneCycleLR(
        opt, cfg.max_lr, total_steps=cfg.epochs * steps_full, pct_start=cfg.pct_start,
        div_factor=cfg.div_factor, final_div_factor=cfg.final_div,
    )  # fmt: skip
    sched = EpochProgressScheduler(onecycle, steps_full)
    epochs: list[dict] = []
    train_seconds = 0.0
    model.train()
    for epoch in range(cfg.epochs):
        steps = math.ceil(pruner.epoch_length() / cfg.batch_size)
        sched.begin_epoch(epoch, steps)
        seen = torch.zeros(n, dtype=torch.bool)
        w_min, w_max, loss_sum, nb = math.inf, -math.inf, 0.0, 0
        t0 = time.perf_counter()
        for idx in pruner.batches(cfg.batch_size):
            x, y = xtr[idx.to(device)], ytr[idx.to(device)]
            if cfg.augment:
                x = augment_crop_flip(x, generator)
            per_sample = F.cross_entropy(model(x), y, reduction="none",
                                         label_smoothing=cfg.label_smoothing)  # fmt: skip
            w = pruner.weights[idx]  # the weights this batch is trained with
            loss = pruner.update(per_sample, idx)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            seen[idx] = True
            w_min, w_max = min(w_min, float(w.min())), max(w_max, float(w.max()))
            loss_sum, nb = loss_sum + float(loss.detach()), nb + 1
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        train_seconds += time.perf_counter() - t0
        epochs.append({"samples": int(seen.sum()), "weight_min": w_min, "weight_max": w_max,
                       "train_loss": loss_sum / max(nb, 1)})  # fmt: skip
    net = model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model
    return {
        "test_acc": accuracy(net, split.x_test.to(device), split.y_test.to(device), cfg.eval_batch),
        "train_seconds": train_seconds,
        "saved_fraction": pruner.saved_fraction(),
        "predicted_saved_fraction": pruner.predicted_saved_fraction(),
        "forward_passes": pruner.forward_passes,
        "full_passes": pruner.full_passes,
        "kept_per_epoch": list(pruner.kept_per_epoch),
        "low_fraction": pruner.low_fraction() if hasattr(pruner, "low_fraction") else None,
        "epochs": epochs,
    }
