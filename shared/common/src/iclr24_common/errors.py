"""The errors a user can fix: ``ExperimentApp.main`` reports them as one line, exit code 2."""

from __future__ import annotations


class UsageError(ValueError):
    """Bad input from the user: reported as one line, exit code 2."""


class MissingDependencyError(UsageError):
    """An optional Python package or a system library is missing; the message names the
    one command that installs it."""
