"""The paper's GPU speed grid (Fig. 2; official deer/benchmarks/speedup/seq1d.py): DEER GRU
forward against a GRUCell loop and cuDNN nn.GRU, hidden {1..64} x T {1k..1M}, batch 16, fp32.

    uv run --no-sync python packages/deer/scripts/bench_gpu.py --out DIR            # GPU grid
    uv run --no-sync python packages/deer/scripts/bench_gpu.py --out DIR --tiny     # CPU check

Writes DIR/bench_gpu.json (one row per grid point, written after every point), DIR/bench_gpu.md
and DIR/bench_gpu.png. Points whose full Jacobian would not fit are recorded as skipped;
an out-of-memory point is recorded and the grid goes on.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from iclr24_deer.bench import PAPER_BATCH, PAPER_HIDDEN, PAPER_LENGTHS, benchmark_point

from iclr24_common import DeviceError, atomic_write_json, atomic_write_text, resolve_device


def _markdown(rows: list[dict], device: str) -> str:
    head = (
        "| hidden | T | DEER s | iters | qDEER s | GRUCell loop s | nn.GRU s | DEER vs loop | "
        "DEER vs nn.GRU | qDEER vs nn.GRU | max err |"
    )
    lines = [f"# DEER GRU forward speed on {device}", "", head, "|" + "---|" * 11]
    f = lambda r, k, fmt: format(r[k], fmt) if k in r else "-"  # noqa: E731
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['hidden']} | {r['T']} | {r['skipped']} |" + " |" * 9)
            continue
        lines.append(
            f"| {r['hidden']} | {r['T']} | {f(r, 't_deer', '.3g')} | {f(r, 'iters_deer', 'd')} | "
            f"{f(r, 't_qdeer', '.3g')} | {f(r, 't_loop', '.3g')} | {f(r, 't_nngru', '.3g')} | "
            f"{f(r, 'speedup_deer_vs_loop', '.1f')} | {f(r, 'speedup_deer_vs_nngru', '.2f')} | "
            f"{f(r, 'speedup_qdeer_vs_nngru', '.2f')} | {f(r, 'err_deer', '.1e')} |"
        )
    return "\n".join(lines) + "\n"


def _figure(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, base, name in ((axes[0], "loop", "GRUCell loop"), (axes[1], "nngru", "nn.GRU")):
        for n in sorted({r["hidden"] for r in rows}):
            rs = [r for r in rows if r["hidden"] == n and f"speedup_deer_vs_{base}" in r]
            if rs:
                ax.loglog(
                    [r["T"] for r in rs],
                    [r[f"speedup_deer_vs_{base}"] for r in rs],
                    "o-",
                    label=f"hidden {n}",
                )
        ax.axhline(1.0, color="k", lw=0.5)
        ax.set_xlabel("sequence length T")
        ax.set_ylabel(f"DEER speed-up vs {name}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument("--device", default="auto", help="auto (cuda if present), cuda, cpu")
    p.add_argument("--hidden", type=int, nargs="+", default=list(PAPER_HIDDEN))
    p.add_argument("--lengths", type=int, nargs="+", default=list(PAPER_LENGTHS))
    p.add_argument("--batch", type=int, default=PAPER_BATCH)
    p.add_argument("--reps", type=int, default=5, help="timed repetitions (official: 20)")
    p.add_argument("--warmup", type=int, default=2, help="warm-up calls (official: 5)")
    p.add_argument(
        "--loop-max-t",
        type=int,
        default=100_000,
        help="skip the Python GRUCell loop above this T (it takes minutes)",
    )
    p.add_argument(
        "--mem-fraction",
        type=float,
        default=0.4,
        help="skip points whose full Jacobian exceeds this fraction of device memory",
    )
    p.add_argument("--budget-s", type=float, default=540.0, help="stop starting points after this")
    p.add_argument("--tiny", action="store_true", help="a small CPU grid to test this script")
    args = p.parse_args(argv)
    if args.tiny:
        args.hidden, args.lengths, args.batch, args.reps, args.warmup = [1, 4], [300, 1000], 4, 1, 1
    try:
        device = resolve_device(args.device)
    except DeviceError as e:
        print(f"bench_gpu: error: {e}", file=sys.stderr)
        return 2
    if device.type == "cuda":
        mem = torch.cuda.get_device_properties(device).total_memory
        name = torch.cuda.get_device_name(device)
    else:
        mem, name = 8 * 2**30, "cpu"
    args.out.mkdir(parents=True, exist_ok=True)
    rows, t_start = [], time.perf_counter()
    print(
        f"device {name}; grid hidden {args.hidden} x T {args.lengths}, batch {args.batch}",
        flush=True,
    )
    for n in args.hidden:
        for T in args.lengths:
            if time.perf_counter() - t_start > args.budget_s:
                rows.append({"hidden": n, "T": T, "skipped": "time budget"})
                continue
            # J (B, T, n, n) plus ~4 scan temporaries of its size
            need = 5 * args.batch * T * n * n * 4
            if need > args.mem_fraction * mem:
                rows.append({"hidden": n, "T": T, "skipped": f"memory ({need / 2**30:.0f} GiB)"})
                continue
            base = ("nn.GRU", "loop") if T <= args.loop_max_t else ("nn.GRU",)
            try:
                row = benchmark_point(
                    n,
                    T,
                    batch=args.batch,
                    device=device,
                    reps=args.reps,
                    warmup=args.warmup,
                    baselines=base,
                )
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                row = {"hidden": n, "T": T, "skipped": "out of memory"}
            row["gpu"] = name
            rows.append(row)
            print(
                {k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items()},
                flush=True,
            )
            atomic_write_json(args.out / "bench_gpu.json", rows)
    atomic_write_json(args.out / "bench_gpu.json", rows)
    atomic_write_text(args.out / "bench_gpu.md", _markdown(rows, name))
    _figure([r for r in rows if "skipped" not in r], args.out / "bench_gpu.png")
    print(f"wrote {args.out}/bench_gpu.json, .md, .png ({time.perf_counter() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
