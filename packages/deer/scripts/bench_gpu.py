"""The paper's speed grid (Fig. 2; official deer/benchmarks/speedup/seq1d.py) on a GPU, as one
command with a time limit: DEER and quasi-DEER GRU forward against cuDNN nn.GRU, hidden
{1..64} x T {1k..1M}, batch 16, fp32, seeds 0-2, compared with the official V100 speed-ups.

    uv run --no-sync python packages/deer/scripts/bench_gpu.py --out DIR [--budget-s 480]
    uv run --no-sync python packages/deer/scripts/bench_gpu.py --out DIR --device cpu --tiny

It runs ``iclr24-deer reproduce --preset grid``, so DIR gets what every preset writes
(results.json with a claim per hidden size and the V100 figure beside ours, results.md,
speedup_cuda.png, units for --resume) plus v100_comparison.md, one row per grid point.
Grid points not started within --budget-s are listed as skipped; --resume runs them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iclr24_deer.bench import V100_FORWARD_SPEEDUP
from iclr24_deer.claims import speed_points
from iclr24_deer.experiment import main as reproduce

from iclr24_common import Metrics, atomic_write_text, load_results


def comparison(results: dict) -> str:
    """Markdown: our DEER / nn.GRU speed-up (mean over seeds) beside the V100 one per point."""
    metrics = Metrics()
    for name, m in results["metrics"].items():
        for seed, v in zip(m["seeds"], m["per_seed"]):
            metrics.add(name, seed, v)
    gpu = results["environment"].get("gpu", results["device"])
    lines = [f"# DEER GRU forward speed-up: {gpu} vs the paper's V100", "",
             "| hidden | T | DEER s | nn.GRU s | DEER / nn.GRU | quasi-DEER / nn.GRU | "
             "paper V100 (DEER / lax.scan) |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for n, lengths in speed_points(metrics).items():
        for T in lengths:
            p = f"speed/h{n}_T{T}/"
            v100 = V100_FORWARD_SPEEDUP.get(n, {}).get(T)
            lines.append(
                f"| {n} | {T:,} | {metrics.mean(p + 'deer_seconds'):.3g} | "
                f"{metrics.mean(p + 'nngru_seconds'):.3g} | {metrics.fmt(p + 'deer_speedup', 3)} | "
                f"{metrics.fmt(p + 'qdeer_speedup', 3)} | {v100 if v100 else '-'} |"
            )
    skipped = results.get("speed_skipped", [])
    if skipped:
        lines += ["", "Skipped: " + "; ".join(skipped)]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="run directory")
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu")
    p.add_argument("--budget-s", type=float, default=480.0,
                   help="start no new grid point after this many seconds (default 480)")  # fmt: skip
    p.add_argument("--resume", action="store_true", help="reuse the finished points in --out")
    p.add_argument("--tiny", action="store_true", help="a small grid, to test this script")
    p.add_argument("--threads", type=int, help="CPU threads (default: the cores available)")
    args = p.parse_args(argv)
    argv2 = ["reproduce", "--preset", "grid", "--device", args.device, "--out", str(args.out),
             "--set", f"speed_budget_s={args.budget_s}"]  # fmt: skip
    if args.tiny:
        argv2 += ["--seeds", "0", "1", "--set", "speed_hidden=1,4", "--set", "speed_lengths=300,1000",
                  "--set", "speed_batch=4", "--set", "speed_reps=1"]  # fmt: skip
    if args.threads is not None:
        argv2 += ["--threads", str(args.threads)]
    if args.resume:
        argv2.append("--resume")
    code = reproduce(argv2)
    if code == 0:
        atomic_write_text(args.out / "v100_comparison.md", comparison(load_results(args.out)))
        print(f"wrote {args.out / 'v100_comparison.md'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
