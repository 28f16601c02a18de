"""Where data lives, and the error that says what is missing and how to get it."""

from __future__ import annotations

import os
from pathlib import Path

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
