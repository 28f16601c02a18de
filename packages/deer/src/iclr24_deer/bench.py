"""Forward speed of DEER against the sequential GRU, as the official speed benchmark
(deer/benchmarks/speedup/seq1d.py: batch 16, input size = hidden size, fp32, warm-up calls
then timed repetitions, hidden {1..64} x T {1k..1M}), and the official V100 results."""

from __future__ import annotations

import multiprocessing as mp
import time

import torch

from iclr24_common import torch_threads

from .deer import GRUCellFn, deer_rnn

# official grid (deer/benchmarks/speedup/seq1d.py __main__)
PAPER_HIDDEN = (1, 2, 4, 8, 16, 32, 64)
PAPER_LENGTHS = (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
PAPER_BATCH = 16

# The raw runs behind the paper's Figure 2: machine-discovery/deer,
# deer/benchmarks/speedup/report-v100-16.txt (commit 6e036f8, Sept. 2023; removed from the
# repository later). V100, batch 16, fp32, an untrained flax GRUCell; the median over the 5
# logged seeds of (jitted lax.scan GRU time) / (DEER GRU time), forward only. Missing points
# ran out of memory there.
V100_FORWARD_SPEEDUP = {
    1: {1_000: 15.7, 3_000: 42.4, 10_000: 106.9, 30_000: 172.0, 100_000: 286.0, 300_000: 360.4,
        1_000_000: 493.5},
    2: {1_000: 24.8, 3_000: 48.1, 10_000: 75.0, 30_000: 79.4, 100_000: 69.8, 300_000: 76.9,
        1_000_000: 72.8},
    4: {1_000: 21.8, 3_000: 36.4, 10_000: 46.5, 30_000: 44.2, 100_000: 53.9, 300_000: 55.0,
        1_000_000: 51.8},
    8: {1_000: 15.5, 3_000: 20.1, 10_000: 21.9, 30_000: 24.1, 100_000: 25.7, 300_000: 25.1},
    16: {1_000: 7.3, 3_000: 8.3, 10_000: 8.9, 30_000: 9.2, 100_000: 9.4},
    32: {1_000: 3.5, 3_000: 3.7, 10_000: 4.1, 30_000: 4.2},
    64: {1_000: 1.3, 3_000: 1.3, 10_000: 1.3},
}  # fmt: skip


def _sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def sequential_threads(device) -> tuple[int, ...]:
    """The thread counts the sequential baseline is timed at: on a CPU with more than one
    thread, also 1 (nn.GRU's thousands of tiny per-step ops often lose from extra threads),
    so that every claim is judged against the faster of the two."""
    n = torch.get_num_threads()
    return (n, 1) if torch.device(device).type == "cpu" and n > 1 else (n,)


def timeit(fn, device, reps: int, warmup: int) -> tuple[list[float], object]:
    """Seconds of each of ``reps`` calls after ``warmup`` untimed ones, and the last output."""
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(reps):
        _sync(device)
        t0 = time.perf_counter()
        out = fn()
        _sync(device)
        times.append(time.perf_counter() - t0)
    return times, out


def benchmark_point(hidden: int, length: int, *, batch: int = PAPER_BATCH, device="cpu",
                    seed: int = 0, reps: int = 3, warmup: int = 1,
                    dtype=torch.float32) -> dict[str, float]:  # fmt: skip
    """Time one (hidden, T) point: DEER (full Jacobian), quasi-DEER (diagonal) and nn.GRU
    (torch's C++ loop on CPU, cuDNN on GPU) on one random GRU and input. Returns the median
    seconds per forward, the iterations and the max deviation from nn.GRU. On a CPU nn.GRU
    is timed at the default threads and at 1 thread; ``nngru_seconds`` is the faster."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    gru = torch.nn.GRU(hidden, hidden, batch_first=True).to(device, dtype)
    xs = torch.randn(batch, length, hidden, generator=g, dtype=dtype).to(device)
    h0 = torch.zeros(batch, hidden, dtype=dtype, device=device)
    cell = GRUCellFn.from_module(gru)
    median = lambda ts: sorted(ts)[len(ts) // 2]  # noqa: E731
    out: dict[str, float] = {}
    with torch.no_grad():
        for threads in sequential_threads(device):
            with torch_threads(threads):
                times, ref = timeit(lambda: gru(xs, h0[None])[0], device, reps, warmup)
            out[f"nngru_seconds_{threads}threads"] = median(times)
        # the baseline at its best: the faster of its thread counts (DEER keeps the default)
        out["nngru_seconds"] = min(v for k, v in out.items() if k.startswith("nngru_seconds_"))
        for jac, key in (("full", "deer"), ("diag", "qdeer")):
            times, res = timeit(lambda j=jac: deer_rnn(cell, h0, xs, jacobian=j), device, reps,
                                warmup)  # fmt: skip
            out[f"{key}_seconds"] = median(times)
            out[f"{key}_iters"] = res.iterations
            out[f"{key}_converged"] = float(res.converged)
            out[f"{key}_err"] = float((res.y - ref).abs().max())
    out["deer_speedup"] = out["nngru_seconds"] / out["deer_seconds"]
    out["qdeer_speedup"] = out["nngru_seconds"] / out["qdeer_seconds"]
    return out


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


def _rss_fields() -> dict[str, int]:
    """VmRSS (now) and VmHWM (peak of this address space) in bytes, from /proc/self/status.
    (getrusage's ru_maxrss is no use here: Linux carries the parent's peak over exec.)"""
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, val = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(val.split()[0]) * 1024
    return out


def _rss_child(jacobian: str, hidden: int, length: int, batch: int, seed: int, queue) -> None:
    """In a fresh process: peak RSS growth of one DEER forward + backward (bytes)."""
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    cell = GRUCellFn.from_module(torch.nn.GRU(hidden, hidden, batch_first=True))
    g = torch.Generator().manual_seed(seed)
    xs = torch.randn(batch, length, hidden, generator=g).requires_grad_()
    w = torch.randn(batch, length, hidden, generator=g)
    h0 = torch.zeros(batch, hidden)
    (deer_rnn(cell, h0, xs[:, :8], jacobian=jacobian).y.sum()).backward()  # load the kernels
    xs.grad = None
    try:  # reset the peak to the current RSS (Linux >= 4.0), so that it is the solve's
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    before = _rss_fields()
    res = deer_rnn(cell, h0, xs, jacobian=jacobian)
    (res.y * w).sum().backward()
    peak = _rss_fields()["VmHWM"]
    queue.put({"growth": peak - before["VmRSS"], "peak_reached": float(peak > before["VmHWM"]),
               "iters": res.iterations})  # fmt: skip


def peak_rss_growth(jacobian: str, hidden: int, length: int, batch: int, seed: int) -> dict:
    """Peak RSS growth (bytes) of a GRU DEER forward + backward in a child process (spawned:
    nothing of the parent's heap counts); ``peak_reached`` 1 when the peak was set by the
    solve and not before it (otherwise the growth is a lower bound)."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_rss_child, args=(jacobian, hidden, length, batch, seed, queue))
    proc.start()
    out = queue.get(timeout=600)
    proc.join()
    return out
