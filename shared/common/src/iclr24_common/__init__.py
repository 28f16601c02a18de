"""iclr24-common: the shared plumbing of the iclr24 paper packages (no paper logic).

The experiment protocol (:class:`ExperimentApp`, :class:`Paper`, :class:`RunContext`,
:class:`Report`), results (:class:`Claim`, :class:`Check`, :class:`Metrics`), verdicts
(:func:`superiority`, :func:`non_inferiority`, :func:`threshold`: see ``verdicts``), seeding, devices,
threads, logging, data paths, atomic files, figures, checkpoints and distributed helpers.
"""

from .checkpoint import load_checkpoint, save_checkpoint
from .data import (
    MissingDataError,
    RemoteFile,
    data_dir,
    download_files,
    require_files,
    sha256_of,
    verify_files,
)
from .device import DeviceError, available_devices, resolve_device
from .dist import (
    DistInfo,
    all_gather_cat,
    all_reduce_mean,
    barrier,
    cleanup,
    get_dist_info,
    init_distributed,
    is_main_process,
    rank0_only,
)
from .experiment import (
    Command,
    ExperimentApp,
    MissingDependencyError,
    Paper,
    Report,
    RunContext,
    UnitError,
    UsageError,
    preset_option,
)
from .figures import pyplot, save_figure
from .io import atomic_write_bytes, atomic_write_json, atomic_write_text
from .logs import get_logger, log_to_file, progress
from .results import (
    Check,
    Claim,
    Gap,
    Metrics,
    Premise,
    aggregate,
    apply_premises,
    bound_check,
    claims_table,
    count_verdicts,
    environment_record,
    is_timing_metric,
    load_results,
    write_results,
)
from .seeding import seed_everything
from .threads import available_cores, set_threads, torch_threads  # sets the OpenMP wait policy
from .verdicts import (
    Source,
    Verdict,
    all_of,
    item_se,
    non_inferiority,
    none_of,
    superiority,
    threshold,
)

__version__ = "0.2.0"

__all__ = [
    "Check",
    "Claim",
    "Command",
    "DeviceError",
    "DistInfo",
    "ExperimentApp",
    "Gap",
    "Metrics",
    "MissingDataError",
    "MissingDependencyError",
    "Paper",
    "Premise",
    "RemoteFile",
    "Report",
    "Source",
    "Verdict",
    "RunContext",
    "UnitError",
    "UsageError",
    "aggregate",
    "all_of",
    "apply_premises",
    "bound_check",
    "all_gather_cat",
    "all_reduce_mean",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "available_cores",
    "available_devices",
    "barrier",
    "claims_table",
    "cleanup",
    "count_verdicts",
    "data_dir",
    "download_files",
    "environment_record",
    "get_dist_info",
    "get_logger",
    "init_distributed",
    "is_main_process",
    "is_timing_metric",
    "load_checkpoint",
    "item_se",
    "load_results",
    "non_inferiority",
    "none_of",
    "log_to_file",
    "preset_option",
    "progress",
    "pyplot",
    "rank0_only",
    "require_files",
    "resolve_device",
    "save_checkpoint",
    "save_figure",
    "seed_everything",
    "superiority",
    "set_threads",
    "sha256_of",
    "threshold",
    "torch_threads",
    "verify_files",
    "write_results",
]
