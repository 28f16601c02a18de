"""DEER / quasi-DEER forward time on CPU before and after a change, against nn.GRU, with
interleaved repeats (issue 40): every repeat times nn.GRU (1 and 2 threads), the old and the
new solver one after the other on the same input, so load on the shared machine hits all of
them alike; the ratio nn.GRU (faster thread count) / method is taken per repeat and its
median and quartiles reported.

    uv run --no-sync python packages/deer/scripts/cpu_before_after.py --before 108d5fa \\
        --out packages/deer/results/bench/cpu_before_after.json [--hidden 1 4 16] [--T 10000]

--before is a commit whose packages/deer/src/iclr24_deer/deer.py is loaded as the "before"
solver (git show); the "after" solver is the installed iclr24_deer.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from iclr24_deer import deer as after  # noqa: E402


def load_before(commit: str):
    src = subprocess.run(["git", "show", f"{commit}:packages/deer/src/iclr24_deer/deer.py"],
                         check=True, capture_output=True, text=True).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "deer_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("deer_before", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def quartiles(xs: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return q[0], statistics.median(xs), q[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="git commit of the old deer.py")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--hidden", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--T", type=int, nargs="+", default=[10_000])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args(argv)
    if min(a.hidden + a.T + a.threads + [a.batch, a.reps]) < 1:
        print("error: sizes must be >= 1", file=sys.stderr)
        return 2
    before = load_before(a.before)
    rows = []
    for n in a.hidden:
        for T in a.T:
            torch.manual_seed(0)
            gru = torch.nn.GRU(n, n, batch_first=True)
            xs = torch.randn(a.batch, T, n, generator=torch.Generator().manual_seed(0))
            h0 = torch.zeros(a.batch, n)
            cells = {"before": before.GRUCellFn.from_module(gru),
                     "after": after.GRUCellFn.from_module(gru)}  # fmt: skip
            for threads in a.threads:
                torch.set_num_threads(threads)
                fns = {}
                for ver, mod in (("before", before), ("after", after)):
                    for jac, key in (("full", "deer"), ("diag", "qdeer")):
                        fns[f"{key}_{ver}"] = (lambda m=mod, c=cells[ver], j=jac, h=h0, x=xs:
                                               m.deer_rnn(c, h, x, jacobian=j))  # fmt: skip
                times = {k: [] for k in ["nngru_1thr", "nngru_dflt", *fns]}
                iters, err = {}, {}
                with torch.no_grad():
                    ref = gru(xs, h0[None])[0]
                    for k, f in fns.items():  # warm-up, iterations, error
                        res = f()
                        iters[k], err[k] = res.iterations, float((res.y - ref).abs().max())
                    for _ in range(a.reps):
                        for k in times:
                            if k.startswith("nngru"):
                                torch.set_num_threads(1 if k == "nngru_1thr" else threads)
                                t0 = time.perf_counter()
                                gru(xs, h0[None])
                                times[k].append(time.perf_counter() - t0)
                                torch.set_num_threads(threads)
                            else:
                                t0 = time.perf_counter()
                                fns[k]()
                                times[k].append(time.perf_counter() - t0)
                gru_best = [min(x, y) for x, y in zip(times["nngru_1thr"], times["nngru_dflt"])]
                row = {
                    "hidden": n,
                    "T": T,
                    "batch": a.batch,
                    "threads": threads,
                    "reps": a.reps,
                    "nngru_ms": quartiles([1e3 * t for t in gru_best]),
                }
                for k in fns:
                    row[f"{k}_ms"] = quartiles([1e3 * t for t in times[k]])
                    row[f"{k}_speedup"] = quartiles([g / t for g, t in zip(gru_best, times[k])])
                    row[f"{k}_iters"] = iters[k]
                    row[f"{k}_err"] = err[k]
                rows.append(row)
                print(f"h{n} T{T} {threads}thr: nn.GRU {row['nngru_ms'][1]:.1f} ms; " + "; ".join(
                    f"{k} {row[f'{k}_ms'][1]:.1f} ms ({row[f'{k}_speedup'][1]:.2f}x "
                    f"[{row[f'{k}_speedup'][0]:.2f}, {row[f'{k}_speedup'][2]:.2f}], "
                    f"{iters[k]} it)" for k in fns), flush=True)  # fmt: skip
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"before_commit": a.before, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
