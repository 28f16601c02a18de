"""The training loop used by the estimators and the reproduction: Adam on MSE or BCE-with-
logits, mini-batches from a seeded permutation, and model selection on a held-out split."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class TrainConfig:
    """How a network is trained (official scripts: Adam, MSE / BCEWithLogits, shuffled batches)."""

    epochs: int = 1000
    """Passes over the training set (official scripts take ``--epochs``; no default given)."""
    batch_size: int = 128
    """Mini-batch size (``batch_size = 128`` noted in the official friedman/scalability scripts)."""
    lr: float = 0.005
    """Adam learning rate (``learn_rate = 0.005`` noted in the official friedman/scalability scripts)."""
    loss: str = "mse"
    """``mse`` for regression, ``bce`` (BCE with logits) for binary classification."""
    eval_every: int = 10
    """Epochs between two evaluations on the selection split (official scripts print every 10)."""


@dataclass
class TrainResult:
    """What :func:`train_model` did."""

    best_epoch: int
    best_loss: float
    epoch_seconds: list[float] = field(default_factory=list)
    history: list[tuple[int, float, float]] = field(default_factory=list)
    """(epoch, mean training loss, selection loss) at every evaluation."""


def _loss_fn(kind: str):
    if kind == "mse":
        return nn.functional.mse_loss
    if kind == "bce":
        return nn.functional.binary_cross_entropy_with_logits
    raise ValueError(f"loss must be 'mse' or 'bce', got {kind!r}")


def train_model(
    model: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    cfg: TrainConfig,
    X_sel: torch.Tensor | None = None,
    y_sel: torch.Tensor | None = None,
    *,
    seed: int = 0,
) -> TrainResult:
    """Train ``model`` ((batch, d) -> (batch,)) on ``X`` (n, d), ``y`` (n,) in place.

    With a selection split (``X_sel``, ``y_sel``) the weights of the evaluation with the lowest
    selection loss are restored at the end; without one, the last weights are kept.
    """
    loss_fn = _loss_fn(cfg.loss)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    n = X.shape[0]
    best_loss, best_epoch, best_state = float("inf"), cfg.epochs, None
    result = TrainResult(best_epoch=cfg.epochs, best_loss=float("nan"))
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        t0 = time.perf_counter()
        perm = torch.randperm(n, generator=gen).to(X.device)
        total = 0.0
        for start in range(0, n, cfg.batch_size):
            idx = perm[start : start + cfg.batch_size]
            loss = loss_fn(model(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        result.epoch_seconds.append(time.perf_counter() - t0)
        if X_sel is not None and (epoch % cfg.eval_every == 0 or epoch == cfg.epochs):
            model.eval()
            with torch.no_grad():
                sel = float(loss_fn(model(X_sel), y_sel))
            result.history.append((epoch, total / n, sel))
            if sel < best_loss:  # NaN never wins
                best_loss, best_epoch = sel, epoch
                best_state = copy.deepcopy(model.state_dict())
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    result.best_epoch, result.best_loss = best_epoch, best_loss
    return result
