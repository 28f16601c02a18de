"""The one training loop (every model of the benchmark) and batched prediction.

Official train.py: Adam (betas 0.9, 0.999, no weight decay, no lr decay), shuffled batches of
8 shapes, every shape re-read each epoch with fresh input points and a fresh perturbation
(dataset.py draws them in ``__getitem__``). A long run checkpoints every
``checkpoint_every`` steps (model, optimiser, data order and the data generator), so that
``--resume`` continues an interrupted training where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr24_common import load_checkpoint, progress, save_checkpoint

from .data import Perturbation, draw_inputs


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    """Optimiser steps: the cap of the convergence rule (or the fixed count when ``tol`` is
    0)."""
    lr: float
    """Adam learning rate (official cfgs: 1e-4)."""
    batch_size: int = 8
    """Shapes per step (official cfgs: batch_size 8)."""
    checkpoint_every: int = 0
    """Steps between checkpoints (0: none)."""
    tol: float = 0.0
    """Convergence rule: stop at the first check where ``tail_drop`` of the losses so far is
    below ``tol`` (0: run exactly ``steps``)."""
    min_steps: int = 0
    """No convergence check before this many steps."""
    check_every: int = 100
    """Steps between convergence checks."""


def converged(losses: list[float], cfg: TrainConfig) -> bool:
    """The one convergence rule of every model: the loss fell by less than ``cfg.tol`` between
    the 65-75 % window and the last 10 % of the steps so far (``tail_drop``)."""
    return cfg.tol > 0 and tail_drop(losses) < cfg.tol


def train(
    model: torch.nn.Module,
    pool: torch.Tensor,
    gt: torch.Tensor,
    pert: Perturbation,
    cfg: TrainConfig,
    seed: int,
    *,
    desc: str = "train",
    checkpoint: Path | None = None,
    resume: bool = False,
) -> list[float]:
    """Train ``model`` in place on the shapes' surface samples ``pool`` (S, P, 3) against the
    Chamfer targets ``gt`` (S, G, 3) until the convergence rule holds (checked every
    ``cfg.check_every`` steps from ``cfg.min_steps``) or ``cfg.steps`` are run; returns the
    loss of every step run. Batches are drawn on the CPU from one generator seeded with
    ``seed``, so a run is the same on every device."""
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.999))
    gen = torch.Generator().manual_seed(seed)
    dev = next(model.parameters()).device
    order, losses, start, epoch = torch.empty(0, dtype=torch.long), [], 0, -1
    if resume and checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint, model=model, optimizer=opt)
        start, extra = state["step"], state["extra"]
        order, losses, epoch = extra["order"], list(extra["losses"]), extra["epoch"]
        gen.set_state(extra["generator"])
    model.train()
    for step in progress(range(start, cfg.steps), desc=desc, total=cfg.steps - start):
        if len(order) < cfg.batch_size:  # a fresh epoch (official DataLoader, shuffle=True)
            order, epoch = torch.randperm(len(pool), generator=gen), epoch + 1
            if hasattr(model, "set_epoch"):  # CPAE's loss changes with the epoch
                model.set_epoch(epoch)
        idx, order = order[: cfg.batch_size], order[cfg.batch_size :]
        x = draw_inputs(pool[idx], pert, gen).to(dev)
        loss = model.loss(x, gt[idx].to(dev))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        done = step + 1
        check = cfg.tol > 0 and done >= cfg.min_steps and done % cfg.check_every == 0
        if check and done < cfg.steps and converged(losses, cfg):
            break
        if checkpoint is not None and cfg.checkpoint_every and done % cfg.checkpoint_every == 0:
            if done < cfg.steps:
                save_checkpoint(checkpoint, step=done, model=model, optimizer=opt,
                                extra={"order": order, "losses": losses, "epoch": epoch,
                                       "generator": gen.get_state()})  # fmt: skip
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)  # the finished model is kept by the caller's unit
    return losses


def final_loss(losses: list[float], fraction: float = 0.1) -> float:
    """Mean loss over the last ``fraction`` of the steps."""
    return float(np.mean(losses[-max(1, int(len(losses) * fraction)) :]))


def tail_drop(losses: list[float], fraction: float = 0.1) -> float:
    """How much the loss still falls at the end of training: 1 - (mean loss over the last
    ``fraction`` of the steps) / (mean over the ``fraction`` before the last quarter). Near 0
    when the curve has flattened."""
    n, w = len(losses), max(1, int(len(losses) * fraction))
    ref = losses[max(0, n * 3 // 4 - w) : max(1, n * 3 // 4)]
    return float(1 - np.mean(losses[-w:]) / np.mean(ref))


@torch.no_grad()
def predict(model: torch.nn.Module, x: torch.Tensor, batch: int = 16) -> torch.Tensor:
    """Correspondences of every input cloud, (S, N, 3) -> (S, M, 3), in eval mode."""
    model.eval()
    dev = next(model.parameters()).device
    return torch.cat([model(x[i : i + batch].to(dev))[0].cpu() for i in range(0, len(x), batch)])
