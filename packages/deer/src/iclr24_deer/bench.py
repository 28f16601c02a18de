"""Forward-pass speed of DEER against sequential GRUs (the official speed benchmark:
deer/benchmarks/speedup/seq1d.py: batch 16, input size = hidden size, fp32, a warm-up then
timed repetitions, hidden {1..64} x T {1k..1M})."""

from __future__ import annotations

import math
import time

import torch

from .deer import GRUCellFn, deer_rnn

# official grid (deer/benchmarks/speedup/seq1d.py __main__)
PAPER_HIDDEN = (1, 2, 4, 8, 16, 32, 64)
PAPER_LENGTHS = (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
PAPER_BATCH = 16


def _sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def _timeit(fn, device, reps: int, warmup: int) -> tuple[float, object]:
    out = None
    for _ in range(warmup):
        out = fn()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(reps):
        out = fn()
    _sync(device)
    return (time.perf_counter() - t0) / max(reps, 1), out


def gru_loop(cell: torch.nn.GRUCell, h0: torch.Tensor, xs: torch.Tensor) -> torch.Tensor:
    """The plain sequential baseline: one nn.GRUCell call per step. xs (B, T, m)."""
    h, ys = h0, []
    for t in range(xs.shape[1]):
        h = cell(xs[:, t], h)
        ys.append(h)
    return torch.stack(ys, 1)


def benchmark_point(
    hidden: int, length: int, *, batch: int = PAPER_BATCH, device="cpu", seed: int = 0,
    reps: int = 1, warmup: int = 1, baselines=("loop", "nn.GRU"), jacobians=("full", "diag"),
    dtype=torch.float32,
) -> dict:  # fmt: skip
    """Time one (hidden, T) point: DEER (full / diag Jacobian), a GRUCell loop and nn.GRU
    (cuDNN on GPU). Returns seconds per forward, speed-ups, iterations and max errors."""
    g = torch.Generator().manual_seed(seed)
    gru = torch.nn.GRU(hidden, hidden, batch_first=True).to(device, dtype)
    cellm = torch.nn.GRUCell(hidden, hidden).to(device, dtype)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cellm, name).copy_(getattr(gru, name + "_l0"))
    xs = torch.randn(batch, length, hidden, generator=g, dtype=dtype).to(device)
    h0 = torch.zeros(batch, hidden, dtype=dtype, device=device)
    cell = GRUCellFn.from_module(gru)
    row: dict = {"hidden": hidden, "T": length, "batch": batch, "device": str(device)}
    with torch.no_grad():
        ref = None
        if "nn.GRU" in baselines:
            row["t_nngru"], out = _timeit(lambda: gru(xs, h0[None])[0], device, reps, warmup)
            ref = out
        if "loop" in baselines:
            row["t_loop"], out = _timeit(lambda: gru_loop(cellm, h0, xs), device, reps, warmup)
            ref = out if ref is None else ref
        for jac in jacobians:
            t, res = _timeit(lambda j=jac: deer_rnn(cell, h0, xs, jacobian=j), device, reps, warmup)
            key = "deer" if jac == "full" else "qdeer"
            row[f"t_{key}"], row[f"iters_{key}"] = t, res.iterations
            row[f"converged_{key}"] = bool(res.converged)
            if ref is not None:
                row[f"err_{key}"] = float((res.y - ref).abs().max())
            for base in ("loop", "nngru"):
                if f"t_{base}" in row:
                    row[f"speedup_{key}_vs_{base}"] = row[f"t_{base}"] / t
            # parallel depth: iterations x ceil(log2 T) scan levels, against T sequential steps
            row[f"depth_{key}"] = res.iterations * math.ceil(math.log2(max(length, 2)))
    return row


def full_jacobian_bytes(hidden: int, length: int, batch: int, itemsize: int = 4) -> int:
    return batch * length * hidden * hidden * itemsize


def saved_tensor_bytes(fn) -> tuple[int, object]:
    """Bytes of the distinct storages autograd keeps for backward while ``fn()`` builds its
    graph (the memory a training step holds between forward and backward), and fn's output."""
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return sum(storages.values()), out
