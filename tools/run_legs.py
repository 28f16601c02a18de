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

One Ray instance serves every leg's Ray contract test (``--no-shared-ray`` to leave it out):
a head node started here from the workspace environment (``make setup``'s ``.venv``), while
the first legs build their environments. Starting Ray costs ~10 s on one core; once per leg
that was ~4 minutes of the suite. A leg finds the head through ``$ICLR24_TEST_RAY`` (a small
JSON file: its address, and whether it is starting, ready or failed) and submits its units
to it; the units then run in the workspace environment (the same lockfile, the same source)
rather than the leg's own. Where the head cannot start, each leg starts a local instance as
before. The head is stopped when the last leg ends.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

TIMES = Path(__file__).with_name("leg_times.json")
RAY = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "ray"


class SharedRay:
    """A Ray head node for the legs' contract tests: started in the background, its state
    in ``<root>/ray-head.json`` (``starting``, ``ready`` or ``failed``), stopped by ``close``."""

    def __init__(self, root: Path, cpus: int) -> None:
        self.state = root / "ray-head.json"
        with socket.socket() as s:  # a free port for the head's GCS
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.address = f"127.0.0.1:{port}"
        self._write("starting")
        self.log = root / "logs" / "ray-head.log"
        # its own temp dir: no `ray.init()` elsewhere on this machine finds and joins it;
        # no auth token (a test instance, gone when the suite ends)
        self.proc = subprocess.Popen(
            [str(RAY), "start", "--head", "--block", f"--port={port}", f"--num-cpus={cpus}",
             "--include-dashboard=false", "--disable-usage-stats",
             f"--temp-dir={root / 'ray'}"],
            stdout=self.log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"},
        )  # fmt: skip
        self.watcher = threading.Thread(target=self._wait_ready, daemon=True)
        self.watcher.start()

    def _write(self, state: str, why: str = "") -> None:
        tmp = self.state.with_suffix(".tmp")
        tmp.write_text(json.dumps({"address": self.address, "state": state, "why": why}))
        tmp.replace(self.state)

    def _wait_ready(self, limit: float = 120.0) -> None:
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            if "Ray runtime started" in self.log.read_text(errors="replace"):
                self._write("ready")
                print(f"shared Ray head ready at {self.address} after "
                      f"{time.monotonic() - t0:.0f} s", flush=True)  # fmt: skip
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        self._write("failed", f"the head did not start (see {self.log})")
        print(f"note: the shared Ray head did not start ({self.log}); each leg starts its "
              "own local Ray instance", flush=True)  # fmt: skip

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # --block: drains and stops its processes
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self._write("failed", "the suite has ended")


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
    p.add_argument("--no-shared-ray", action="store_true",
                   help="every leg starts its own local Ray instance")  # fmt: skip
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

    ray_head = None
    if not args.no_shared_ray and RAY.exists():
        ray_head = SharedRay(logs.parent, cpus=max(lanes, 1))
        os.environ["ICLR24_TEST_RAY"] = str(ray_head.state)  # the legs inherit it

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
    try:
        for t in threads:
            t.join()
    finally:
        if ray_head is not None:
            ray_head.close()
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
