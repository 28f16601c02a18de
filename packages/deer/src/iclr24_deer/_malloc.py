"""glibc malloc settings for DEER's allocation pattern (imported first by the package)."""

import os


def _keep_freed_memory() -> bool:
    """Let glibc keep freed blocks up to 32 MiB in the heap instead of returning them to the
    OS: every Newton iteration allocates the same few MB-sized tensors, and by default each
    one comes from a fresh mmap whose pages fault in again (measured at hidden 4, T 10k: the
    GRU Jacobian 50 -> 17 ms, a whole DEER solve ~1.5-2x faster). Process-wide, as
    OMP_WAIT_POLICY above; off with ICLR24_DEER_MALLOC=0; a no-op off glibc."""
    if os.environ.get("ICLR24_DEER_MALLOC", "1") == "0":
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        # M_MMAP_THRESHOLD (-3): 32 MiB, glibc's maximum; M_TRIM_THRESHOLD (-1): 1 GiB;
        # M_TOP_PAD (-2): 64 MiB
        return all(libc.mallopt(k, v) == 1 for k, v in ((-3, 32 << 20), (-1, 1 << 30),
                                                        (-2, 64 << 20)))  # fmt: skip
    except (OSError, AttributeError):
        return False


MALLOC_TUNED = _keep_freed_memory()
