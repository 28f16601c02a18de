"""The experiment protocol: one command line for every package, built from its
``experiment`` module.

A package's ``experiment.py`` defines

    PAPER    = Paper(title=..., authors=..., arxiv=..., code=...)
    PRESETS  = {"smoke": Preset(...), "default": Preset(...), "paper": Preset(...)}
               # frozen dataclasses; each has a ``seeds`` field
    def run(ctx: RunContext) -> Report: ...
    def add_arguments(parser): ...      # optional: options that change the preset
    DOWNLOAD = "what --download fetches" # optional: None refuses --download
    USES_TORCH = True                    # optional: False for NumPy/SciPy-only packages
    PAPER_NEEDS_DATA = True              # optional: False when the paper preset generates its data
    COMMANDS = {"name": Command(...)}    # optional: extra sub-commands

    app = ExperimentApp.from_module(__name__)
    main = app.main                      # the console script: iclr24-<slug> = "...experiment:main"

and gets ``iclr24-<slug> reproduce [--preset] [--seeds] [--device] [--threads] [--out]
[--data-dir] [--strict] [--download] [--resume] [--set FIELD=VALUE] [--executor local|ray]
[--print-config]``.

Every option that changes the preset is applied with ``dataclasses.replace`` before the run,
so the preset the claims read is the preset that ran; ``results.json`` records it under
``config``. Finished units of work (``ctx.cached``) are stored under ``--out/units`` and
reused by ``--resume``; independent units (``ctx.cached_parallel``) run in a local process
pool, or as Ray tasks with ``--executor ray`` (the cluster at ``$RAY_ADDRESS``, else a local
Ray instance), and are stored the same way. Exit codes: 0 ok, 1 a claim does not hold under
``--strict``, 2 bad input (one line, no traceback), 130 interrupted (what finished stays on
disk).

The code lives in one module per role, all re-exported here: ``context`` (Paper, Report,
RunContext, the run history), ``executors`` (where cached_parallel's units run: local or
Ray), ``overrides`` (preset_option, --set parsing, replace_field), ``app`` (ExperimentApp,
the parser, the reproduce command), ``errors`` (UsageError, MissingDependencyError, UnitError).
"""

# ruff: noqa: F401  (this module re-exports; every name it has ever exposed stays importable)
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .app import Command, ExperimentApp, _check_writable, _Parser, _positive_int, _seed_list
from .context import INTERRUPT_ENV, RUNS_FILE, Paper, Report, RunContext, T, _escape, _record_run
from .data import MissingDataError, data_dir
from .device import DeviceError, resolve_device
from .dist import is_main_process
from .errors import MissingDependencyError, UnitError, UsageError
from .executors import EXECUTORS, RAY_INSTALL
from .figures import save_figure
from .io import atomic_write_bytes, atomic_write_json, to_jsonable
from .logs import get_logger, log_to_file, progress
from .overrides import PRESET_DEST, coerce, field_type, preset_option, replace_field
from .results import Check, Claim, Metrics, claims_table, count_verdicts, git_commit, write_results
from .threads import available_cores, set_threads
