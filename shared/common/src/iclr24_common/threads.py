"""One rule for CPU threads: ``--threads`` defaults to the cores this process may use, and
the number is applied to BLAS (through threadpoolctl), to OpenMP, and to torch.

And one wait policy: OpenMP threads wait **passively** (``OMP_WAIT_POLICY=PASSIVE``) unless
the user set the variable. Torch's OpenMP threads otherwise spin between parallel regions;
beside another job on the same cores the spinning threads steal its time and a small model's
run slows several times over (measured: infobatch's smoke, README "Threads"). OpenMP reads
the variable once, when torch loads it: importing :mod:`iclr24_common` sets it, so every
package imports ``iclr24_common`` before torch (its ``__init__`` does so first; the contract
test checks the order)."""

from __future__ import annotations

import contextlib
import os
import sys

_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_limits = None  # the live threadpoolctl limiter (kept so that the limit stays applied)
WAIT_POLICY = ("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault(*WAIT_POLICY)
# whether the policy was in place before torch loaded OpenMP (a package's __init__ must import
# iclr24_common first): recorded in every results.json and checked on each package's smoke
POLICY_BEFORE_TORCH = "torch" not in sys.modules


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity; a container's cpuset counts)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def set_threads(n: int | None = None) -> int:
    """Use ``n`` threads (default: :func:`available_cores`) in BLAS, OpenMP and torch.

    The environment variables also reach torch when it is imported later and any child
    process; returns the number applied.
    """
    global _limits
    n = available_cores() if n is None else int(n)
    if n < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    for var in _ENV_VARS:
        os.environ[var] = str(n)
    from threadpoolctl import threadpool_limits

    _limits = threadpool_limits(limits=n)
    if "torch" in sys.modules:  # already imported: its pools were sized at import
        sys.modules["torch"].set_num_threads(n)
    return n


@contextlib.contextmanager
def torch_threads(n: int):
    """Run the block with ``n`` torch intra-op threads, then restore the previous count: for
    timing one piece (a baseline) at another thread count than the run's :func:`set_threads`."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)
