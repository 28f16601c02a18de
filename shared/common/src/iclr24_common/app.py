"""A package's command line, built from its ``experiment`` module: :class:`ExperimentApp`
parses ``reproduce`` and the extra sub-commands, resolves the preset, prepares the run
directory, calls ``run(ctx)`` and writes ``results.json``; errors the user can fix are one
line and exit 2. The protocol itself is documented in :mod:`iclr24_common.experiment`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from . import executors
from .context import PARALLEL_FILE, RUNS_FILE, Paper, Report, RunContext, _record_run
from .data import MissingDataError, data_dir
from .device import DeviceError, resolve_device
from .dist import is_main_process
from .errors import UnitError, UsageError
from .io import atomic_write_json, to_jsonable
from .logs import get_logger, log_to_file
from .overrides import PRESET_DEST, assign_field, coerce, field_type, validate
from .results import claims_table, counts_line, write_results
from .threads import available_cores, set_threads


@dataclass
class Command:
    """An extra sub-command: ``configure(parser)`` adds its options, ``handler(args) -> int``."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]


def _seed_list(text: str) -> list[int]:
    try:
        seeds = [int(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"seeds must be non-negative integers, got {text!r}"
        ) from None
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"seeds must be non-negative integers, got {text!r}")
    return seeds


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return n


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


