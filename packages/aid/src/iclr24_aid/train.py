"""The one training loop (official ``SARtask/train.py``), with a validation split for
checkpoint selection, and the evaluations of a trained model."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from iclr24_common import progress

from .data import SAR, Batch
from .fwm import FWM


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation; defaults are the official SAR script's (``SARtask/train.py``)."""

    steps: int = 30_000
    """Iterations (official: 30000)."""
    batch_size: int = 64
    """Sequences per step (official: 64)."""
    lr: float = 1e-3
    """Adam learning rate (official: 1e-3, betas (0.9, 0.98), eps 1e-9)."""
    clip: float = 50.0
    """Gradient-norm clipping (official: 50)."""
    eval_every: int = 500
    """Steps between evaluations (official check_freq: 500)."""
    val_sequences: int = 64
    """Validation sequences: seen combinations at the test length (checkpoint selection)."""


@dataclass
class TrainResult:
    model: FWM
    """The model at the checkpoint chosen on validation."""
    history: dict[str, list[float]] = field(default_factory=dict)
    chosen_step: int = 0
    official_max_test: float = 0.0
    """What the official script reports: the best test accuracy over all evaluations."""
    final_test: float = 0.0
    """Test accuracy after the last step."""
    optimizer_steps: int = 0
    """Adam steps actually taken (read from the optimizer's own step counters)."""


def optimizer_steps(opt: torch.optim.Optimizer) -> int:
    """Steps an Adam-style optimizer has taken: the largest per-parameter ``step`` counter in
    its state (0 before the first step). Counted by the optimizer, not by the loop."""
    return int(max((float(s["step"]) for s in opt.state.values() if "step" in s), default=0))


def model_device(model: nn.Module) -> torch.device:
    """The device a model's parameters are on (its batches are moved there)."""
    return next(model.parameters()).device


def accuracy(model: nn.Module, batch: Batch, candidates=None) -> float:
    """Fraction of queried values recalled (PAD targets ignored), in eval mode. With
    ``candidates`` (token ids) the answer is the best-scoring candidate only: a diagnostic that
    removes the output layer's prior over value groups."""
    was = model.training
    model.eval()
    batch = batch.to(model_device(model))
    with torch.no_grad():
        logits = model(batch.keys, batch.values, batch.flags)[:, -batch.targets.shape[1] :]
    model.train(was)
    if candidates is None:
        pred = logits.argmax(-1)
    else:
        ids = torch.as_tensor(candidates, device=logits.device)
        pred = ids[logits[..., ids].argmax(-1)]
    mask = batch.targets != 0
    return float((pred[mask] == batch.targets[mask]).float().mean())


def loss_fn(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy on the decoder steps, PAD ignored, averaged over every decoder step as the
    official script does (``reduction='none'`` then ``.mean()``)."""
    per_step = nn.functional.cross_entropy(
        logits.transpose(1, 2), targets, ignore_index=0, reduction="none"
    )
    return per_step.mean()


def train(
    task: SAR,
    model: FWM,
    config: TrainConfig,
    pairs: int,
    seed: int,
    desc: str = "",
) -> TrainResult:
    """Train ``model`` on ``task`` sequences of ``pairs`` pairs; keep the checkpoint with the best
    validation accuracy (seen combinations, test length; ties go to the later step)."""
    rng = np.random.default_rng([seed, 1])
    device = model_device(model)  # the run's --device: the model is there, batches follow it
    val = task.sample(config.val_sequences, task.words, np.random.default_rng([seed, 2]))
    train_probe = task.sample(config.val_sequences, pairs, np.random.default_rng([seed, 3]))
    test = task.test()
    opt = torch.optim.Adam(model.parameters(), lr=config.lr, betas=(0.9, 0.98), eps=1e-9)
    hist: dict[str, list[float]] = {"step": [], "train": [], "val": [], "test": [], "loss": []}
    best, best_state, running = -1.0, None, []
    model.train()
    for step in progress(range(1, config.steps + 1), desc=desc, total=config.steps):
        batch = task.sample(config.batch_size, pairs, rng).to(device)
        logits = model(batch.keys, batch.values, batch.flags)[:, -batch.targets.shape[1] :]
        loss = loss_fn(logits, batch.targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
        running.append(loss.item())
        if step % config.eval_every == 0 or step == config.steps:
            v = accuracy(model, val)
            hist["step"].append(step)
            hist["loss"].append(float(np.mean(running)))
            hist["train"].append(accuracy(model, train_probe))
            hist["val"].append(v)
            hist["test"].append(accuracy(model, test))  # logged, never used for selection
            running = []
            if v >= best:
                best, best_state, chosen = v, copy.deepcopy(model.state_dict()), step
    final_test = hist["test"][-1]
    model.load_state_dict(best_state)
    model.eval()
    return TrainResult(model, hist, chosen, max(hist["test"]), final_test, optimizer_steps(opt))


def role_cosines(model: FWM, batch: Batch) -> dict[str, float]:
    """Disentanglement of the binding roles (paper Section 5 analysis), on the storing steps
    of ``batch``: the TPR role of a pair is r1 x r2 (its flattened outer product).

    ``cross_key``: mean |cos| between the roles of different keys in one sequence (0: roles
    orthogonal, so bindings do not interfere). ``same_key``: mean cos between the roles of one
    key across sequences where it is stored with different values (1: the role depends on the
    key only, as a systematic decomposition should)."""
    model.eval()
    batch = batch.to(model_device(model))
    with torch.no_grad():
        _, binding, _ = model.components(batch.keys, batch.values, batch.flags)
    N = batch.targets.shape[1] - 1
    r1, r2 = binding[1 : N + 1, :, 0], binding[1 : N + 1, :, 1]  # (N, B, m) storing steps
    role = nn.functional.normalize((r1[..., :, None] * r2[..., None, :]).flatten(-2), dim=-1)
    role = role.transpose(0, 1)  # (B, N, m*m)
    within = role @ role.transpose(1, 2)  # (B, N, N)
    off = ~torch.eye(N, dtype=torch.bool, device=role.device)
    out = {"cross_key": float(within[:, off].abs().mean())}
    keys = batch.keys[:, 1 : N + 1]
    if bool((keys == keys[:1]).all()):  # same key order in every sequence (the test set)
        across = torch.einsum("bnd,cnd->nbc", role, role)  # (N, B, B)
        offb = ~torch.eye(role.shape[0], dtype=torch.bool, device=role.device)
        out["same_key"] = float(across[:, offb].mean())
    return out
