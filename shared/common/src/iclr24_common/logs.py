"""Logging to the console and to ``<run dir>/log.txt``, and progress bars that degrade to
periodic log lines when there is no terminal (CI, SLURM, nohup)."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
ROOT = "iclr24"
_FMT_CONSOLE = "%(asctime)s %(message)s"
_FMT_FILE = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is *now* (pytest's capture, a redirected stream),
    not to the stream that existed when the handler was made."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def get_logger(name: str = ROOT) -> logging.Logger:
    """A logger under the ``iclr24`` hierarchy; the console handler is installed once."""
    root = logging.getLogger(ROOT)
    if not getattr(root, "_iclr24_configured", False):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter(_FMT_CONSOLE, datefmt="%H:%M:%S"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        root.propagate = False
        root._iclr24_configured = True  # type: ignore[attr-defined]
    if name == ROOT or name.startswith(ROOT + "."):
        return logging.getLogger(name)
    return logging.getLogger(f"{ROOT}.{name}")


@contextlib.contextmanager
def log_to_file(out_dir: str | Path, filename: str = "log.txt") -> Iterator[Path]:
    """Copy every ``iclr24`` log record into ``out_dir/filename`` while the block runs.

    The file is appended to (a resumed run keeps its history) and flushed line by line,
    so an interrupted run leaves its log on disk.
    """
    get_logger()
    path = Path(out_dir) / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter(_FMT_FILE, datefmt="%Y-%m-%d %H:%M:%S"))
    root = logging.getLogger(ROOT)
    root.addHandler(handler)
    try:
        yield path
    finally:
        root.removeHandler(handler)
        handler.close()


class _LogProgress:
    """A tqdm stand-in for non-interactive output: one log line every ``every_s`` seconds."""

    def __init__(self, iterable, desc, total, every_s, logger):
        self.iterable, self.desc, self.total = iterable, desc, total
        self.every_s, self.log = every_s, logger
        self.n, self.postfix, self._emitted_n = 0, "", 0
        self._t0 = self._last = time.monotonic()

    def set_postfix(self, **kw):
        self.postfix = ", ".join(f"{k}={_fmt(v)}" for k, v in kw.items())

    def update(self, n: int = 1):
        self.n += n
        now = time.monotonic()
        if now - self._last >= self.every_s:
            self._last = now
            self._emit(now)

    def _emit(self, now):
        self._emitted_n = self.n
        total = f"/{self.total}" if self.total else ""
        rate = self.n / max(now - self._t0, 1e-9)
        extra = f" [{self.postfix}]" if self.postfix else ""
        self.log.info("%s: %d%s (%.2f it/s)%s", self.desc, self.n, total, rate, extra)

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update(1)
        self.close()

    def close(self):
        if self.n != self._emitted_n and time.monotonic() - self._t0 >= self.every_s:
            self._emit(time.monotonic())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _fmt(v):
    return f"{v:.4g}" if isinstance(v, float) else v


def progress(
    iterable: Iterable[T] | None = None,
    *,
    desc: str = "",
    total: int | None = None,
    every_s: float = 30.0,
    leave: bool = False,
    disable: bool = False,
):
    """A tqdm bar on a terminal; elsewhere a log line every ``every_s`` seconds.

    Works as an iterator wrapper or, with ``iterable=None``, as a manual bar
    (``update``, ``set_postfix``, ``close``, context manager).
    """
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if disable:
        return (
            iterable
            if iterable is not None
            else _LogProgress([], desc, total, float("inf"), get_logger())
        )
    if sys.stderr.isatty():
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, leave=leave, dynamic_ncols=True)
    return _LogProgress(
        iterable if iterable is not None else [], desc, total, every_s, get_logger("progress")
    )
