"""Time every package's smoke reproduction, alone: ``make bench-smoke``.

The smoke's budget (under 60 s wall on 2 cores) is a speed target, not a test: a test's
verdict must not depend on what else the machine is doing. This benchmark runs each
package's ``iclr24-<slug> reproduce --preset smoke`` ``--repeat`` times one after another (the
first run of a package warms the disk cache and is kept), and reports the median wall and CPU
seconds (user + system of the child, all threads) with the budget beside them. Run it on an
otherwise idle machine; the table goes to stdout and to ``--out`` (Markdown, with a JSON twin).

    python tools/bench_smoke.py [--repeat 3] [--out docs/bench-smoke.md] [slug ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 60.0


def packages() -> list[str]:
    return sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_smoke(slug: str, bindir: Path) -> tuple[float, float, int]:
    """One smoke of ``slug`` in a fresh --out: (wall seconds, CPU seconds, exit code)."""
    exe = bindir / f"iclr24-{slug}"
    with tempfile.TemporaryDirectory(prefix=f"bench-{slug}-") as out:
        cpu0, t0 = _children_cpu(), time.perf_counter()
        proc = subprocess.run([str(exe), "reproduce", "--preset", "smoke", "--out", out],
                              capture_output=True, text=True)  # fmt: skip
        return time.perf_counter() - t0, _children_cpu() - cpu0, proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_smoke", description=__doc__.split("\n")[0])
    ap.add_argument("slugs", nargs="*", help="packages (default: all)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per package (median)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "bench-smoke.md")
    args = ap.parse_args(argv)
    bindir = Path(sys.executable).parent
    slugs = args.slugs or packages()
    unknown = [s for s in slugs if not (bindir / f"iclr24-{s}").exists()]
    if unknown or args.repeat < 1:
        print(f"bench_smoke: not installed here: {', '.join(unknown)} (make setup)"
              if unknown else "bench_smoke: --repeat must be >= 1", file=sys.stderr)  # fmt: skip
        return 2
    rows = []
    for slug in slugs:
        runs = [time_smoke(slug, bindir) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        ok = all(r[2] == 0 for r in runs)
        rows.append({"package": slug, "wall_s": wall, "cpu_s": cpu, "runs": args.repeat,
                     "walls": [r[0] for r in runs], "ok": ok, "within_budget": wall < BUDGET_S})  # fmt: skip
        print(
            f"{slug:<14} wall {wall:6.1f} s  cpu {cpu:6.1f} s  "
            f"{'ok' if ok else 'FAILED'}{'' if wall < BUDGET_S else '  OVER BUDGET'}",
            flush=True,
        )
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    head = (f"Smoke reproductions timed alone by `make bench-smoke` on {time.strftime('%Y-%m-%d')}: "
            f"{cores} cores ({platform.processor() or platform.machine()}), median of "
            f"{args.repeat} runs each, default threads; budget {BUDGET_S:.0f} s wall.")  # fmt: skip
    lines = [
        head,
        "",
        "| package | wall (s) | CPU (s) | runs (wall s) | exit |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        mark = "" if r["within_budget"] else " (over budget)"
        lines.append(f"| {r['package']} | {r['wall_s']:.1f}{mark} | {r['cpu_s']:.1f} | "
                     f"{', '.join(f'{w:.1f}' for w in r['walls'])} | {'0' if r['ok'] else 'failed'} |")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {args.out} and {args.out.with_suffix('.json').name}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
