"""The one training loop: a network trained with SupCon, with or without a ReLU on its last
layer, with or without batch-binding; and the evaluation of what it learned.

The network is backbone -> linear head (feat_dim -> dim) -> [ReLU] -> normalise. The default
experiment uses an MLP on the 8x8 digits; the paper preset a CIFAR ResNet-18 (torchvision).
The recipe follows SupContrast (README: SGD, momentum 0.9, weight decay 1e-4, cosine
schedule, temperature 0.1; ``main_supcon.py``: warm-up from 0.01 lr for large batches).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from iclr24_common import load_checkpoint, progress, save_checkpoint

from .baselines import random_batches
from .scl_relu import BatchBindingSampler, SupConLoss, normalize_rows


@dataclass(frozen=True)
class TrainConfig:
    """How one network is trained (the method and its baseline share every field but relu)."""

    epochs: int = 300
    batch_size: int = 128
    lr: float = 0.05
    """Peak learning rate (SupContrast main_supcon.py default 0.05 at batch 256)."""
    momentum: float = 0.9
    """SupContrast main_supcon.py default."""
    weight_decay: float = 1e-4
    """SupContrast main_supcon.py default."""
    temperature: float = 0.1
    """SupContrast README's SupCon recipe (--temp 0.1)."""
    warmup_epochs: int = 0
    """Linear warm-up from lr/100 (SupContrast: 10 epochs from 0.01 when batch > 256)."""
    binding: bool = False
    """Append one example per class to every batch (batch-binding)."""


class SCLNet(nn.Module):
    """backbone -> Linear(feat_dim, dim) -> [ReLU] -> h / ||h||.

    ``head_bias`` initialises the head's bias: a positive value keeps every output unit
    active at the start, so that the ReLU does not begin with dead (all-zero) embeddings."""

    def __init__(self, backbone: nn.Module, feat_dim: int, dim: int, relu: bool,
                 head_bias: float = 0.0):  # fmt: skip
        super().__init__()
        self.backbone, self.head, self.relu = backbone, nn.Linear(feat_dim, dim), relu
        nn.init.constant_(self.head.bias, head_bias)

    def features(self, x: Tensor) -> Tensor:
        """The embedding before normalisation (after the ReLU when there is one). -> (b, dim)"""
        z = self.head(self.backbone(x))
        return torch.relu(z) if self.relu else z

    def forward(self, x: Tensor) -> Tensor:
        return normalize_rows(self.features(x))


def mlp(in_dim: int, hidden: int, depth: int = 2) -> nn.Sequential:
    """depth x (Linear -> BatchNorm -> ReLU): the digits backbone."""
    layers, width = [], in_dim
    for _ in range(depth):
        layers += [nn.Linear(width, hidden), nn.BatchNorm1d(hidden), nn.ReLU()]
        width = hidden
    return nn.Sequential(*layers)


def resnet18_cifar() -> tuple[nn.Module, int]:
    """torchvision's ResNet-18 with the CIFAR stem (3x3 conv, stride 1, no max-pool), without
    its classifier. -> (backbone, 512)"""
    from torchvision.models import resnet18

    net = resnet18(num_classes=10)
    net.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    net.maxpool, net.fc = nn.Identity(), nn.Identity()
    return net, 512


class MomentumSGD:
    """SGD with momentum and weight decay, as torch.optim.SGD (dampening 0, no Nesterov):
    v <- mu v + (g + wd p); p <- p - lr v. (torch.optim's constructor imports torch._dynamo,
    seconds of start-up that a CPU smoke run cannot spare.)"""

    def __init__(self, params, lr: float, momentum: float, weight_decay: float):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay
        self.buffers = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self) -> None:
        for p, v in zip(self.params, self.buffers):
            if p.grad is not None:
                v.mul_(self.momentum).add_(p.grad).add_(p, alpha=self.weight_decay)
                p.sub_(v, alpha=self.lr)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def state_dict(self) -> dict:
        return {"buffers": [v.clone() for v in self.buffers]}

    def load_state_dict(self, state: dict) -> None:
        for v, saved in zip(self.buffers, state["buffers"]):
            v.copy_(saved)


def lr_at(config: TrainConfig, epoch: float) -> float:
    """Cosine decay to 0 after a linear warm-up from lr/100 (both per iteration)."""
    if epoch < config.warmup_epochs:
        start = config.lr / 100
        return start + (config.lr - start) * epoch / config.warmup_epochs
    t = (epoch - config.warmup_epochs) / max(config.epochs - config.warmup_epochs, 1e-9)
    return 0.5 * config.lr * (1 + math.cos(math.pi * min(t, 1.0)))


