"""The networks and the LARS optimizer of the experiments (not part of InfoBatch itself).

``mlp`` for the scikit-learn tasks; CIFAR-style ResNet-18/50 (3x3 stem, no max-pool, as in
the official repository's ``model.py``) and LARS (You et al., 2017, as in the official
``examples/lars.py``: trust ratio eta*|w|/(|g| + wd*|w|), clamped to [0, 50], gradients
clamped to [-10, 10], norms and biases excluded) for the paper preset.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def mlp(in_features: int, num_classes: int, hidden: int = 256, depth: int = 2) -> nn.Module:
    """A ReLU MLP: x (B, in_features) -> logits (B, num_classes)."""
    layers: list[nn.Module] = []
    d = in_features
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.ReLU()]
        d = hidden
    layers.append(nn.Linear(d, num_classes))
    return nn.Sequential(*layers)


class _Basic(nn.Module):
    expansion = 1

    def __init__(self, cin: int, planes: int, stride: int):
        super().__init__()
        self.c1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(planes)
        self.c2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(planes)
        self.short = _shortcut(cin, planes, stride)

    def forward(self, x):
        out = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(out)) + self.short(x))


class _Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, planes: int, stride: int):
        super().__init__()
        cout = planes * 4
        self.c1, self.b1 = nn.Conv2d(cin, planes, 1, bias=False), nn.BatchNorm2d(planes)
        self.c2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.b2 = nn.BatchNorm2d(planes)
        self.c3, self.b3 = nn.Conv2d(planes, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.short = _shortcut(cin, cout, stride)

    def forward(self, x):
        out = F.relu(self.b1(self.c1(x)))
        out = F.relu(self.b2(self.c2(out)))
        return F.relu(self.b3(self.c3(out)) + self.short(x))


def _shortcut(cin: int, cout: int, stride: int) -> nn.Module:
    if stride == 1 and cin == cout:
        return nn.Identity()
    return nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))


class CifarResNet(nn.Module):
    """ResNet for 32x32 images: x (B, 3, 32, 32) -> logits (B, num_classes). ``width``: the
    first stage's channels (64, the official; the stages have width x 1, 2, 4, 8)."""

    def __init__(self, block, num_blocks: list[int], num_classes: int, width: int = 64):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()
        )
        layers, cin = [], width
        for i, (planes, n) in enumerate(zip([width * k for k in (1, 2, 4, 8)], num_blocks)):
            for j in range(n):
                layers.append(block(cin, planes, 2 if (i > 0 and j == 0) else 1))
                cin = planes * block.expansion
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        out = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(out, 1), 1))


def resnet18(num_classes: int, width: int = 64) -> CifarResNet:
    return CifarResNet(_Basic, [2, 2, 2, 2], num_classes, width)


def resnet50(num_classes: int, width: int = 64) -> CifarResNet:
    return CifarResNet(_Bottleneck, [3, 4, 6, 3], num_classes, width)


class LARS(torch.optim.Optimizer):
    """Layer-wise adaptive rate scaling; groups with ``lars=False`` are plain momentum SGD."""

    def __init__(self, params, lr: float, momentum: float = 0.9, weight_decay: float = 5e-4,
                 eta: float = 1e-3, eps: float = 0.0):  # fmt: skip
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay,
                                      eta=eta, eps=eps, lars=True))  # fmt: skip

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                grad, lr = p.grad, g["lr"]
                if g["lars"]:
                    w_norm, g_norm = p.norm(), p.grad.norm()
                    ratio = g["eta"] * w_norm / (g_norm + g["weight_decay"] * w_norm + g["eps"])
                    ok = (w_norm > 0) & (g_norm > 0)
                    lr = lr * torch.where(ok, ratio, torch.ones_like(ratio)).clamp(0.0, 50.0)
                    if g["weight_decay"]:
                        grad = grad.add(p, alpha=g["weight_decay"])
                grad = grad.clamp(-10.0, 10.0)
                if g["momentum"]:
                    st = self.state[p]
                    if "buf" not in st:
                        st["buf"] = grad.clone()
                    else:
                        st["buf"].mul_(g["momentum"]).add_(grad)
                    grad = st["buf"]
                p.sub_(grad * lr)
        return loss


def lars_param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """LARS on weights; norms and biases without LARS or weight decay (official
    ``create_optimizer_lars(bn_bias_separately=True)``)."""
    plain = {id(p) for m in model.modules() if isinstance(m, nn.BatchNorm2d | nn.LayerNorm)
             for p in m.parameters(recurse=False)}  # fmt: skip
    plain |= {id(p) for n, p in model.named_parameters() if n.endswith("bias")}
    main = [p for p in model.parameters() if id(p) not in plain]
    rest = [p for p in model.parameters() if id(p) in plain]
    return [dict(params=main, weight_decay=weight_decay),
            dict(params=rest, weight_decay=0.0, lars=False)]  # fmt: skip
