"""Where the units of ``RunContext.cached_parallel`` run: ``local``, a pool of processes on
this machine, or ``ray``, Ray tasks on a cluster (``$RAY_ADDRESS``) or on a local Ray
instance. Either way the driver stores each unit the moment it ends (``ctx.cached``), so an
interruption keeps every finished unit and ``--resume`` works the same.

Ray is an optional extra (``pip install 'iclr24-common[ray]'``); every node of a cluster
needs the same environment (this package and the paper's) and sees the same ``--data-dir``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

from .errors import MissingDependencyError, UnitError, UsageError
from .logs import progress
from .threads import set_threads

EXECUTORS = ("local", "ray")
RAY_INSTALL = "pip install 'iclr24-common[ray]'"


def run_in_processes(ctx, pending: dict[str, Callable], done: dict[str, Any], workers: int, *,
                     total: int, desc: str) -> None:  # fmt: skip
    """Run the ``pending`` units in ``workers`` spawned processes of ``ctx.unit_threads``
    threads each; store each one (the driver's ``ctx``) into ``done`` as it ends. A unit that
    raises stops the pool (the units still queued are cancelled) as a one-line
    :class:`UnitError`; the finished ones are kept."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    threads = ctx.unit_threads
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=set_threads, initargs=(threads,))  # fmt: skip
    bar = progress(total=total, desc=f"{desc} ({workers} processes x {threads} thread"
                                      f"{'s' * (threads != 1)})")  # fmt: skip
    bar.update(len(done))
    try:
        futures = {pool.submit(fn): key for key, fn in pending.items()}
        for future in as_completed(futures):
            done[futures[future]] = ctx._store(futures[future], future.result, "local-pool")
            bar.update(1)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        bar.close()
    pool.shutdown()


# ------------------------------------------------------------------ ray
def import_ray():
    """The ``ray`` module, or a :class:`MissingDependencyError` naming the install command."""
    # a driver started by `uv run` (make test-<slug>, make reproduce-<slug>) would otherwise
    # make Ray start its workers with `uv run` too, outside this environment (no ray there):
    # the workers use the driver's interpreter and packages, as without uv. Ray reads the
    # variable when it is imported.
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    try:
        import ray
    except ImportError:
        raise MissingDependencyError(
            f"--executor ray needs Ray, an optional extra: {RAY_INSTALL}"
        ) from None
    return ray


def connect_ray(ctx) -> Any:
    """Connect to the cluster at ``$RAY_ADDRESS``, else start a local instance with
    ``ctx.threads`` CPUs (or use the instance this process already initialised); log which,
    record it in ``ctx.cluster`` and return the ``ray`` module."""
    ray = import_ray()
    if ray.is_initialized():
        where = "the Ray instance this process had already initialised"
    else:
        address = os.environ.get("RAY_ADDRESS")
        if address:
            try:
                ray.init(address=address)
            except Exception as e:  # ConnectionError, or a version mismatch
                raise UsageError(f"--executor ray: cannot connect to the Ray cluster at "
                                 f"RAY_ADDRESS={address}: {str(e).splitlines()[0]}") from None  # fmt: skip
            where = f"the Ray cluster at RAY_ADDRESS={address}"
        else:
            _start_local(ray, ctx)
            where = f"a local Ray instance of {ctx.threads} CPUs (no RAY_ADDRESS set)"
        ctx.ray_started_here = True
    resources = ray.cluster_resources()
    nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    ctx.cluster = {"address": os.environ.get("RAY_ADDRESS") or "local", "ray": ray.__version__,
                   "nodes": nodes, "cpus": resources.get("CPU", 0),
                   "gpus": resources.get("GPU", 0)}  # fmt: skip
    ctx.log.info("ray: units run on %s: %d node(s), %g CPUs, %g GPUs", where, nodes,
                 ctx.cluster["cpus"], ctx.cluster["gpus"])  # fmt: skip
    return ray


def _start_local(ray, ctx, attempts: int = 2) -> None:
    """``ray.init`` of a local instance; Ray gives its node 30 s to register, which a
    machine busy with other jobs can miss: then once more, and else one line (exit 2)."""
    for attempt in range(1, attempts + 1):
        try:
            # address="local": a new instance, never one that `ray start` left on this
            # machine (ray.init() with no address would join it)
            ray.init(address="local", num_cpus=ctx.threads, include_dashboard=False)
            return
        except Exception as e:
            ray.shutdown()
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
            if attempt == attempts:
                raise UsageError(f"--executor ray: could not start a local Ray instance: {why} "
                                 "(or set RAY_ADDRESS to a running cluster)") from None  # fmt: skip
            ctx.log.warning("ray: the local instance did not start (%s); trying again", why)


def shutdown_ray(ctx) -> None:
    """Disconnect from the cluster (stopping a local instance) if this run connected."""
    if ctx.ray_started_here:
        import ray

        ray.shutdown()
        ctx.ray_started_here = False


def _run_unit(fn: Callable[[], Any], threads: int) -> Any:
    """A unit on a Ray worker, with the threads Ray reserved for it (``num_cpus``)."""
    set_threads(threads)
    return fn()


def run_on_ray(ctx, pending: dict[str, Callable], done: dict[str, Any], *, total: int,
               desc: str) -> None:  # fmt: skip
    """Run the ``pending`` units as Ray tasks (``num_cpus=ctx.unit_threads``, and
    ``num_gpus=1`` under a CUDA device); store each one (the driver's ``ctx``) into ``done``
    as it ends. A unit that raises cancels the rest and stops the run as a one-line
    :class:`UnitError`; the finished units are kept."""
    ray = import_ray()
    if ctx.cluster is None or not ray.is_initialized():
        connect_ray(ctx)
    gpus = 1 if str(ctx.device).startswith("cuda") else 0
    if gpus and not ctx.cluster["gpus"]:
        raise UsageError("--executor ray with a CUDA device: the Ray cluster has no GPU "
                         "(start its nodes on GPU machines, or use --device cpu)")  # fmt: skip
    threads = ctx.unit_threads
    task = ray.remote(num_cpus=threads, num_gpus=gpus)(_run_unit)
    refs = {task.options(name=key).remote(fn, threads): key for key, fn in pending.items()}
    bar = progress(total=total, desc=f"{desc} (ray: {ctx.cluster['cpus']:g} CPUs)")
    bar.update(len(done))
    try:
        while refs:
            (ref,), _ = ray.wait(list(refs), num_returns=1)
            key = refs.pop(ref)
            done[key] = ctx._store(key, partial(_result, ray, ref, key), "ray")
            bar.update(1)
    except BaseException:
        for ref in refs:  # the driver stops: the units still queued or running go too
            try:
                ray.cancel(ref, force=True)
            except Exception:  # already finished or gone
                pass
        raise
    finally:
        bar.close()


def _result(ray, ref, key: str) -> Any:
    """The unit's value; a user error raised in the unit (missing data, a bad setting) is
    re-raised as itself, so that it stays one line and exit 2; any other error is the unit's
    :class:`UnitError`, with the task's remote traceback."""
    from .data import MissingDataError
    from .device import DeviceError

    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, UsageError | MissingDataError | DeviceError):
            raise cause from None
        raise UnitError.of(key, cause if isinstance(cause, BaseException) else e,
                           detail=getattr(e, "traceback_str", "") or str(e)) from None  # fmt: skip
