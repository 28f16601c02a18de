"""Run the CI legs (`make test-isolated-<leg>`) in lanes, one core per lane: `make test`.

Each leg is a fresh environment and its own pytest run; most of a leg is one busy Python
process, so on an N-core machine N lanes finish the suite about N times sooner than one.
Every lane is pinned to its own core (CPU affinity), so a leg sees one core, sizes its
torch/BLAS pools to it (`--threads` defaults to the cores a process may use) and two legs
never fight over threads. Lanes take the next leg from one queue; a leg's output goes to
``$LEG_ROOT/logs/<leg>.log`` and is printed whole when the leg fails. Exit status: 0 when
every leg passed, 1 otherwise.

    python3 tools/run_legs.py [--lanes N] LEG [LEG ...]

``--lanes`` (or ``LANES=``) defaults to the cores this process may use; ``--lanes 1`` runs
the legs one after another on all cores, as a single lane.

The queue is ordered longest leg first (the legs' times measured in the last full run on one
core, committed in ``tools/leg_times.json``; a leg not listed goes first): two lanes then end
within about one short leg of each other, rather than one lane idling while the other runs
the longest leg last. ``--record`` rewrites that file from this run's times.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

TIMES = Path(__file__).with_name("leg_times.json")


def allowed_cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows: no affinity, one lane
        return []


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("legs", nargs="+")
    p.add_argument("--lanes", type=int, default=int(os.environ.get("LANES") or 0) or None)
    p.add_argument("--make", default=os.environ.get("MAKE", "make"))
    p.add_argument("--record", action="store_true",
                   help=f"write this run's leg times to {TIMES.name} (for the queue's order)")  # fmt: skip
    args = p.parse_args(argv)
    known = json.loads(TIMES.read_text()) if TIMES.exists() else {}
    # longest first; a leg with no recorded time (new) first of all
    args.legs = sorted(args.legs, key=lambda leg: -known.get(leg, float("inf")))
    cores = allowed_cores()
    lanes = max(1, min(args.lanes or len(cores) or 1, len(args.legs)))
    pin = lanes > 1 and len(cores) >= lanes
    logs = (
        Path(os.environ.get("LEG_ROOT") or Path(os.environ.get("TMPDIR", "/tmp")) / "iclr24-legs")
        / "logs"
    )
    logs.mkdir(parents=True, exist_ok=True)
    print(
        f"{len(args.legs)} legs in {lanes} lane(s)"
        + (f", one core each ({cores[:lanes]})" if pin else ""),
        flush=True,
    )

    todo: queue.Queue[str] = queue.Queue()
    for leg in args.legs:
        todo.put(leg)
    results: dict[str, tuple[int, float]] = {}
    say = threading.Lock()

    def lane(i: int) -> None:
        core = {cores[i]} if pin else None
        while True:
            try:
                leg = todo.get_nowait()
            except queue.Empty:
                return
            log = logs / f"{leg}.log"
            t0 = time.monotonic()
            with log.open("w") as fh:
                rc = subprocess.call(
                    [args.make, "--no-print-directory", f"test-isolated-{leg}"],
                    stdout=fh,
                    stderr=subprocess.STDOUT,
                    preexec_fn=(lambda: os.sched_setaffinity(0, core)) if core else None,
                )
            wall = time.monotonic() - t0
            results[leg] = (rc, wall)
            with say:
                if rc == 0:
                    tail = [
                        ln
                        for ln in log.read_text().splitlines()
                        if " passed" in ln or " failed" in ln
                    ]
                    summary = tail[-2].strip("= ") if len(tail) >= 2 else ""
                    print(f"leg {leg}: passed in {wall:.0f} s (lane {i}) {summary}", flush=True)
                else:
                    print(
                        f"leg {leg}: FAILED (exit {rc}) after {wall:.0f} s (lane {i}); its log:",
                        flush=True,
                    )
                    print(log.read_text(), flush=True)

    t0 = time.monotonic()
    threads = [threading.Thread(target=lane, args=(i,)) for i in range(lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [leg for leg, (rc, _) in results.items() if rc != 0]
    total = time.monotonic() - t0
    if failed:
        print(
            f"{len(failed)} of {len(args.legs)} legs failed ({', '.join(failed)}) in {total:.0f} s"
        )
        return 1
    print(
        f"all {len(args.legs)} legs passed in {total:.0f} s "
        f"(legs' own times add up to {sum(w for _, w in results.values()):.0f} s)"
    )
    if args.record:
        times = {leg: round(w) for leg, (_, w) in sorted(results.items())}
        TIMES.write_text(json.dumps(times, indent=1) + "\n")
        print(f"recorded the legs' times in {TIMES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
