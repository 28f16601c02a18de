"""The one training loop: a CL method (an instance of the unified objective) on a
class-incremental stream, with or without the refresh plug-in (mammoth ``utils/training.py``
with ``observe`` of the official ``models/derpp.py`` / ``models/er.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .continual import ReservoirBuffer, Task, class_il_items, evaluate
from .refresh import Refresh
from .unified import CLMethod, Replay


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation of one stream; every default cites mammoth's best_args (seq-mnist, buffer 200)."""

    lr: float = 0.03
    """SGD learning rate."""
    batch_size: int = 10
    """Stream batch (seq-mnist: 10)."""
    minibatch_size: int = 128
    """Buffer draw per term (seq-mnist derpp 200: 128)."""
    epochs: int = 1
    """Epochs per task."""
    buffer_size: int = 200
    """Reservoir buffer size."""
    weight_decay: float = 0.0
    """SGD weight decay, the same for every arm (official derpp.py sets 1e-4 on CIFAR-10 /
    Tiny-ImageNet; seq-cifar100's scheduler replaces it with optim_wd = 0)."""
    momentum: float = 0.0
    """SGD momentum (mammoth: 0)."""
    milestones: tuple[int, ...] = ()
    """Epochs where the learning rate drops by 10 (seq-cifar100: 35, 45)."""
    augment: Callable | None = None
    """Training-time augmentation of a batch of inputs (None: none, as on MNIST)."""


class SGD:
    """Plain SGD as torch.optim.SGD (weight decay added to the gradient, then momentum),
    without the optimizer module's import cost (it loads torch._dynamo, ~20 s cold)."""

    def __init__(
        self, params: list[torch.Tensor], momentum: float = 0.0, weight_decay: float = 0.0
    ):
        self.params, self.momentum, self.weight_decay = params, momentum, weight_decay
        self.buf: list[torch.Tensor | None] = [None] * len(params)

    @torch.no_grad()
    def step(self, grads, lr: float) -> None:
        for i, (p, g) in enumerate(zip(self.params, grads)):
            if g is None:
                continue
            if self.weight_decay:
                g = g + self.weight_decay * p
            if self.momentum:
                self.buf[i] = (
                    g.clone() if self.buf[i] is None else self.buf[i].mul_(self.momentum).add_(g)
                )
                g = self.buf[i]
            p.add_(g, alpha=-lr)


def _replay(buffer: ReservoirBuffer, draws: tuple[str, ...], m: int) -> Replay | None:
    """The buffer draws a method asks for, in a fixed order (so every arm consumes the
    buffer's generator identically)."""
    if not draws or len(buffer) == 0:
        return None
    rep = Replay()
    if "logits" in draws:
        rep.x_logits, _, rep.logits = buffer.sample(m)
    if "labels" in draws:
        rep.x_labels, rep.labels, _ = buffer.sample(m)
    return rep


def _unlearn(refresh: Refresh, net: nn.Module, x, y, loss_fn, ratios: list[float],
             cumulative: list[torch.Tensor]) -> list[float]:  # fmt: skip
    """One refresh step. Adds each tensor's |displacement| / |theta| (theta before the step)
    to ``cumulative`` (the path the refresh steps travel, per tensor, relative to its norm;
    kept as tensors, so no device sync per step) and returns those of the run's first step
    (``ratios`` once it is measured)."""
    with torch.no_grad():
        before = [p.detach().norm() for p in net.parameters()]
        disp = refresh.unlearn(net, x, y, loss_fn)
        # a tensor of norm 0 (a bias at initialisation) adds 0 rather than an infinite ratio
        now = [torch.where(b > 0, d.norm() / b.clamp_min(1e-30), 0.0) for d, b in zip(disp, before)]
        if not cumulative:
            cumulative.extend(torch.zeros_like(q) for q in now)
        for i, q in enumerate(now):
            cumulative[i] += q
    return ratios or [float(q) for q in now]


def train_stream(
    net: nn.Module,
    tasks: list[Task],
    method: CLMethod,
    cfg: TrainConfig,
    seed: int,
    refresh: Refresh | None = None,
    on_step: Callable[[], None] | None = None,
) -> dict:
    """Train ``net`` on ``tasks`` in order; evaluate every task after each one.

    Returns the class-IL and task-IL accuracy matrices R[i, j] (test accuracy on task j
    after training task i, %), every test example's final class-IL score (``items_cil``,
    averaging to R[-1].mean()), the number of SGD steps and of refresh steps, the relative
    norm of one refresh displacement per tensor (for the delta check), the cumulative refresh
    displacement per tensor (the sum over every refresh step of |step| / |theta|,
    ``cumulative_displacement``) and the seconds."""
    order = np.random.default_rng(seed)  # batch order; the buffer has its own generator
    buffer = ReservoirBuffer(cfg.buffer_size, seed=seed + 1)
    aug_gen = torch.Generator().manual_seed(seed + 2)
    T = len(tasks)
    R_cil, R_til = np.zeros((T, T)), np.zeros((T, T))
    steps, ratios, cumulative, t0 = 0, [], [], time.perf_counter()
    net.train()
    for t, task in enumerate(tasks):
        opt = SGD(list(net.parameters()), cfg.momentum, cfg.weight_decay)  # fresh per task
        n = len(task.y_train)
        for epoch in range(cfg.epochs):
            lr = cfg.lr * 0.1 ** sum(epoch >= m for m in cfg.milestones)
            perm = torch.as_tensor(order.permutation(n))
            for s in range(0, n, cfg.batch_size):
                idx = perm[s : s + cfg.batch_size]
                raw, y = task.x_train[idx], task.y_train[idx]
                x = cfg.augment(raw, aug_gen) if cfg.augment else raw
                replay = _replay(buffer, method.draws, cfg.minibatch_size)
                loss_fn = lambda net_, x=x, y=y, r=replay: method.loss(net_, x, y, r)  # noqa: E731
                # official HEAD 7c90da5 (since 575e441): unlearn, then the method's step on the
                # same batch; the first commit 2484f2a unlearned after the step
                if refresh is not None and refresh.when == "before":
                    ratios = _unlearn(refresh, net, x, y, loss_fn, ratios, cumulative)
                out = net(x)
                opt.step(
                    torch.autograd.grad(method.loss(net, x, y, replay, out=out), opt.params), lr
                )
                steps += 1
                if refresh is not None and refresh.when == "after":
                    ratios = _unlearn(refresh, net, x, y, loss_fn, ratios, cumulative)
                if "logits" in method.draws or "labels" in method.draws:
                    buffer.add(raw, y, out.detach())
                if on_step is not None:
                    on_step()
        method.end_task(net, task.x_train, task.y_train, len(task.classes))
        if refresh is not None:
            refresh.end_task(net, task.x_train, task.y_train)
        R_cil[t], R_til[t] = evaluate(net, tasks)
    return {
        "R_cil": R_cil,
        "R_til": R_til,
        "items_cil": class_il_items(net, tasks),
        "steps": steps,
        "refresh_steps": refresh.steps if refresh is not None else 0,
        "displacement_ratio": ratios,
        "cumulative_displacement": [float(c) for c in cumulative],
        "seconds": time.perf_counter() - t0,
    }
