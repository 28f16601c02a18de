"""What a package's ``run`` receives and returns: :class:`RunContext` (the preset that ran,
the device, the run directory, the units of work and their resume), :class:`Report`, and the
:class:`Paper` being reproduced; plus the run history that a resumed run reports."""

from __future__ import annotations

import argparse
import json
import logging
import os
import pickle
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from . import executors
from .data import MissingDataError
from .device import DeviceError
from .dist import is_main_process
from .errors import UnitError, UsageError
from .figures import save_figure
from .io import atomic_write_bytes, atomic_write_json
from .results import Check, Claim, Metrics, Premise, git_commit

T = TypeVar("T")
INTERRUPT_ENV = "ICLR24_INTERRUPT_AFTER_UNITS"  # testing aid: Ctrl-C after N computed units
RUNS_FILE = "runs.json"  # under --out/units: the invocations that made these units
PARALLEL_FILE = "parallel.json"  # under --out/units: the keys declared through cached_parallel


@dataclass(frozen=True, kw_only=True)
class Paper:
    """The paper a package reproduces."""

    title: str
    authors: str
    """Surnames as the paper lists them, e.g. ``"Lim, Zhu, Selfridge & Kasim"``."""
    venue: str = "ICLR 2024"
    arxiv: str | None = None
    """arXiv id, e.g. ``"2309.12252"``."""
    openreview: str | None = None
    """OpenReview forum id, where the paper has no arXiv version (or as well)."""
    code: str | None = None
    """The official code's URL, where there is one."""

    @property
    def url(self) -> str:
        if self.arxiv:
            return f"https://arxiv.org/abs/{self.arxiv}"
        if self.openreview:
            return f"https://openreview.net/forum?id={self.openreview}"
        return ""

    def reference(self) -> str:
        """``Title (Authors, ICLR 2024, arXiv 2309.12252)``."""
        where = f"arXiv {self.arxiv}" if self.arxiv else f"OpenReview {self.openreview}"
        return f"{self.title} ({self.authors}, {self.venue}, {where})"


