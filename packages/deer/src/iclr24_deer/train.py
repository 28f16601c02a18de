"""The one training loop: Adam with global-norm clipping on the residual GRU classifier (the
official EigenWorms setup), used both to compare DEER with sequential training step for step
and to train on EigenWorms to the best validation accuracy."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import numpy as np
import torch

from iclr24_common import load_checkpoint, progress, save_checkpoint

from .classifier import ResidualGRUClassifier

CLIP_NORM = 1.0  # official train.py: optax.clip_by_global_norm(1.0) before Adam


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_step(model, opt, x: torch.Tensor, y: torch.Tensor) -> float:
    """One Adam step on cross-entropy; returns the batch loss."""
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
    opt.step()
    return float(loss.detach())


def run_steps(model, x, y, order: torch.Tensor, lr: float, desc: str = "") -> dict:
    """Train ``model`` on the batches ``x[order[k]]`` (order: (steps, batch) indices).

    Returns the per-step losses, the Newton iterations of every DEER layer call and the
    seconds of each step (synchronised on GPU)."""
    device = next(model.parameters()).device
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses, iters, seconds = [], [], []
    for idx in progress(order, desc=desc):
        idx = idx.to(x.device)
        xb, yb = x[idx].to(device), y[idx].to(device)
        _sync(device)
        t0 = time.perf_counter()
        losses.append(train_step(model, opt, xb, yb))
        _sync(device)
        seconds.append(time.perf_counter() - t0)
        iters += model.deer_iterations()
    return {"losses": losses, "iters": iters, "seconds": seconds}


def correct(model, x, y, batch: int = 4) -> np.ndarray:
    """Per example, whether the model classifies it right (1.0 / 0.0), in mini-batches
    (model evaluated as it is configured)."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    hits = []
    with torch.no_grad():
        for i in range(0, len(y), batch):
            logits = model(x[i : i + batch].to(device))
            hits.append((logits.argmax(-1).cpu() == y[i : i + batch].cpu()).numpy())
    model.train(was_training)
    return np.concatenate(hits).astype(float) if hits else np.zeros(0)


def accuracy(model, x, y, batch: int = 4) -> float:
    """Test accuracy in mini-batches (the mean of :func:`correct`)."""
    return float(correct(model, x, y, batch).sum()) / max(len(y), 1)


def fit(
    model: ResidualGRUClassifier,
    splits: dict,
    *,
    epochs: int,
    batch: int,
    lr: float,
    seed: int,
    checkpoint: Path | None = None,
    resume: bool = False,
    log=None,
) -> dict:
    """Train for ``epochs`` epochs (shuffled, drop_last, as the official data loader) and keep
    the best-validation weights; returns their validation and test accuracy.

    With ``checkpoint`` the model, optimiser, best weights and epoch are saved after every
    epoch, and ``resume`` continues from the last one."""
    device = next(model.parameters()).device
    xtr, ytr = splits["train"]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    best_val, best_state, start, t_train = -1.0, None, 0, 0.0
    if resume and checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint, model=model, optimizer=opt, map_location=device)
        start, extra = state["step"], state["extra"]
        best_val, best_state, t_train = extra["best_val"], extra["best_state"], extra["seconds"]
        gen.set_state(extra["generator"])
    for epoch in progress(range(start, epochs), desc=f"eigenworms seed {seed}"):
        t0 = time.perf_counter()
        perm = torch.randperm(len(ytr), generator=gen)
        model.train()
        losses = []
        for i in range(0, len(ytr) - batch + 1, batch):
            idx = perm[i : i + batch]
            losses.append(train_step(model, opt, xtr[idx].to(device), ytr[idx].to(device)))
        t_train += time.perf_counter() - t0
        val = accuracy(model, *splits["val"])
        if val > best_val:
            best_val, best_state = val, copy.deepcopy(model.state_dict())
        if log:
            log.info("epoch %d: loss %.4f, val acc %.3f", epoch, np.mean(losses), val)
        if checkpoint is not None:
            save_checkpoint(checkpoint, step=epoch + 1, model=model, optimizer=opt,
                            extra={"best_val": best_val, "best_state": best_state,
                                   "seconds": t_train, "generator": gen.get_state()})  # fmt: skip
    model.load_state_dict(best_state)
    hits = correct(model, *splits["test"])  # the test split's items: every seed scores them
    return {"val_acc": best_val, "test_acc": float(hits.mean()), "test_correct": hits,
            "train_seconds": t_train}  # fmt: skip
