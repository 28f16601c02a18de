"""Distributed data parallel from ``torchrun``'s environment; a no-op for a single process.

    torchrun --nproc_per_node=N -m iclr24_<slug>.cli reproduce ...

uses NCCL on CUDA and gloo on CPU. Only rank 0 logs and writes files.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class DistInfo:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    backend: str | None = None

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def under_torchrun() -> bool:
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ and "LOCAL_RANK" in os.environ


def init_distributed(device_type: str | None = None) -> DistInfo:
    """Join the process group that torchrun set up (idempotent).

    ``device_type`` "cuda" selects NCCL and pins this process to ``cuda:LOCAL_RANK``;
    anything else selects gloo. Outside torchrun this returns a single-process DistInfo.
    On ranks other than 0 the ``iclr24`` loggers are quieted to warnings.
    """
    if not under_torchrun():
        return DistInfo()
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ["LOCAL_RANK"])
    if device_type is None:
        device_type = "cuda" if torch.cuda.is_available() else "cpu"
    backend = "nccl" if device_type == "cuda" else "gloo"
    if not dist.is_initialized():
        if backend == "nccl":
            torch.cuda.set_device(local)
        dist.init_process_group(backend=backend)
    if rank != 0:
        logging.getLogger("iclr24").setLevel(logging.WARNING)
    return DistInfo(rank=rank, world_size=world, local_rank=local, backend=backend)


def get_dist_info() -> DistInfo:
    try:
        import torch.distributed as dist
    except ImportError:
        return DistInfo()
    if not (dist.is_available() and dist.is_initialized()):
        return DistInfo()
    return DistInfo(
        dist.get_rank(),
        dist.get_world_size(),
        int(os.environ.get("LOCAL_RANK", 0)),
        dist.get_backend(),
    )


def is_main_process() -> bool:
    return get_dist_info().is_main


def rank0_only(fn):
    """Decorator: run ``fn`` on rank 0 only (returns None elsewhere)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if is_main_process():
            return fn(*args, **kwargs)
        return None

    return wrapper


def barrier() -> None:
    if get_dist_info().is_distributed:
        import torch.distributed as dist

        dist.barrier()


def all_reduce_mean(tensor):
    """Average a tensor over all processes in place (identity for one process)."""
    info = get_dist_info()
    if info.is_distributed:
        import torch.distributed as dist

        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        tensor /= info.world_size
    return tensor


def all_gather_cat(tensor):
    """Concatenate a 1-D+ tensor from every process along dim 0 (same shape on each)."""
    info = get_dist_info()
    if not info.is_distributed:
        return tensor
    import torch
    import torch.distributed as dist

    parts = [torch.empty_like(tensor) for _ in range(info.world_size)]
    dist.all_gather(parts, tensor.contiguous())
    return torch.cat(parts, dim=0)


def cleanup() -> None:
    try:
        import torch.distributed as dist
    except ImportError:
        return
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