@dataclass
class Report:
    """What a package's ``run`` returns."""

    metrics: Metrics
    claims: list[Claim]
    """Statements of the paper measured against the strongest baseline."""
    checks: list[Check] = field(default_factory=list)
    """Invariants of the code (counters, budgets, golden strings)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """More keys for ``results.json``."""
    premises: list[Premise] = field(default_factory=list)
    """Preconditions the claims rest on (converged, solvable): measured, listed apart."""


@dataclass
class RunContext:
    """What a package's ``run`` receives."""

    package: str
    preset_name: str
    preset: Any
    """The preset dataclass after every command-line override (what the claims must read)."""
    device: str
    threads: int
    out_dir: Path
    data_dir: Path
    download: bool
    resume: bool
    strict: bool
    args: argparse.Namespace
    log: logging.Logger
    units_reused: int = 0
    units_computed: int = 0
    units_ran: dict[str, int] = field(
        default_factory=lambda: {"driver": 0, "local-pool": 0, "ray": 0})  # fmt: skip
    """Where the computed units ran: in the driver (``cached``, and ``cached_parallel`` with
    one worker), in the local process pool, or as Ray tasks."""
    workers: int | None = None
    """Processes for :meth:`cached_parallel` on the local executor (``--workers``, else the
    preset's ``workers`` but no more than the threads, else one per thread); each unit gets ``threads // workers``
    threads."""
    executor: str = "local"
    """Where :meth:`cached_parallel` runs its units: ``local`` (a process pool here) or
    ``ray`` (Ray tasks, on the cluster at ``$RAY_ADDRESS`` or a local instance)."""
    cluster: dict[str, Any] | None = None
    """The Ray cluster the units ran on (set when the ray executor first runs a unit)."""
    ray_started_here: bool = field(default=False, init=False, repr=False)
    """Whether this run connected to Ray (and so disconnects, or stops its local instance)."""

    @property
    def seeds(self) -> list[int]:
        return list(self.preset.seeds)

    @property
    def torch_device(self):
        import torch

        return torch.device(self.device)

    def path(self, name: str) -> Path:
        return self.out_dir / name

    @property
    def unit_threads(self) -> int:
        """Threads of one unit of :meth:`cached_parallel` in a pool or on Ray: the run's
        threads shared among its workers (at least 1)."""
        return max(1, self.threads // max(1, self.workers or self.threads))

    def cached(self, key: str, fn: Callable[[], T]) -> T:
        """Run ``fn`` once per ``key`` (a seed, a measurement) and keep its result under
        ``--out/units``; with ``--resume``, a unit finished by an earlier run is read back
        instead of recomputed. Results are pickled: any Python value works. The unit runs
        here, in the driver: keep for ``cached`` only what must be serial (timings that are
        claims, steps that need earlier units); independent units go to
        :meth:`cached_parallel`."""
        return self._store(key, fn, "driver")

    def _store(self, key: str, fn: Callable[[], T], where: str) -> T:
        """Read ``key`` back under ``--resume``, else compute it (``fn``), count where it ran
        and store it; a unit that raises becomes a :class:`UnitError` (one line)."""
        path = self._unit_path(key)
        if self.resume and path.exists():
            self.units_reused += 1
            self.log.info("resume: reusing %s", key)
            return pickle.loads(path.read_bytes())
        try:
            value = fn()
        except (UsageError, UnitError, KeyboardInterrupt, DeviceError, MissingDataError):
            raise
        except Exception as e:
            raise UnitError.of(key, e) from e
        if is_main_process():
            atomic_write_bytes(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        self.units_computed += 1
        self.units_ran[where] += 1
        stop_after = os.environ.get(INTERRUPT_ENV)
        if stop_after and self.units_computed >= int(stop_after):
            raise KeyboardInterrupt(f"{INTERRUPT_ENV}={stop_after}")
        return value

    def cached_parallel(self, jobs: dict[str, Callable[[], T]], workers: int | None = None,
                        desc: str = "units") -> dict[str, T]:  # fmt: skip
        """:meth:`cached` for independent units (one fit per method, dataset, seed, setting),
        the one way a package declares them. The units not finished (all of them without
        ``--resume``) run on the executor: locally in ``workers`` processes (default
        ``ctx.workers``) of ``ctx.unit_threads`` threads each, or with ``--executor ray`` as
        Ray tasks (``num_cpus=ctx.unit_threads``, and one GPU under a CUDA device), on the
        cluster at ``$RAY_ADDRESS`` or else a local instance of ``--threads`` CPUs. Each unit
        is stored by the driver the moment it ends, so an interruption or a unit that raises
        keeps every finished one. Every ``fn`` must pickle (a module-level function or a
        ``functools.partial`` of one), must seed itself and read its data from paths, never
        from ``ctx``: the results then equal a serial run's. With one local worker the units
        run here, in order, with all the run's threads."""
        if not is_main_process():  # torchrun ranks: every rank computes, rank 0 stores
            return {key: self.cached(key, fn) for key, fn in jobs.items()}
        self._declare_parallel(jobs)
        if self.executor == "local":
            workers = min(workers or self.workers or self.threads, len(jobs))
            if workers <= 1:
                return {key: self.cached(key, fn) for key, fn in jobs.items()}
        done = {key: self.cached(key, fn) for key, fn in jobs.items()
                if self.resume and self._unit_path(key).exists()}  # fmt: skip
        pending = {key: fn for key, fn in jobs.items() if key not in done}
        if self.executor == "ray":
            if pending:  # a finished run resumed on a machine without the cluster still works
                executors.run_on_ray(self, pending, done, total=len(jobs), desc=desc)
        else:
            executors.run_in_processes(self, pending, done, workers, total=len(jobs), desc=desc)
        return {key: done[key] for key in jobs}

    def _declare_parallel(self, jobs: dict) -> None:
        """Record the keys handed to :meth:`cached_parallel` in ``units/parallel.json`` (the
        executor's units, as opposed to the driver's): what the contract test recomputes on
        Ray, with ``--resume``, after removing some of them."""
        path = self.out_dir / "units" / PARALLEL_FILE
        known = json.loads(path.read_text()) if path.exists() else []
        new = [k for k in jobs if k not in set(known)]
        if new:
            atomic_write_json(path, known + new)

    def _unit_path(self, key: str) -> Path:
        return self.out_dir / "units" / (_escape(key) + ".pkl")

    def save_json(self, name: str, obj: Any) -> Path:
        """Atomic JSON write into the run directory (rank 0 only)."""
        if is_main_process():
            return atomic_write_json(self.path(name), obj)
        return self.path(name)

    def save_figure(self, fig, name: str) -> Path:
        """Save a matplotlib figure as PNG in the run directory (rank 0 only) and close it."""
        if is_main_process():
            return save_figure(fig, self.path(name))
        from .figures import pyplot

        pyplot().close(fig)
        return self.path(name)

    def save_partial(self, metrics: Metrics, **extra: Any) -> Path:
        """Write what has been measured so far to ``partial_results.json``."""
        return self.save_json(
            "partial_results.json",
            {
                "preset": self.preset_name,
                "seeds": self.seeds,
                "metrics": metrics.summary(),
                **extra,
            },
        )


def _escape(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=+-]", lambda m: f"%{ord(m.group()):02x}", key)


def _record_run(out: Path, wall: float, ctx: RunContext, finished: bool) -> list[dict]:
    """Append this invocation to ``units/runs.json`` (the runs that made these units: a run
    resumed after an interruption reports the time of all its parts) and return the list.
    A run directory from before this record existed contributes its results.json's time."""
    path = out / "units" / RUNS_FILE
    if path.exists():
        history = json.loads(path.read_text())
    else:
        history = []
        old = out / "results.json"
        if ctx.resume and old.exists():
            prev = json.loads(old.read_text())
            history.append({"date": prev.get("date"), "wall_seconds": prev.get("wall_seconds", 0.0),
                            "units_computed": (prev.get("units") or {}).get("computed"),
                            "git_commit": (prev.get("environment") or {}).get("git_commit"),
                            "finished": True, "from": "results.json"})  # fmt: skip
    history.append({"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "wall_seconds": wall,
                    "units_computed": ctx.units_computed, "units_reused": ctx.units_reused,
                    "executor": ctx.executor,
                    "git_commit": git_commit(Path(__file__).parent), "finished": finished})  # fmt: skip
    if is_main_process():
        atomic_write_json(path, history)
    return history
