"""Checkpoints for long runs: model, optimizer, scheduler, RNG states and step, written
atomically so that an interrupted run can ``--resume`` from the last complete one."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import numpy as np

from .io import atomic_write_bytes


def rng_state() -> dict[str, Any]:
    import torch

    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),  # noqa: NPY002 (global state is what we save)
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])  # noqa: NPY002
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    path: str | Path,
    *,
    step: int,
    model=None,
    optimizer=None,
    scheduler=None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Save everything needed to continue training at ``step`` (atomic write)."""
    import torch

    payload = {
        "step": int(step),
        "model": _unwrap(model).state_dict() if model is not None else None,
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "rng": rng_state(),
        "extra": extra or {},
    }
    buf = io.BytesIO()
    torch.save(payload, buf)
    return atomic_write_bytes(path, buf.getvalue())


def load_checkpoint(
    path: str | Path,
    *,
    model=None,
    optimizer=None,
    scheduler=None,
    map_location="cpu",
    restore_rng: bool = True,
) -> dict[str, Any]:
    """Load a checkpoint into the given objects; returns ``{"step", "extra"}``."""
    import torch

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}: start without --resume, or check --out")
    payload = torch.load(path, map_location=map_location, weights_only=False)
    if model is not None and payload["model"] is not None:
        _unwrap(model).load_state_dict(payload["model"])
    if optimizer is not None and payload["optimizer"] is not None:
        optimizer.load_state_dict(payload["optimizer"])
    if scheduler is not None and payload["scheduler"] is not None:
        scheduler.load_state_dict(payload["scheduler"])
    if restore_rng:
        set_rng_state(payload["rng"])
    return {"step": payload["step"], "extra": payload["extra"]}


def _unwrap(model):
    return getattr(model, "module", model)  # DistributedDataParallel wraps the model
