"""Check every package on a CUDA machine: ``make gpu-check``.

For each package it runs

1. the smoke reproduction on the CPU and on the GPU (``--device cpu`` / ``--device cuda``) and
   compares their non-timing metrics (the largest absolute difference, and relative to the
   CPU value): the same code path must give the same numbers up to floating point;
2. the package's paper-path test (``tests/test_<module>_paper_path.py``: the ``paper`` preset on
   a miniature of its real data format) with ``ICLR24_TEST_DEVICE=cuda``;
3. where the machine has 2 GPUs, the torchrun tests (2 processes, NCCL) of the packages that
   train data-parallel.

It prints one table (package, step, seconds, pass/fail, max difference from the CPU run) and
writes it to ``--out`` (Markdown, with a JSON twin). Exit 0 when every step passes.

    python tools/gpu_check.py [--out docs/gpu-check.md] [--tolerance 1e-3] [slug ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMING = ("seconds", "speedup", "time", "throughput", "per_s")
# the packages whose official code trains data-parallel, and their torchrun tests
TORCHRUN_TESTS = {
    "relora": "packages/relora/tests/test_relora_torchrun.py",
    "infobatch": "packages/infobatch/tests/test_infobatch_distributed.py",
}


def packages() -> list[str]:
    return sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())


def smoke(slug: str, device: str, out: Path) -> tuple[float, int, dict | None, str]:
    """One smoke on ``device``: (seconds, exit code, results dict, the stderr tail)."""
    exe = Path(sys.executable).parent / f"iclr24-{slug}"
    t0 = time.perf_counter()
    proc = subprocess.run([str(exe), "reproduce", "--preset", "smoke", "--device", device,
                           "--out", str(out)], capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - t0
    res = json.loads((out / "results.json").read_text()) if proc.returncode == 0 else None
    return wall, proc.returncode, res, proc.stderr.strip()[-300:]


def max_difference(cpu: dict, gpu: dict) -> tuple[float, float, str]:
    """The largest absolute and relative difference over the non-timing metrics' per-seed
    values that both runs have, and the metric where the relative one is largest."""
    worst_abs = worst_rel = 0.0
    where = ""
    for name, m in cpu["metrics"].items():
        if any(w in name for w in TIMING) or name not in gpu["metrics"]:
            continue
        for a, b in zip(m["per_seed"], gpu["metrics"][name]["per_seed"], strict=False):
            if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
                continue
            d = abs(a - b)
            rel = d / max(abs(a), 1e-12)
            worst_abs = max(worst_abs, d)
            if rel > worst_rel:
                worst_rel, where = rel, name
    return worst_abs, worst_rel, where


def pytest_on_gpu(path: str) -> tuple[float, int, str]:
    env = {**os.environ, "ICLR24_TEST_DEVICE": "cuda"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path],
                          capture_output=True, text=True, env=env, cwd=ROOT)  # fmt: skip
    tail = (proc.stdout.strip().splitlines() or [""])[-1]
    return time.perf_counter() - t0, proc.returncode, tail


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gpu_check", description=__doc__.split("\n")[0])
    ap.add_argument("slugs", nargs="*", help="packages (default: all)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "gpu-check.md")
    ap.add_argument("--tolerance", type=float, default=1e-3,
                    help="largest relative difference from the CPU smoke that passes")  # fmt: skip
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("gpu_check: torch is not installed here (make setup)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device here: run it on a machine with an NVIDIA GPU",
              file=sys.stderr)  # fmt: skip
        return 2
    gpus, name = torch.cuda.device_count(), torch.cuda.get_device_name(0)
    rows = []

    def row(slug, step, seconds, ok, diff=""):
        rows.append({"package": slug, "step": step, "seconds": seconds, "pass": ok, "diff": diff})
        print(f"{slug:<14} {step:<18} {seconds:7.1f} s  {'pass' if ok else 'FAIL'}  {diff}",
              flush=True)  # fmt: skip

    for slug in args.slugs or packages():
        with tempfile.TemporaryDirectory(prefix=f"gpu-{slug}-") as tmp:
            _, code_cpu, cpu, _ = smoke(slug, "cpu", Path(tmp) / "cpu")
            wall, code, gpu, err = smoke(slug, "cuda", Path(tmp) / "cuda")
            if code or code_cpu or gpu is None or cpu is None:
                row(slug, "smoke (cuda)", wall, False, f"exit {code} (cpu {code_cpu}): {err}")
            else:
                d_abs, d_rel, where = max_difference(cpu, gpu)
                row(slug, "smoke (cuda)", wall, d_rel <= args.tolerance,
                    f"max |cuda - cpu| {d_abs:.3g} (relative {d_rel:.3g}{', ' + where if where else ''})")  # fmt: skip
        module = slug.replace("-", "_")
        path = f"packages/{slug}/tests/test_{module}_paper_path.py"
        wall, code, tail = pytest_on_gpu(path)
        row(slug, "paper path (cuda)", wall, code == 0, tail)
        if slug in TORCHRUN_TESTS:
            if gpus >= 2:
                wall, code, tail = pytest_on_gpu(TORCHRUN_TESTS[slug])
                row(slug, "torchrun 2x (nccl)", wall, code == 0, tail)
            else:
                print(f"{slug:<14} torchrun 2x (nccl)  skipped: {gpus} GPU (needs 2)")
    head = (f"`make gpu-check` on {time.strftime('%Y-%m-%d')}: {gpus} x {name}, torch "
            f"{torch.__version__}; a smoke passes when its non-timing metrics are within "
            f"{args.tolerance:g} (relative) of the CPU smoke's.")  # fmt: skip
    lines = [head, "", "| package | step | seconds | result | max difference from CPU / detail |",
             "|---|---|---|---|---|"]  # fmt: skip
    lines += [f"| {r['package']} | {r['step']} | {r['seconds']:.1f} | "
              f"{'pass' if r['pass'] else '**fail**'} | {str(r['diff']).replace('|', '/')} |"
              for r in rows]  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0 if all(r["pass"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
