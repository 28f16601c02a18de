"""Where data lives, the error that says what is missing and how to get it, and the paper's
files with pinned SHA-256 checksums (:func:`verify_files`, :func:`download_files`)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

ENV_VAR = "ICLR24_DATA"


class MissingDataError(FileNotFoundError):
    """A dataset the run needs is not on disk.

    The message names the dataset, every place that was searched, and how to get it.
    """

    def __init__(self, what: str, looked_in: list[str | Path] | str | Path, how_to_get: str):
        if isinstance(looked_in, str | Path):
            looked_in = [looked_in]
        self.what, self.looked_in, self.how_to_get = what, [str(p) for p in looked_in], how_to_get
        where = "\n".join(f"  - {p}" for p in self.looked_in)
        super().__init__(
            f"missing data: {what}\nlooked in:\n{where}\nhow to get it: {how_to_get}\n"
            f"(set the data root with --data-dir DIR or ${ENV_VAR})"
        )

    def __str__(self) -> str:  # FileNotFoundError would otherwise print a tuple
        return self.args[0]

    def __reduce__(self):  # pickles (from a worker process or a Ray task) with its own fields
        return type(self), (self.what, self.looked_in, self.how_to_get)


def data_dir(explicit: str | Path | None = None, *, create: bool = True) -> Path:
    """The data root: ``explicit`` (``--data-dir``), else ``$ICLR24_DATA``, else ``~/.cache/iclr24``."""
    if explicit:
        root = Path(explicit)
    elif os.environ.get(ENV_VAR):
        root = Path(os.environ[ENV_VAR])
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "iclr24"
    root = root.expanduser()
    if create:
        root.mkdir(parents=True, exist_ok=True)
    return root


def require_files(root: str | Path, names: list[str], *, what: str, how_to_get: str) -> list[Path]:
    """Paths of ``names`` under ``root``; :class:`MissingDataError` if any is absent."""
    root = Path(root)
    paths = [root / n for n in names]
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise MissingDataError(what, missing, how_to_get)
    return paths


# ---------------------------------------------------------------- files with pinned checksums
@dataclass(frozen=True)
class RemoteFile:
    """One file of a paper's dataset: where it is published, where it goes under the data
    root, and its pinned SHA-256 (what ``--download`` and the paper preset check)."""

    url: str
    path: str
    """Relative to the package's data folder, e.g. ``ETT-small/ETTh1.csv``."""
    sha256: str
    size: int | None = None
    """Bytes, where known (a truncated download then says so before hashing)."""


def sha256_of(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def verify_files(root: str | Path, files: Sequence[RemoteFile], *, what: str,
                 how_to_get: str) -> dict[str, str]:  # fmt: skip
    """Check that every file is under ``root`` with its pinned SHA-256; return ``{path:
    sha256}`` (for the results file). A missing file is a :class:`MissingDataError`; a file
    whose checksum differs is a :class:`UsageError` naming it (one line, exit 2)."""
    root = Path(root)
    missing = [root / f.path for f in files if not (root / f.path).exists()]
    if missing:
        raise MissingDataError(what, missing, how_to_get)
    out = {}
    for f in files:
        got = sha256_of(root / f.path)
        if got != f.sha256:
            raise UsageError(f"{root / f.path}: SHA-256 {got[:12]}... is not the pinned "
                             f"{f.sha256[:12]}... (a different or corrupted copy of {what}): "
                             "delete it and get it again")  # fmt: skip
        out[f.path] = got
    return out


def download_files(root: str | Path, files: Sequence[RemoteFile], *, log=None,
                   timeout: float = 60.0) -> dict[str, str]:  # fmt: skip
    """Fetch every file not already under ``root`` with its pinned checksum, from its URL,
    into a temporary file beside its destination, check its SHA-256, and only then rename it
    into place: nothing half-written is ever left in the data folder. A failed request or a
    checksum that differs is a :class:`UsageError` (one line, exit 2) naming the URL. Returns
    ``{path: sha256}`` of every file."""
    import tempfile
    import urllib.error
    import urllib.request

    root = Path(root)
    got = {}
    for f in files:
        dest = root / f.path
        if dest.exists() and sha256_of(dest) == f.sha256:
            got[f.path] = f.sha256
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(f.url, timeout=timeout) as r:
                while block := r.read(1 << 20):
                    out.write(block)
            digest = sha256_of(tmp)
            if digest != f.sha256:
                raise UsageError(f"--download: {f.url} has SHA-256 {digest[:12]}..., not the "
                                 f"pinned {f.sha256[:12]}...: refused (nothing was written)")  # fmt: skip
            os.replace(tmp, dest)
        except (urllib.error.URLError, OSError) as e:
            code = getattr(e, "code", None)  # an HTTP status, e.g. 404
            reason = (
                f"HTTP {code} {getattr(e, 'reason', '')}".strip()
                if code
                else getattr(e, "reason", e)
            )
            raise UsageError(f"--download: cannot fetch {f.url}: {reason} (nothing was "
                             "written)") from None  # fmt: skip
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        got[f.path] = f.sha256
        if log is not None:
            log.info("downloaded %s -> %s (SHA-256 %s... checked)", f.url, dest, f.sha256[:12])
    return got