def epoch_batches(labels: np.ndarray, config: TrainConfig, seed: int) -> Callable:
    """epoch -> list of index batches: reshuffled every epoch, with the binding examples
    appended when ``config.binding``."""
    if config.binding:
        sampler = BatchBindingSampler(labels, config.batch_size, seed=seed)

        def with_binding(epoch: int) -> list[list[int]]:
            sampler.set_epoch(epoch)
            return list(sampler)

        return with_binding
    return lambda epoch: random_batches(len(labels), config.batch_size, seed * 100_003 + epoch)


def train_scl(
    model: SCLNet,
    labels: np.ndarray,
    fetch: Callable[[list[int]], tuple[Tensor, Tensor]],
    config: TrainConfig,
    *,
    seed: int,
    desc: str = "train",
    checkpoint: Path | None = None,
) -> list[float]:
    """Train ``model`` with SupConLoss on the examples of ``labels`` (n,).

    fetch(indices) -> (views (b, n_views, ...), labels (b,)) on the model's device.
    With ``checkpoint`` the state is saved after every epoch and training continues from it
    when the file exists. Returns the mean loss of every epoch."""
    criterion = SupConLoss(temperature=config.temperature)  # base_temperature 0.07 (official)
    opt = MomentumSGD(model.parameters(), config.lr, config.momentum, config.weight_decay)
    batches_of, start, history = epoch_batches(labels, config, seed), 0, []
    if checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint, model=model, optimizer=opt)
        start, history = state["step"], state["extra"]["history"]
    bar = progress(total=config.epochs, desc=desc)
    bar.update(start)
    for epoch in range(start, config.epochs):
        model.train()
        batches, total = batches_of(epoch), 0.0
        if not batches:
            raise ValueError("no training batch: the training set has no example to batch")
        for i, idx in enumerate(batches):
            opt.lr = lr_at(config, epoch + i / len(batches))
            views, y = fetch(idx)
            b, n_views = views.shape[:2]
            h = model(views.flatten(0, 1)).view(b, n_views, -1)
            loss = criterion(h, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach())
        history.append(total / len(batches))
        bar.update(1)
        bar.set_postfix(loss=history[-1])
        if checkpoint is not None:
            save_checkpoint(checkpoint, step=epoch + 1, model=model, optimizer=opt,
                            extra={"history": history})  # fmt: skip
    bar.close()
    return history


@torch.no_grad()
def embed(model: SCLNet, batches: Iterable[Tensor]) -> tuple[np.ndarray, np.ndarray]:
    """Embeddings in eval mode. -> (z before normalisation (n, dim), h normalised (n, dim))"""
    model.eval()
    z = torch.cat([model.features(x) for x in batches]).double().cpu()
    return z.numpy(), normalize_rows(z).numpy()


def ncc_correct(h_train, y_train, h_test, y_test) -> np.ndarray:
    """Per test item, whether the nearest class mean (cosine) on normalised embeddings is its
    class (1.0 / 0.0): the classifier neural collapse predicts; no parameter to tune."""
    k = int(max(y_train.max(), y_test.max())) + 1
    means = np.stack([h_train[y_train == c].mean(0) for c in range(k)])
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    return ((h_test @ means.T).argmax(1) == y_test).astype(float)


def ncc_accuracy(h_train, y_train, h_test, y_test) -> float:
    """Nearest-class-mean test accuracy (the mean of :func:`ncc_correct`)."""
    return float(ncc_correct(h_train, y_train, h_test, y_test).mean())


def linear_probe_correct(h_train, y_train, h_test, y_test, seed: int = 0) -> np.ndarray:
    """Per test item, whether a multinomial logistic regression on the frozen normalised
    embeddings classifies it right (SupContrast evaluates SupCon by a linear classifier on the
    frozen encoder)."""
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(max_iter=2000, random_state=seed)
    clf.fit(h_train, y_train)
    return (clf.predict(h_test) == y_test).astype(float)


def linear_probe_accuracy(h_train, y_train, h_test, y_test, seed: int = 0) -> float:
    """Linear-probe test accuracy (the mean of :func:`linear_probe_correct`)."""
    return float(linear_probe_correct(h_train, y_train, h_test, y_test, seed).mean())
