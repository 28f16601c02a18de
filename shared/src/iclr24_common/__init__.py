"""iclr24-common: the shared plumbing of the iclr24 paper packages (no paper logic)."""

from .checkpoint import load_checkpoint, save_checkpoint
from .cli import Command, Report, ReproduceApp, RunContext, UsageError
from .data import MissingDataError, data_dir, require_files
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
from .io import atomic_write_bytes, atomic_write_json, atomic_write_text, save_figure
from .logs import get_logger, log_to_file, progress
from .results import (
    Claim,
    Metrics,
    aggregate,
    claims_table,
    environment_record,
    load_results,
    write_results,
)
from .seeding import seed_everything

__version__ = "0.1.0"

__all__ = [
    "Claim",
    "Command",
    "DeviceError",
    "DistInfo",
    "Metrics",
    "MissingDataError",
    "Report",
    "ReproduceApp",
    "RunContext",
    "UsageError",
    "aggregate",
    "all_gather_cat",
    "all_reduce_mean",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "available_devices",
    "barrier",
    "claims_table",
    "cleanup",
    "data_dir",
    "environment_record",
    "get_dist_info",
    "get_logger",
    "init_distributed",
    "is_main_process",
    "load_checkpoint",
    "load_results",
    "log_to_file",
    "progress",
    "rank0_only",
    "require_files",
    "resolve_device",
    "save_checkpoint",
    "save_figure",
    "seed_everything",
    "write_results",
]
