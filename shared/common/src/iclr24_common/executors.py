"""Where the units of ``RunContext.cached_parallel`` run: a pool of processes on this
machine. The driver stores each unit the moment it ends (``ctx.cached``), so an interruption
keeps every finished unit and ``--resume`` works the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .logs import progress
from .threads import set_threads


def run_in_processes(ctx, pending: dict[str, Callable], done: dict[str, Any], workers: int, *,
                     total: int, desc: str) -> None:  # fmt: skip
    """Run the ``pending`` units in ``workers`` spawned processes of one thread each; store
    each one (``ctx.cached``) into ``done`` as it ends."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=set_threads, initargs=(1,))  # fmt: skip
    bar = progress(total=total, desc=f"{desc} ({workers} processes)")
    bar.update(len(done))
    try:
        futures = {pool.submit(fn): key for key, fn in pending.items()}
        for future in as_completed(futures):
            done[futures[future]] = ctx.cached(futures[future], future.result)
            bar.update(1)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        bar.close()
    pool.shutdown()