# ------------------------------------------------------------------ the app
class ExperimentApp:
    """A package's command line, built around its ``run(ctx) -> Report``."""

    def __init__(
        self,
        *,
        package: str,
        version: str,
        paper: Paper,
        presets: dict[str, Any],
        run: Callable[[RunContext], Report],
        add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
        commands: dict[str, Command] | None = None,
        download: str | None = None,
        uses_torch: bool = True,
        paper_needs_data: bool = True,
    ):
        for name, p in presets.items():
            if not dataclasses.is_dataclass(p) or not hasattr(p, "seeds"):
                raise TypeError(
                    f"{package}: preset {name!r} must be a dataclass with a seeds field"
                )
        self.package, self.version, self.paper = package, version, paper
        self.slug = package.removeprefix("iclr24-")
        self.presets, self.run, self.add_arguments = presets, run, add_arguments
        self.commands = commands or {}
        self.download, self.uses_torch = download, uses_torch
        self.paper_needs_data = paper_needs_data

    @classmethod
    def from_module(cls, module: str | types.ModuleType) -> ExperimentApp:
        """Build the app from an ``experiment`` module's ``PAPER``, ``PRESETS``, ``run`` and
        optional ``add_arguments``, ``COMMANDS``, ``DOWNLOAD``, ``USES_TORCH``,
        ``PAPER_NEEDS_DATA``."""
        mod = sys.modules[module] if isinstance(module, str) else module
        spec = getattr(mod, "__spec__", None)
        top = (spec.name if spec else mod.__name__).split(".")[0]  # iclr24_svd_update
        package = top.replace("_", "-")
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            version = "0+unknown"
        return cls(
            package=package,
            version=version,
            paper=mod.PAPER,
            presets=mod.PRESETS,
            run=mod.run,
            add_arguments=getattr(mod, "add_arguments", None),
            commands=getattr(mod, "COMMANDS", None),
            download=getattr(mod, "DOWNLOAD", None),
            uses_torch=getattr(mod, "USES_TORCH", True),
            paper_needs_data=getattr(mod, "PAPER_NEEDS_DATA", True),
        )

    # -------------------------------------------------------------- parsing
    def build_parser(self) -> argparse.ArgumentParser:
        p = _Parser(prog=self.package, description=self.paper.reference())
        p.add_argument("--version", action="version", version=f"{self.package} {self.version}")
        sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
        sub.required = True
        r = sub.add_parser(
            "reproduce",
            help="run the paper's reproduction and check its claims",
            description=f"Reproduce {self.paper.reference()}. {self.paper.url}",
        )
        r.add_argument("--preset", default="default", choices=list(self.presets),
                       help="smoke: < 60 s check; default: the README's run (< 10 min on 2 CPU "
                            "cores); paper: the paper's scale and data")  # fmt: skip
        r.add_argument("--seeds", nargs="+", type=_seed_list, default=None,
                       help="random seeds, e.g. --seeds 0 1 2 (default: the preset's)")  # fmt: skip
        r.add_argument("--device", default="auto",
                       help="auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps")  # fmt: skip
        r.add_argument("--threads", type=_positive_int, default=None,
                       help=f"CPU threads for torch and BLAS (default: the preset's threads if it "
                            f"sets them, else the cores available, {available_cores()} here)")  # fmt: skip
        r.add_argument("--workers", type=_positive_int, default=None,
                       help="local processes for the independent units, each with threads / "
                            "workers threads (default: the preset's workers if it sets them, at most "
                            "one per thread, else one per thread)")  # fmt: skip
        r.add_argument("--out", type=Path, default=None,
                       help=f"run directory (default runs/{self.slug}/<preset>)")  # fmt: skip
        r.add_argument("--data-dir", type=Path, default=None,
                       help="data root (default $ICLR24_DATA, else ~/.cache/iclr24)")  # fmt: skip
        r.add_argument("--strict", action="store_true", help="exit 1 when any claim does not hold")
        r.add_argument("--download", action="store_true",
                       help=f"paper preset: fetch the data ({self.download})" if self.download
                       else "refused: the paper's data has no public source a standard library "
                            "fetches (the paper preset's error says where to get it)")  # fmt: skip
        r.add_argument("--resume", action="store_true",
                       help="reuse the finished units of an interrupted run in --out")  # fmt: skip
        r.add_argument("--set", dest="overrides", action="append", default=[],
                       metavar="FIELD=VALUE",
                       help="override any preset field, e.g. --set epochs=5 (dotted for nested "
                            "fields; see --print-config)")  # fmt: skip
        r.add_argument("--executor", choices=executors.EXECUTORS, default="local",
                       help="where the independent units of ctx.cached_parallel run: local (a "
                            "process pool here) or ray (Ray tasks on the cluster at $RAY_ADDRESS, "
                            f"else a local Ray instance; needs {executors.RAY_INSTALL})")  # fmt: skip
        r.add_argument("--print-config", action="store_true",
                       help="print the preset after all overrides as JSON and exit")  # fmt: skip
        if self.add_arguments:
            self.add_arguments(r)
        for name, cmd in self.commands.items():
            cmd.configure(sub.add_parser(name, help=cmd.help))
        return p

    def resolve_preset(self, args: argparse.Namespace) -> Any:
        """The preset named by ``--preset`` with ``--seeds``, the package's preset options and
        ``--set`` applied (in that order), then validated once: the preset's checks see the
        final values, so the order of the assignments does not matter."""
        preset, applied = self.presets[args.preset], []
        if args.seeds:
            seeds = [s for group in args.seeds for s in group]
            if len(set(seeds)) != len(seeds):
                raise UsageError(f"--seeds has duplicates: {seeds}")
            preset = assign_field(preset, "seeds", tuple(seeds))
            applied.append("--seeds")
        for dest, value in vars(args).items():
            if dest.startswith(PRESET_DEST) and value is not None:
                field = dest.removeprefix(PRESET_DEST)
                preset = assign_field(preset, field, value)
                applied.append(f"{field}={value!r}")
        for item in args.overrides:
            name, eq, text = item.partition("=")
            if not eq or not name:
                raise UsageError(f"--set takes FIELD=VALUE, got {item!r}")
            try:
                value = coerce(text, field_type(preset, name.strip()))
            except ValueError as e:
                raise UsageError(f"--set {item}: {e}") from None
            preset = assign_field(preset, name.strip(), value)
            applied.append(f"--set {item}")
        if not applied:
            return preset
        return validate(preset, f"preset {args.preset!r} with {' '.join(applied)}")

    def main(self, argv: Sequence[str] | None = None) -> int:
        args = self.build_parser().parse_args(argv)
        log = get_logger(self.slug)
        try:
            if args.command in self.commands:
                return int(self.commands[args.command].handler(args) or 0)
            return self._reproduce(args, log)
        except (UsageError, DeviceError, MissingDataError) as e:
            print(f"{self.package}: error: {e}", file=sys.stderr)
            return 2
        except UnitError as e:
            print(f"{self.package}: error: {e} (traceback in the run's log.txt; finished units "
                  "are kept: fix it and continue with --resume)", file=sys.stderr)  # fmt: skip
            return 1
        except KeyboardInterrupt:
            print(f"{self.package}: interrupted; finished units are kept in the run directory "
                  "(continue with --resume)", file=sys.stderr)  # fmt: skip
            return 130

    # -------------------------------------------------------------- the run
    def _device(self, spec: str) -> str:
        if self.uses_torch:
            return str(resolve_device(spec, quiet=True))
        if spec not in ("auto", "cpu"):
            raise UsageError(f"{self.package} runs on the CPU only; use --device cpu (or auto)")
        return "cpu"

    def _reproduce(self, args: argparse.Namespace, log: logging.Logger) -> int:
        preset = self.resolve_preset(args)
        config = to_jsonable(dataclasses.asdict(preset))
        if args.print_config:
            print(json.dumps({"preset": args.preset, **config}, indent=2))
            return 0
        if args.download and not self.download:
            raise UsageError(
                "--download: the paper's data has no public source that a standard library "
                "fetches; run --preset paper without it to see which files to get and where"
            )
        if args.download and not args.preset.startswith("paper"):
            raise UsageError(
                "--download fetches the paper's data: use it with --preset paper (or a "
                "paper-* preset on the paper's data, e.g. paper-cpu)"
            )
        if args.executor == "ray":
            executors.import_ray()  # before any work: a missing extra is one line, exit 2
        device = self._device(args.device)
        # --threads, else the preset's own cap (tiny models measured faster on fewer threads)
        threads = set_threads(args.threads or getattr(preset, "threads", None))
        # a preset's workers were measured on some machine: never more processes than threads
        # (a 1-core CI leg would otherwise start 2 processes for 1 core); --workers is obeyed
        workers = args.workers or min(getattr(preset, "workers", None) or threads, threads)
        out = args.out or Path("runs") / self.slug / args.preset
        _check_writable(out)
        fingerprint = {"package": self.package, "preset": args.preset, "device": device,
                       "config": how_units_run(config)}  # fmt: skip
        self._prepare_units(out, fingerprint, args.resume)
        with log_to_file(out):
            ctx = RunContext(
                package=self.package, preset_name=args.preset, preset=preset, device=device,
                threads=threads, out_dir=out, data_dir=data_dir(args.data_dir),
                download=args.download, resume=args.resume, strict=args.strict, args=args,
                log=log, executor=args.executor, workers=workers,
            )  # fmt: skip
            log.info("%s %s: reproduce preset=%s seeds=%s device=%s threads=%d executor=%s "
                     "out=%s%s", self.package, self.version, args.preset, ctx.seeds, device,
                     threads, args.executor, out, " (resume)" if args.resume else "")  # fmt: skip
            t0 = time.perf_counter()
            try:
                report = self.run(ctx)
            except BaseException as e:
                _record_run(out, time.perf_counter() - t0, ctx, finished=False)
                if isinstance(e, UnitError) and e.detail:  # the traceback: log.txt only
                    with open(out / "log.txt", "a", encoding="utf-8") as f:
                        f.write(f"{e}\n{e.detail}\n")
                raise
            finally:
                executors.shutdown_ray(ctx)
            if args.executor == "ray" and ctx.cluster is None:
                log.info("--executor ray: no unit ran on Ray (every unit was reused, or this "
                         "package computes its units here, outside ctx.cached_parallel)")  # fmt: skip
            wall = time.perf_counter() - t0
            history = _record_run(out, wall, ctx, finished=True)
            if args.resume:
                log.info("resume: %d units reused, %d computed", ctx.units_reused,
                         ctx.units_computed)  # fmt: skip
            if is_main_process():
                total = sum(r["wall_seconds"] for r in history)
                write_results(
                    out, package=self.package, version=self.version,
                    paper=dataclasses.asdict(self.paper), preset=args.preset, seeds=ctx.seeds,
                    device=device, threads=threads, wall_seconds=total, metrics=report.metrics,
                    claims=report.claims, checks=report.checks, premises=report.premises, config=config,
                    extra={**report.extra, "units": {"reused": ctx.units_reused,
                                                     "computed": ctx.units_computed},
                           "executor": args.executor, "units_ran": dict(ctx.units_ran),
                           "workers": workers, "unit_threads": ctx.unit_threads,
                           **({"ray_cluster": ctx.cluster} if ctx.cluster else {}),
                           "wall_seconds_this_run": wall, "runs": history},
                )  # fmt: skip
                log.info("wrote %s and results.md (%.1f s; %.1f s over %d run(s) of these "
                         "units)", out / "results.json", wall, total, len(history))  # fmt: skip
                dicts = [c.to_dict() for c in report.claims]
                print(f"\nclaims: {counts_line(dicts)}; in the paper's regime: "
                      f"{counts_line(dicts, 'paper')}; at our scale (below it): "
                      f"{counts_line(dicts, 'below')}")  # fmt: skip
                print(claims_table(report.claims))
                if report.premises:
                    ok = sum(p.holds for p in report.premises)
                    print(f"\n{ok} of {len(report.premises)} premises hold")
                    print(claims_table(report.premises, title="premise"))
                if report.checks:
                    ok = sum(c.holds for c in report.checks)
                    print(f"\n{ok} of {len(report.checks)} checks pass")
                    print(claims_table(report.checks, title="check"))
        failed = [f"{c.id} ({c.verdict})" for c in report.claims if not c.holds]
        if failed and args.strict:
            print(f"{self.package}: --strict: claims not holding: {', '.join(failed)}",
                  file=sys.stderr)  # fmt: skip
            return 1
        return 0

    def _prepare_units(self, out: Path, fingerprint: dict, resume: bool) -> None:
        """A fresh run forgets old units; ``--resume`` only reuses units made by the same
        package, preset configuration and device (seeds and datasets may differ: units are
        per seed and per dataset, see ``PER_UNIT``)."""
        stamp, units = out / "run_config.json", out / "units"
        if resume and stamp.exists():
            before = json.loads(stamp.read_text())
            before["config"] = how_units_run(before["config"])  # a stamp written before PER_UNIT
            if before != to_jsonable(fingerprint):
                diff = sorted(k for k in set(before["config"]) | set(fingerprint["config"])
                              if before["config"].get(k) != to_jsonable(fingerprint)["config"].get(k))  # fmt: skip
                what = ", ".join(diff) or ", ".join(
                    k for k in ("package", "preset", "device") if before.get(k) != fingerprint[k]
                )
                raise UsageError(
                    f"--resume: the run in {out} used another configuration ({what} differ); "
                    "drop --resume or choose another --out"
                )
        if not resume and units.exists() and is_main_process():
            for f in units.glob("*.pkl"):
                f.unlink()
            (units / RUNS_FILE).unlink(missing_ok=True)
            (units / PARALLEL_FILE).unlink(missing_ok=True)
        if is_main_process():
            atomic_write_json(stamp, fingerprint)


# Preset fields that name which units run rather than how each unit runs: every unit's key
# holds its seed and its dataset, so ``--resume`` may add seeds or datasets to a run (a run on
# Cora and CiteSeer continued with BlogCatalog reuses the Cora and CiteSeer units).
PER_UNIT = ("seeds", "datasets")


def how_units_run(config: dict) -> dict:
    """The preset configuration a ``--resume`` must match: all of it but ``PER_UNIT``."""
    return {k: v for k, v in config.items() if k not in PER_UNIT}


def _check_writable(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"  # per process: torchrun ranks share --out
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write to --out {out}: {e.strerror or e}") from None
