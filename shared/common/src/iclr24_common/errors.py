"""The errors a user can fix: ``ExperimentApp.main`` reports them as one line, exit code 2;
and a unit of work that raised (:class:`UnitError`): one line, exit code 1."""

from __future__ import annotations


class UsageError(ValueError):
    """Bad input from the user: reported as one line, exit code 2."""


class MissingDependencyError(UsageError):
    """An optional Python package or a system library is missing; the message names the
    one command that installs it."""


class UnitError(RuntimeError):
    """A unit of work raised: the run stops with one line naming the unit and the error
    (exit code 1), every finished unit is kept (``--resume`` continues), and the full traceback
    goes to the run's ``log.txt`` (``detail``)."""

    def __init__(self, key: str, message: str, detail: str = ""):
        super().__init__(f"unit {key!r} failed: {message}")
        self.key, self.detail = key, detail

    @classmethod
    def of(cls, key: str, error: BaseException, detail: str | None = None) -> UnitError:
        """From the exception a unit raised (with its traceback, or ``detail`` where the
        traceback is remote: a pool worker's or a Ray task's)."""
        import traceback

        first = (str(error).strip().splitlines() or [""])[0]
        text = f"{type(error).__name__}: {first}" if first else type(error).__name__
        return cls(key, text, detail or "".join(traceback.format_exception(error)))
