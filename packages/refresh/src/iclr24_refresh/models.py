"""Backbones: mammoth's MNIST MLP (the default) and its reduced ResNet-18 (the paper preset).

Both follow mammoth's ``backbone/MNISTMLP.py`` and ``backbone/ResNet18.py`` shapes: the MLP is
input -> 100 -> 100 -> classes with ReLU and Xavier-uniform weights, zero biases; the ResNet-18
has a 3x3 stem, no max-pool, widths nf, 2nf, 4nf, 8nf (nf = 64) and a linear classifier.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn


def _xavier(m: nn.Module) -> None:
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)


class MLP(nn.Module):
    """mammoth MNISTMLP: (n, d) -> (n, classes)."""

    def __init__(self, d_in: int, n_classes: int, hidden: int = 100):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )  # fmt: skip
        self.apply(_xavier)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x.flatten(1))


class _Block(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut = nn.Sequential()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(
                nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out)
            )

    def forward(self, x: Tensor) -> Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet18(nn.Module):
    """mammoth resnet18(n_classes, nf=64): (n, 3, H, W) -> (n, classes)."""

    def __init__(self, n_classes: int, nf: int = 64):
        super().__init__()
        self.conv1 = nn.Conv2d(3, nf, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(nf)
        layers, c = [], nf
        for i, width in enumerate((nf, 2 * nf, 4 * nf, 8 * nf)):
            stride = 1 if i == 0 else 2
            layers += [_Block(c, width, stride), _Block(width, width, 1)]
            c = width
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Linear(c, n_classes)

    def forward(self, x: Tensor) -> Tensor:
        out = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.classifier(F.adaptive_avg_pool2d(out, 1).flatten(1))
